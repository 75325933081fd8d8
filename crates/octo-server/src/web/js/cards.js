// The cards of a conversation: messages, tool calls, approvals, questions, command replies,
// sub-agent panels. Each builder returns an element; the chat module places it.
import { el, esc, COPY, withCopy, diffHtml, looksLikeDiff } from "./dom.js";

export function userCard(text, images = []) {
  const c = el("div", { class: "msg user" }, el("span", { class: "turn-acts" }), text);
  for (const src of images) c.append(el("img", { src, alt: "attached image" }));
  return c;
}

export function assistantCard() {
  const c = el("div", { class: "msg assistant" });
  c._src = "";
  return c;
}

// A finished answer's HTML (sanitised by the server's Markdown renderer), with its copy buttons.
export const answerHtml = (html) => `<div class="msg assistant">${withCopy(html)}${COPY}</div>`;

// Puts sanitised HTML into an answer card.
export function setAnswer(card, html) {
  card.innerHTML = withCopy(html) + COPY;
}

export const thinkingCard = () => el("div", { class: "msg thinking" });

export function toolCard(ev) {
  const out = el("div", { class: "out" }, ev.output === undefined ? "running…" : "");
  const c = el("details", { class: "card tool" },
    el("summary", {}, el("span", { class: "name" }, ev.name || "tool"), " ", ev.summary || ""), out);
  c.dataset.id = ev.id;
  return c;
}

export function finishTool(card, ev) {
  if (ev.is_error) card.classList.add("error");
  const text = ev.output ?? "";
  const diff = ev.kind === "diff" || ev.diff || looksLikeDiff(text);
  const out = card.querySelector(".out");
  out.innerHTML = diff ? diffHtml(text) : `<pre><code>${esc(text)}</code></pre>`;
  if (ev.summary && !card.querySelector("summary").textContent.trim().endsWith(ev.summary)) {
    card.querySelector("summary").lastChild.textContent = " " + ev.summary;
  }
  if (diff && !ev.is_error) card.open = true;
}

const VERBS = { edit: "edit", write: "write", run: "run", fetch: "fetch", delete: "delete" };

// What the approval is for: the diff of an edit or write, the full command with where it runs and
// in what sandbox, the URL of a fetch; and the answers.
export function approvalCard(ev, sandbox, answer) {
  const r = ev.request || {};
  const verb = VERBS[r.action] || "use";
  const body = [
    el("div", {}, el("span", { class: "name" }, r.tool || ""), ` wants to ${verb}:`),
    el("pre", {}, el("code", {}, r.summary || "")),
  ];
  if (r.cwd) body.push(el("div", { class: "what" }, "in ", el("code", {}, r.cwd)));
  if (verb === "run" && sandbox) body.push(el("div", { class: "what" }, "sandbox: ", sandbox));
  if (r.reason) body.push(el("div", { class: "what" }, r.reason));
  if (r.preview && r.preview.text) {
    body.push(el("div", { html: r.preview.kind === "diff" ? diffHtml(r.preview.text) : `<pre><code>${esc(r.preview.text)}</code></pre>` }));
  }
  const buttons = [["allow", "Allow", "allow"], ["always", "Always allow", "allow"], ["deny", "Deny", "deny"], ["deny_always", "Always deny", "deny"]]
    .map(([d, label, cls]) => el("button", { type: "button", class: cls, "data-d": d, onclick: () => answer(d) }, label));
  const c = el("div", { class: "card approval", role: "group", "aria-label": `approval for ${r.tool}` }, ...body, el("div", {}, ...buttons));
  c.dataset.id = ev.approval_id;
  return c;
}

const SAID = { allow: "allowed", allow_always: "always allowed", deny: "denied", deny_always: "always denied", edited: "allowed, edited" };

// Marks an approval or question card answered, saying what was chosen.
export function resolveCard(card, said) {
  if (!card || card.classList.contains("resolved")) return;
  card.classList.add("resolved");
  card.append(el("div", { class: "answered" }, said));
}

export function decisionText(decision) {
  const d = decision && decision.decision;
  const msg = decision && decision.message ? ` (${decision.message})` : "";
  return `Answered: ${SAID[d] || d || "?"}${msg}`;
}

export function questionCard(ev, send) {
  const input = el("input", { placeholder: "your answer", "aria-label": "answer" });
  const opts = (ev.options || []).map((o) => el("button", { type: "button", onclick: () => send(o) }, o));
  const c = el("div", { class: "card question", role: "group", "aria-label": "question" },
    el("div", {}, ev.question || ""), el("div", {}, ...opts),
    el("div", {}, input, el("button", { type: "button", onclick: () => send(input.value) }, "Answer")));
  c.dataset.id = ev.question_id;
  return c;
}

export function commandCard(r) {
  return el("div", { class: "card command" },
    el("div", {}, el("span", { class: "name" }, r.command || "command")),
    el("pre", {}, el("code", {}, (r.lines || []).join("\n"))));
}

// The progress of a sub-agent under its `task` call: started, each tool it ran, its end.
export function subagentUpdate(card, data, usage) {
  let panel = usage ? [...card.querySelectorAll(".subagent")].pop()
    : card.querySelector(`.subagent[data-child="${CSS.escape(String(data.id || "?"))}"]`);
  if (!panel) {
    panel = el("details", { class: "subagent", open: true, "data-child": data.id || "?" },
      el("summary", {}, `sub-agent ${data.id || ""} (${data.agent || "agent"})`), el("ul"), el("div", { class: "what" }));
    card.querySelector(".out").before(panel);
    card.open = true;
  }
  const list = panel.querySelector("ul");
  if (usage) {
    panel.querySelector(".what").textContent = `tokens: ${usage.input_tokens || 0} in, ${usage.output_tokens || 0} out`;
    return;
  }
  const line = data.event === "start" ? `started: ${data.description || ""}`
    : data.event === "tool" ? `${data.tool}: ${data.summary || ""}`
    : data.event === "end" ? (data.ok ? `finished (${data.tool_calls || 0} calls)` : "failed") : data.event;
  list.append(el("li", {}, line));
  if (data.event === "end") panel.open = false;
}

export const notice = (text, err) => el("div", { class: err ? "notice err" : "notice", role: err ? "alert" : undefined }, text);
