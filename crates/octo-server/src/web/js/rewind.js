// Rewind from the conversation: each of the last turns' prompts gets a Rewind button that lists
// the files the turn changed and goes back over it (files, conversation, or both).
import { api, sessionPath } from "./api.js";
import { $, el } from "./dom.js";

let session = () => null;
let reopen = async () => {};

// Set by the chat's owner: which session is shown, and how to draw it again.
export function wire(current, redraw) { session = current; reopen = redraw; }

export async function markTurns() {
  const id = session();
  if (!id) return;
  let turns;
  try { turns = await api("GET", sessionPath(id, "/turns")); } catch (_) { return; }
  const prompts = [...$("log").querySelectorAll(".msg.user")];
  for (const t of turns) {
    const card = prompts[prompts.length - t.back];
    if (!card) continue;
    const slot = card.querySelector(".turn-acts");
    const files = t.files.length ? `files it changed:\n${t.files.join("\n")}` : "it changed no files";
    slot.replaceChildren(el("button", { type: "button", class: "rewind", title: `Rewind to before this turn (${files})`,
      "aria-label": `rewind ${t.back} turn${t.back > 1 ? "s" : ""}`, onclick: () => menu(card, t) }, "↶ Rewind"));
  }
}

function menu(card, t) {
  card.parentElement.querySelectorAll(".rewind-menu").forEach((m) => m.remove());
  const go = async (what) => {
    box.replaceChildren("rewinding…");
    try {
      const r = await api("POST", sessionPath(session(), "/rewind"), { turns: t.back, what });
      const lines = [`went back ${r.turns} turn${r.turns === 1 ? "" : "s"}`];
      if (r.restored.length) lines.push(`restored: ${r.restored.join(", ")}`);
      for (const s of r.skipped) lines.push(`left alone: ${s.path} (${s.why})`);
      if (r.note) lines.push(r.note);
      if (r.fork) lines.push(`the conversation as it was is kept as session ${r.fork}`);
      await reopen();
      $("log").append(el("div", { class: "notice", role: "status" }, lines.join(" · ")));
    } catch (e) { box.replaceChildren(el("span", { class: "err" }, e.message)); }
  };
  const n = `${t.back} turn${t.back > 1 ? "s" : ""}`;
  const box = el("div", { class: "card rewind-menu", role: "group", "aria-label": "rewind" },
    el("div", {}, `Go back over the last ${n}:`),
    t.files.length ? el("ul", {}, ...t.files.map((f) => el("li", {}, f))) : el("div", { class: "what" }, "no files changed"),
    el("button", { type: "button", onclick: () => go("both") }, "Code and conversation"),
    el("button", { type: "button", onclick: () => go("code") }, "Code only"),
    el("button", { type: "button", onclick: () => go("conversation") }, "Conversation only"),
    el("button", { type: "button", onclick: () => box.remove() }, "Cancel"));
  card.after(box);
}
