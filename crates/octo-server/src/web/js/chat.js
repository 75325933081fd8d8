// One session's conversation: its history drawn as cards, then its live events followed; the
// answer being streamed is rendered by the server's Markdown renderer as it grows.
import { api, sessionPath } from "./api.js";
import { $, el, follow, withCopy, COPY, copyClicks } from "./dom.js";
import * as cards from "./cards.js";
import { markTurns } from "./rewind.js";

export const state = { current: null, source: null, bubble: null, thinking: null, tools: new Map(), sandbox: "", listeners: [] };
const log = $("log");
const RENDER_EVERY_MS = 120;
copyClicks(log);

export const add = (node) => { follow(log, () => log.append(node)); return node; };
export const say = (text, err) => add(cards.notice(text, err));
export const onChange = (fn) => state.listeners.push(fn);
const imagesNote = (n) => (n ? `  [${n} image${n > 1 ? "s" : ""}]` : "");

// The answer being streamed: its text shown at once, then rendered by the server every few
// frames. What lies before the last blank line outside a code block is settled: rendered once
// and kept, so only the answer's last blocks are rendered again as it grows (a long answer
// costs no more per step than a short one).
function streamText(delta) {
  if (!state.bubble) {
    const b = add(cards.assistantCard());
    b.append(el("div", { class: "done" }), el("div", { class: "live" }));
    b._frozen = 0; b._wait = RENDER_EVERY_MS;
    state.bubble = b;
  }
  const b = state.bubble;
  b._src += delta;
  // Shown once per frame, however many pieces arrived in it.
  b._shown = (b._shown || "") + delta;
  if (!b._frame) b._frame = requestAnimationFrame(() => show(b));
  if (!b.pending) b.pending = setTimeout(() => render(b, false), b._wait);
}

function show(b) {
  b._frame = null;
  const text = b._shown;
  b._shown = "";
  if (text) follow(log, () => tail(b).append(text));
}

const tail = (b) => b.querySelector(".live > .tail") || b.querySelector(".live").appendChild(el("span", { class: "tail" }));

// Where the settled part of `src` ends: after its last blank line outside a fenced block.
function settled(src, from) {
  let fence = false, cut = from, at = from;
  while (at < src.length) {
    const nl = src.indexOf("\n", at);
    if (nl < 0) break;
    const line = src.slice(at, nl).trim();
    if (line.startsWith("```") || line.startsWith("~~~")) fence = !fence;
    else if (!fence && line === "") cut = nl + 1;
    at = nl + 1;
  }
  return cut;
}

async function render(b, last) {
  b.pending = null;
  const started = performance.now();
  const src = b._src;
  const cut = last ? src.length : settled(src, b._frozen);
  try {
    if (cut > b._frozen) {
      const { html } = await api("POST", "/api/markdown", { text: src.slice(b._frozen, cut) });
      follow(log, () => b.querySelector(".done").insertAdjacentHTML("beforeend", withCopy(html)));
      b._frozen = cut;
    }
    const live = src.slice(cut);
    const { html } = live.trim() ? await api("POST", "/api/markdown", { text: live }) : { html: "" };
    follow(log, () => {
      const box = b.querySelector(".live");
      box.innerHTML = withCopy(html);
      b._shown = "";
      const more = b._src.slice(src.length);
      if (more) tail(b).append(more);
      if (last && !b.querySelector(":scope > .copy")) b.insertAdjacentHTML("beforeend", COPY);
    });
  } catch (_) { /* the text stays as it is */ }
  // A slow render waits longer before the next one.
  b._wait = Math.max(RENDER_EVERY_MS, 2 * (performance.now() - started));
  if (!last && !b._dead && b._src.length > src.length && !b.pending) b.pending = setTimeout(() => render(b, false), b._wait);
}

// The reply broke off and starts again: the answer being streamed is taken away and what
// stands of it (an earlier part it continued) shown again, so the new reply is shown once.
function restartBubble(kept) {
  const b = state.bubble;
  if (b) {
    clearTimeout(b.pending);
    if (b._frame) cancelAnimationFrame(b._frame);
    b.pending = null; b._frame = null; b._dead = true;
    b.remove();
  }
  state.bubble = null;
  if (kept) streamText(kept);
}

function endBubble() {
  if (state.bubble) { const b = state.bubble; clearTimeout(b.pending); b.pending = null; b._ending = render(b, true); }
  state.bubble = null;
  state.thinking = null;
}

function toolCardFor(id, ev) {
  let c = state.tools.get(id);
  if (!c) { c = add(cards.toolCard(ev || { id, name: "", summary: "" })); state.tools.set(id, c); }
  return c;
}

async function answerApproval(card, id, decision) {
  try {
    await api("POST", sessionPath(state.current, `/approvals/${encodeURIComponent(id)}`), { decision });
  } catch (e) {
    card.append(cards.notice(e.status === 409 ? "Already answered (in another tab, or the turn ended)." : e.message, e.status !== 409));
    card.classList.add("resolved");
  }
}

async function answerQuestion(card, id, text) {
  try { await api("POST", sessionPath(state.current, `/questions/${encodeURIComponent(id)}`), { answer: text }); }
  catch (e) { card.append(cards.notice(e.status === 409 ? "Already answered." : e.message, e.status !== 409)); card.classList.add("resolved"); }
}

const byId = (cls, id) => [...log.querySelectorAll(cls)].find((c) => c.dataset.id === id);

