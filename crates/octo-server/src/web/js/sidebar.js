// The sessions sidebar: every saved session under the server's roots (title, workspace, last
// activity, running), search, open or resume, rename, fork, delete; and new sessions in a chosen
// workspace and model, remembered in this browser.
import { api } from "./api.js";
import { $, el } from "./dom.js";
import { state, open, say } from "./chat.js";

let saved = [];

function ago(secs) {
  const d = Date.now() / 1000 - secs;
  if (d < 60) return "just now";
  if (d < 3600) return `${Math.floor(d / 60)} min ago`;
  if (d < 86400) return `${Math.floor(d / 3600)} h ago`;
  return new Date(secs * 1000).toLocaleDateString();
}

const base = (p) => String(p || "").split("/").filter(Boolean).pop() || p;

export async function load() {
  const q = $("search").value.trim();
  const r = await api("GET", "/api/saved" + (q ? `?q=${encodeURIComponent(q)}` : ""));
  saved = r.sessions;
  const items = saved.map((s) => {
    const acts = el("span", { class: "acts" },
      el("button", { type: "button", title: "Rename", "aria-label": `rename ${s.title}`, onclick: (e) => { e.stopPropagation(); rename(s); } }, "✎"),
      el("button", { type: "button", title: "Fork", "aria-label": `fork ${s.title}`, onclick: (e) => { e.stopPropagation(); fork(s); } }, "Fork"),
      el("button", { type: "button", title: "Delete", "aria-label": `delete ${s.title}`, onclick: (e) => { e.stopPropagation(); remove(s); } }, "✕"));
    const li = el("li", { tabindex: "0", role: "button", "data-saved": s.id, class: s.open && s.open === state.current ? "current" : "",
      onclick: () => choose(s), onkeydown: (e) => { if (e.key === "Enter") choose(s); } },
      el("span", { class: "t" + (s.running ? " running" : "") }, s.title || s.id),
      el("span", { class: "m" }, `${base(s.workspace)} · ${ago(s.updated)} · ${s.turns} turn${s.turns === 1 ? "" : "s"}`), acts);
    return li;
  });
  const broken = r.unreadable.map((b) => el("li", { class: "broken", title: b.error }, `⚠ ${b.id}: ${b.error}`));
  $("saved").replaceChildren(...items, ...broken);
  if (!items.length && !broken.length) $("saved").append(el("li", { class: "m" }, q ? "no session matches" : "no saved sessions yet"));
  return saved;
}

export async function choose(s) {
  try {
    const id = s.open || (await api("POST", "/api/sessions", { resume: s.id })).id;
    localStorage.setItem("octo-saved", s.id);
    await open(id);
    $("sidebar").classList.remove("open");
    await load();
  } catch (e) { say(`cannot open ${s.title || s.id}: ${e.message}`, true); }
}

async function rename(s) {
  const title = prompt("New title", s.title);
  if (title === null || !title.trim()) return;
  try { await api("PATCH", `/api/saved/${encodeURIComponent(s.id)}`, { title }); await load(); }
  catch (e) { say(e.message, true); }
}

async function fork(s) {
  try {
    const r = await api("POST", `/api/saved/${encodeURIComponent(s.id)}/fork`, {});
    await load();
    const made = saved.find((x) => x.id === r.id);
    if (made) await choose(made);
  } catch (e) { say(e.message, true); }
}

async function remove(s) {
  if (!confirm(`Delete “${s.title || s.id}”? Its saved conversation is removed from disk.`)) return;
  try {
    await api("DELETE", `/api/saved/${encodeURIComponent(s.id)}`);
    if (s.open && s.open === state.current) { state.current = null; $("log").replaceChildren(); }
    await load();
  } catch (e) { say(e.message, true); }
}

// The new-session dialog: workspaces under the roots and the configured models.
export async function newSession(ask = true) {
  let choices = { workspaces: [], models: [] };
  try { choices = await api("GET", "/api/choices"); } catch (_) { /* start with the defaults */ }
  $("models").replaceChildren(...choices.models.map((m) => el("option", { value: m })));
  const body = {};
  if (ask && choices.workspaces.length > 1 && typeof $("new-dialog").showModal === "function") {
    const wsSel = $("new-workspace");
    const last = localStorage.getItem("octo-workspace");
    wsSel.replaceChildren(...choices.workspaces.map((w) => el("option", { value: w, selected: w === last }, w)));
    $("new-model").value = localStorage.getItem("octo-model") || "";
    const picked = await new Promise((resolve) => {
      $("new-dialog").onclose = () => resolve($("new-dialog").returnValue === "start");
      $("new-dialog").showModal();
    });
    if (!picked) return null;
    body.workspace = wsSel.value;
    localStorage.setItem("octo-workspace", body.workspace);
    const model = $("new-model").value.trim();
    localStorage.setItem("octo-model", model);
    if (model) body.model = model;
  }
  try {
    const s = await api("POST", "/api/sessions", body);
    await open(s.id);
    (s.notes || []).forEach((n) => say(n));
    if (s.saved_as) localStorage.setItem("octo-saved", s.saved_as);
    await load();
    return s.id;
  } catch (e) { say(`cannot start a session: ${e.message}`, true); return null; }
}

export function wire() {
  let t = null;
  $("search").addEventListener("input", () => { clearTimeout(t); t = setTimeout(() => load().catch(() => {}), 200); });
  $("new").addEventListener("click", () => newSession(true));
  $("open-side").addEventListener("click", () => $("sidebar").classList.add("open"));
  $("close-side").addEventListener("click", () => $("sidebar").classList.remove("open"));
}
