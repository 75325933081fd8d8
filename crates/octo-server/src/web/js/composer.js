// The input: Enter sends, `/` completes commands, skills and custom commands, images come by
// paste, drop or the clip button; shared commands run at once and answer as cards.
import { api, sessionPath } from "./api.js";
import { $, el } from "./dom.js";
import { state, add, say, open, refresh } from "./chat.js";
import { commandCard } from "./cards.js";
import { newSession } from "./sidebar.js";

// The server takes images up to this size (what `octo_app::image` refuses above).
const MAX_IMAGE = 20 * 1024 * 1024;
let images = [];
let commands = { session: null, list: [] };
let pick = -1;

async function commandList() {
  if (commands.session !== state.current) {
    commands = { session: state.current, list: [] };
    try { commands.list = await api("GET", sessionPath(state.current, "/commands")); } catch (_) { /* none */ }
  }
  return commands.list;
}

async function complete() {
  const box = $("complete");
  const text = $("prompt").value;
  if (!state.current || !text.startsWith("/") || /\s/.test(text)) { box.hidden = true; return; }
  const word = text.toLowerCase();
  const hits = (await commandList()).filter((c) => c.name.toLowerCase().startsWith(word)).slice(0, 40);
  pick = hits.length ? 0 : -1;
  box.replaceChildren(...hits.map((c, i) => el("li", { role: "option", "aria-selected": i === 0 ? "true" : "false", "data-name": c.name,
    onmousedown: (e) => { e.preventDefault(); take(c.name); } },
    c.name, c.hint ? ` ${c.hint}` : "", el("span", { class: "a" }, c.about || ""))));
  box.hidden = !hits.length;
}

function take(name) {
  $("prompt").value = name + " ";
  $("complete").hidden = true;
  $("prompt").focus();
}

function move(d) {
  const items = [...$("complete").children];
  if (!items.length) return;
  pick = (pick + d + items.length) % items.length;
  items.forEach((li, i) => li.setAttribute("aria-selected", i === pick ? "true" : "false"));
  items[pick].scrollIntoView({ block: "nearest" });
}

function attach(files) {
  for (const f of files) {
    if (!f.type.startsWith("image/")) { say(`${f.name}: not an image`, true); continue; }
    if (f.size > MAX_IMAGE) { say(`${f.name} is ${(f.size / 1048576).toFixed(1)} MB; an image may be at most 20 MB`, true); continue; }
    const r = new FileReader();
    r.onload = () => { images.push(r.result); drawAttachments(); };
    r.readAsDataURL(f);
  }
}

function drawAttachments() {
  const box = $("attachments");
  box.hidden = !images.length;
  box.replaceChildren(...images.map((src, i) => el("figure", {}, el("img", { src, alt: `attached image ${i + 1}` }),
    el("button", { type: "button", "aria-label": `remove image ${i + 1}`, onclick: () => { images.splice(i, 1); drawAttachments(); } }, "✕"))));
}

const REDRAW = new Set(["/clear", "/new", "/compact"]);

async function send() {
  const text = $("prompt").value;
  if (!text.trim() && !images.length) return;
  if (!state.current && !(await newSession(false))) return;
  $("complete").hidden = true;
  const word = text.trim().split(/\s+/)[0];
  const known = (await commandList()).find((c) => c.name === word);
  $("prompt").value = "";
  if (!images.length && known && known.kind === "command") {
    if (word === "/rewind") { say("use the ↶ Rewind button on the turn to go back to"); return; }
    try {
      const r = await api("POST", sessionPath(state.current, "/command"), { line: text.trim() });
      if (REDRAW.has(word)) await open(state.current);
      add(commandCard(r));
      refresh();
    } catch (e) { say(e.message, true); }
    return;
  }
  const body = { text };
  if (images.length) body.images = images;
  images = []; drawAttachments();
  const busy = !$("stop").disabled;
  try {
    await api("POST", sessionPath(state.current, "/prompt"), body);
    if (busy) say("queued: it runs when the current turn ends");
  } catch (e) { say(e.message, true); $("prompt").value = text; }
}

export function wire() {
  const p = $("prompt");
  p.addEventListener("input", complete);
  p.addEventListener("keydown", (e) => {
    const open = !$("complete").hidden;
    if (open && (e.key === "ArrowDown" || e.key === "ArrowUp")) { e.preventDefault(); move(e.key === "ArrowDown" ? 1 : -1); return; }
    if (open && (e.key === "Tab" || (e.key === "Enter" && pick >= 0 && !p.value.includes(" ")))) {
      e.preventDefault();
      const li = $("complete").children[pick];
      if (li) take(li.dataset.name);
      return;
    }
    if (open && e.key === "Escape") { $("complete").hidden = true; return; }
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
  });
  p.addEventListener("paste", (e) => {
    const files = [...(e.clipboardData?.files || [])];
    if (files.length) { e.preventDefault(); attach(files); }
  });
  const main = $("main");
  main.addEventListener("dragover", (e) => e.preventDefault());
  main.addEventListener("drop", (e) => { e.preventDefault(); attach([...(e.dataTransfer?.files || [])]); });
  $("file").addEventListener("change", (e) => { attach([...e.target.files]); e.target.value = ""; });
  $("composer").addEventListener("submit", (e) => { e.preventDefault(); send(); });
  $("stop").addEventListener("click", () => state.current && api("POST", sessionPath(state.current, "/abort")).catch(() => {}));
}
