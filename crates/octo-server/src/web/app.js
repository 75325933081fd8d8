// octo's web UI: sessions, a streamed chat, tool cards, approvals, questions, todos.
"use strict";
const $ = (id) => document.getElementById(id);
const log = $("log");
let current = null;   // session id
let source = null;    // EventSource
let bubble = null;    // the assistant text being streamed
let thinking = null;
const cards = new Map();

async function api(method, path, body) {
  const r = await fetch(path, {
    method,
    headers: body ? { "content-type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
    credentials: "same-origin",
  });
  const text = await r.text();
  const data = text ? JSON.parse(text) : null;
  if (!r.ok) throw new Error((data && data.error) || r.statusText);
  return data;
}

function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

// Code highlighting for the common languages: comments, strings, numbers and keywords, by
// one pass of a tokenizing regular expression (what it does not know stays plain).
const KEYWORDS = new Set(("fn let mut pub use mod impl struct enum trait match if else for while loop return async await " +
  "const static self Self where type in as break continue def class import from with try except finally raise lambda " +
  "function var new this null true false None True False nil package func go defer interface select case switch default " +
  "public private protected void int long float double bool boolean string String char throw throws catch extends implements").split(" "));
function highlight(code) {
  const re = /(\/\/[^\n]*|#[^\n!\[]*$|\/\*[\s\S]*?\*\/)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`)|\b(\d+(?:\.\d+)?)\b|\b([A-Za-z_][A-Za-z0-9_]*)\b/gm;
  let out = "", last = 0, m;
  while ((m = re.exec(code)) !== null) {
    out += esc(code.slice(last, m.index));
    const [t, comment, str, num, word] = m;
    if (comment) out += `<span class="c">${esc(t)}</span>`;
    else if (str) out += `<span class="s">${esc(t)}</span>`;
    else if (num) out += `<span class="n">${esc(t)}</span>`;
    else if (word && KEYWORDS.has(word)) out += `<span class="k">${esc(t)}</span>`;
    else out += esc(t);
    last = m.index + t.length;
  }
  return out + esc(code.slice(last));
}

// Markdown, enough for answers: code blocks, inline code, bold, headings, lists.
function markdown(src) {
  const parts = src.split(/```/);
  return parts.map((part, i) => {
    if (i % 2 === 1) {
      const nl = part.indexOf("\n");
      const body = nl >= 0 ? part.slice(nl + 1) : part;
      return "<pre><code>" + highlight(body) + "</code></pre>";
    }
    return esc(part)
      .replace(/`([^`]+)`/g, "<code>$1</code>")
      .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
      .replace(/^#{1,6} (.*)$/gm, "<strong>$1</strong>")
      .replace(/^[-*] (.*)$/gm, "• $1")
      .split(/\n{2,}/).map((p) => "<p>" + p.replace(/\n/g, "<br>") + "</p>").join("");
  }).join("");
}

function diffHtml(text) {
  return '<pre class="diff"><code>' + text.split("\n").map((l) => {
    const cls = l.startsWith("+") && !l.startsWith("+++") ? "add" : l.startsWith("-") && !l.startsWith("---") ? "del" : l.startsWith("@@") ? "hunk" : "";
    return cls ? `<span class="${cls}">${esc(l)}</span>` : esc(l);
  }).join("\n") + "</code></pre>";
}

function looksLikeDiff(text) {
  return /^@@ |^[-+]{3} /m.test(text) || (/^\+/m.test(text) && /^-/m.test(text));
}

function add(html, cls) {
  const div = document.createElement("div");
  div.className = cls;
  div.innerHTML = html;
  log.appendChild(div);
  log.scrollTop = log.scrollHeight;
  return div;
}

function userMessage(text) { add(esc(text), "msg user"); bubble = null; thinking = null; }

function assistantText(delta) {
  if (!bubble) { bubble = add("", "msg assistant"); bubble.dataset.src = ""; }
  bubble.dataset.src += delta;
  bubble.innerHTML = markdown(bubble.dataset.src);
  log.scrollTop = log.scrollHeight;
}

function toolStart(ev) {
  bubble = null;
  const c = add(`<details><summary><span class="name">${esc(ev.name)}</span> ${esc(ev.summary || "")}</summary><div class="out">running…</div></details>`, "card tool");
  cards.set(ev.id, c);
}

function toolEnd(ev) {
  let c = cards.get(ev.id);
  if (!c) { toolStart({ id: ev.id, name: ev.name, summary: "" }); c = cards.get(ev.id); }
  if (ev.is_error) c.classList.add("error");
  const out = c.querySelector(".out");
  out.innerHTML = looksLikeDiff(ev.output) ? diffHtml(ev.output) : "<pre><code>" + esc(ev.output) + "</code></pre>";
  if (looksLikeDiff(ev.output)) c.querySelector("details").open = true;
}

function approval(ev) {
  const r = ev.request || {};
  const c = add(`<div><span class="name">${esc(r.tool || "")}</span> wants to run:</div><pre><code>${esc(r.summary || "")}</code></pre>` +
    (r.reason ? `<div class="notice">${esc(r.reason)}</div>` : "") +
    `<div><button data-d="allow">Allow</button><button data-d="always">Always</button><button data-d="deny">Deny</button></div>`, "card approval");
  c.dataset.id = ev.approval_id;
  c.querySelectorAll("button").forEach((b) => b.onclick = async () => {
    try { await api("POST", `/api/sessions/${current}/approvals/${encodeURIComponent(ev.approval_id)}`, { decision: b.dataset.d }); }
    catch (e) { add(esc(e.message), "notice err"); }
  });
}

function resolved(ev) {
  document.querySelectorAll(".approval, .question").forEach((c) => {
    if (c.dataset.id === (ev.approval_id || ev.question_id)) {
      c.classList.add("resolved");
      c.querySelectorAll("button, input").forEach((b) => b.disabled = true);
    }
  });
}

function question(ev) {
  const opts = (ev.options || []).map((o) => `<button>${esc(o)}</button>`).join("");
  const c = add(`<div>${esc(ev.question)}</div><div>${opts}</div><div><input placeholder="answer"><button class="free">Answer</button></div>`, "card question");
  c.dataset.id = ev.question_id;
  const send = async (text) => {
    try { await api("POST", `/api/sessions/${current}/questions/${encodeURIComponent(ev.question_id)}`, { answer: text }); }
    catch (e) { add(esc(e.message), "notice err"); }
  };
  c.querySelectorAll("button:not(.free)").forEach((b) => b.onclick = () => send(b.textContent));
  c.querySelector(".free").onclick = () => send(c.querySelector("input").value);
}

function todos(list) {
  const t = $("todos");
  t.hidden = !list.length;
  t.innerHTML = "<strong>Todos</strong><ul>" + list.map((x) => `<li class="${esc(x.status)}">${esc(x.content)}</li>`).join("") + "</ul>";
}

async function refresh() {
  if (!current) return;
  try {
    const s = await api("GET", `/api/sessions/${current}`);
    const ctx = s.context_window ? `${s.context_tokens}/${s.context_window} tokens` : `${s.context_tokens} tokens`;
    const cost = s.cost_usd == null ? "" : ` · $${s.cost_usd.toFixed(4)}`;
    $("meter").textContent = ctx + cost;
    $("stop").disabled = !s.running;
    if (document.activeElement !== $("model")) $("model").value = s.model;
    $("mode").value = s.mode;
    todos(s.todos || []);
  } catch (_) { /* the next event retries */ }
}

function onEvent(ev) {
  switch (ev.type) {
    case "turn_start": $("stop").disabled = false; break;
    case "text_delta": thinking = null; assistantText(ev.text); break;
    case "thinking_delta":
      if (!thinking) thinking = add("", "msg thinking");
      thinking.textContent += ev.text; break;
    case "tool_call_start": toolStart(ev); break;
    case "tool_call_end": toolEnd(ev); break;
    case "tool_update": if (ev.kind === "todos") todos(ev.data || []); break;
    case "approval_required": approval(ev); break;
    case "approval_resolved": case "question_answered": resolved(ev); break;
    case "question_asked": question(ev); break;
    case "notice": add(esc(ev.message), "notice"); break;
    // Events this page missed are gone from the server's buffer: draw the session again.
    case "lagged": if (current) open(current); break;
    case "error": add(esc(ev.message), "notice err"); break;
    case "usage": refresh(); break;
    case "turn_end": bubble = null; thinking = null; refresh(); break;
  }
}

function renderHistory(messages) {
  for (const m of messages) {
    for (const b of m.content || []) {
      if (m.role === "user" && b.type === "text") userMessage(b.text);
      else if (b.type === "text") { assistantText(b.text); }
      else if (b.type === "tool_use") toolStart({ id: b.id, name: b.name, summary: JSON.stringify(b.input).slice(0, 120) });
      else if (b.type === "tool_result") {
        const text = (b.content || []).map((p) => p.text || "").join("\n");
        toolEnd({ id: b.tool_use_id, name: "", output: text, is_error: !!b.is_error });
      }
    }
    bubble = null;
  }
}

async function open(id) {
  if (source) source.close();
  current = id;
  log.innerHTML = "";
  cards.clear();
  bubble = null;
  localStorage.setItem("octo-session", id);
  const h = await api("GET", `/api/sessions/${id}/history`);
  renderHistory(h.messages);
  // Everything after what the history includes; the browser sends Last-Event-ID itself when
  // it reconnects.
  source = new EventSource(`/api/sessions/${id}/events?since=${h.last_event}`);
  source.onmessage = (m) => { try { onEvent(JSON.parse(m.data)); } catch (_) {} };
  refresh();
}

async function loadSessions(select) {
  const list = await api("GET", "/api/sessions");
  const sel = $("sessions");
  sel.innerHTML = list.map((s) => `<option value="${esc(s.id)}">${esc(s.id)} · ${esc(String(s.workspace).split("/").pop())}</option>`).join("");
  const want = select || localStorage.getItem("octo-session");
  const pick = list.find((s) => s.id === want) || list[list.length - 1];
  if (pick) { sel.value = pick.id; if (pick.id !== current) await open(pick.id); }
  return list;
}

async function newSession() {
  try {
    const s = await api("POST", "/api/sessions", {});
    (s.notes || []).forEach((n) => add(esc(n), "notice"));
    await loadSessions(s.id);
  } catch (e) { add(esc(e.message), "notice err"); }
}

$("sessions").onchange = (e) => open(e.target.value);
$("new").onclick = newSession;
$("stop").onclick = () => current && api("POST", `/api/sessions/${current}/abort`);
$("mode").onchange = (e) => current && api("PUT", `/api/sessions/${current}/mode`, { mode: e.target.value }).catch((x) => add(esc(x.message), "notice err"));
$("model").onchange = (e) => current && api("PUT", `/api/sessions/${current}/model`, { model: e.target.value }).then(refresh).catch((x) => add(esc(x.message), "notice err"));
$("prompt").onkeydown = (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("composer").requestSubmit(); } };
$("composer").onsubmit = async (e) => {
  e.preventDefault();
  const text = $("prompt").value;
  if (!text.trim()) return;
  if (!current) await newSession();
  $("prompt").value = "";
  userMessage(text);
  try { await api("POST", `/api/sessions/${current}/prompt`, { text }); }
  catch (x) { add(esc(x.message), "notice err"); }
};

loadSessions().then((list) => { if (!list.length) newSession(); }).catch((e) => add(esc(e.message), "notice err"));