export function onEvent(ev) {
  switch (ev.type) {
    case "turn_start": setRunning(true); break;
    case "user_prompt": endBubble(); add(cards.userCard(ev.text + imagesNote(ev.images))); break;
    case "request_start": if (!ev.continues) endBubble(); break;
    case "text_delta": state.thinking = null; streamText(ev.text); break;
    case "thinking_delta":
      if (!state.thinking) state.thinking = add(cards.thinkingCard());
      follow(log, () => (state.thinking.textContent += ev.text)); break;
    case "tool_call_start": endBubble(); toolCardFor(ev.id, ev); break;
    case "tool_call_end": endBubble(); cards.finishTool(toolCardFor(ev.id, ev), ev); break;
    case "tool_update":
      if (ev.kind === "todos") todos(ev.data || []);
      else if (ev.kind === "subagent") cards.subagentUpdate(toolCardFor(ev.tool_use_id), ev.data || {});
      else if (ev.kind === "subagent_usage") cards.subagentUpdate(toolCardFor(ev.tool_use_id), { id: "" }, ev.data || {});
      break;
    case "approval_required": {
      endBubble();
      const c = cards.approvalCard(ev, state.sandbox, (d) => answerApproval(c, ev.approval_id, d));
      add(c); c.querySelector("button")?.focus({ preventScroll: true }); break;
    }
    case "approval_resolved": cards.resolveCard(byId(".approval", ev.approval_id), cards.decisionText(ev.decision)); break;
    case "question_asked": { endBubble(); const c = cards.questionCard(ev, (t) => answerQuestion(c, ev.question_id, t)); add(c); break; }
    case "question_answered": cards.resolveCard(byId(".question", ev.question_id), `Answered: ${ev.answer}`); break;
    case "notice": say(ev.message); break;
    case "answer_restarted": restartBubble(ev.kept || ""); break;
    case "retry": say(`${ev.restart ? "the reply broke off; starting it again" : "retrying"} (attempt ${ev.attempt} of ${ev.max_attempts}): ${ev.reason}`); break;
    case "compaction_start": say("compacting the conversation…"); break;
    case "compaction_end": say(`compacted: ${ev.messages_folded} messages folded, about ${ev.tokens_after} tokens now`); break;
    case "lagged": if (state.current) open(state.current); break;
    case "error": say(ev.message, true); break;
    case "usage": refresh(); break;
    case "turn_end": endBubble(); setRunning(false); refresh(); markTurns(); break;
  }
}

function setRunning(on) { $("stop").disabled = !on; }

export function todos(list) {
  const t = $("todos");
  t.hidden = !list.length;
  t.replaceChildren(el("details", { open: true }, el("summary", {}, "Tasks"),
    el("ul", {}, ...list.map((x) => el("li", { class: x.status }, x.content)))));
}

export async function refresh() {
  if (!state.current) return;
  try {
    const s = await api("GET", sessionPath(state.current));
    const ctx = s.context_window ? `${s.context_tokens.toLocaleString()} / ${s.context_window.toLocaleString()} tokens` : `${s.context_tokens} tokens`;
    $("meter").textContent = ctx + (s.cost_usd == null ? "" : ` · $${s.cost_usd.toFixed(4)}`);
    setRunning(s.running);
    state.sandbox = s.sandbox || "";
    if (document.activeElement !== $("model")) $("model").value = s.model;
    $("mode").value = s.mode;
    todos(s.todos || []);
    state.listeners.forEach((f) => f(s));
  } catch (_) { /* the next event tries again */ }
}

// Draws the history's cards in one go: answers as one HTML string (sanitised by the server),
// the other cards as elements.
function drawHistory(items) {
  const frag = document.createDocumentFragment();
  let html = "";
  const flush = () => {
    if (!html) return;
    const t = document.createElement("template");
    t.innerHTML = html;
    frag.append(t.content);
    html = "";
  };
  for (const it of items) {
    if (it.kind === "assistant") { html += cards.answerHtml(it.html); continue; }
    flush();
    if (it.kind === "user") frag.append(cards.userCard(it.text + imagesNote(it.images)));
    else if (it.kind === "thinking") frag.append(el("div", { class: "msg thinking" }, it.text));
    else if (it.kind === "tool") {
      const c = cards.toolCard(it);
      if (it.output !== null && it.output !== undefined) cards.finishTool(c, it);
      state.tools.set(it.id, c);
      frag.append(c);
    }
  }
  flush();
  log.append(frag);
  log.scrollTop = log.scrollHeight;
}

// Messages drawn when a session opens; the earlier ones come on request.
const SHOWN = 600;

export async function open(id, all = false) {
  if (state.source) state.source.close();
  state.current = id;
  state.bubble = null; state.thinking = null; state.tools.clear();
  log.replaceChildren();
  localStorage.setItem("octo-session", id);
  const h = await api("GET", sessionPath(id, all ? "/history" : `/history?limit=${SHOWN}`));
  if (h.earlier > 0) {
    log.append(el("button", { type: "button", class: "earlier", onclick: () => open(id, true) },
      `Show ${h.earlier} earlier message${h.earlier === 1 ? "" : "s"}`));
  }
  drawHistory(h.items || []);
  await refresh();
  markTurns();
  // Everything after what the history holds (the turn under way comes again); the browser
  // sends Last-Event-ID itself when it reconnects.
  state.source = new EventSource(sessionPath(id, `/events?since=${h.last_event}`));
  state.source.onmessage = (m) => { try { onEvent(JSON.parse(m.data)); } catch (e) { console.error(e); } };
}
