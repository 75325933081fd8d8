// Small DOM helpers shared by every component.

export const $ = (id) => document.getElementById(id);

export function esc(s) {
  return String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

// An element: `el("button", {class: "x", onclick}, "text", child…)`.
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "class") e.className = v;
    else if (k === "html") e.innerHTML = v; // only for HTML the server sanitised, or escaped here
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) e.append(c.nodeType ? c : String(c));
  return e;
}

export async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (_) {
    // Plain http on another host has no clipboard API: the old way.
    const t = el("textarea", {}, text);
    document.body.append(t); t.select(); document.execCommand("copy"); t.remove();
  }
  if (button) { const was = button.textContent; button.textContent = "Copied"; setTimeout(() => (button.textContent = was), 1200); }
}

// The HTML of a Copy button; one listener on the page (see `copyClicks`) does the copying: the
// code of the block it sits in, or the whole answer.
export const COPY = '<button class="copy" type="button" aria-label="copy">Copy</button>';

// Copy buttons inside every code block of `html` (sanitised by the server).
export const withCopy = (html) => html.replace(/<\/code><\/pre>/g, `</code>${COPY}</pre>`);

export function copyClicks(root) {
  root.addEventListener("click", (e) => {
    const b = e.target.closest && e.target.closest("button.copy");
    if (!b) return;
    const pre = b.closest("pre");
    const msg = b.closest(".msg");
    copyText(pre ? (pre.querySelector("code")?.innerText ?? "") : (msg?._src || msg?.innerText || ""), b);
  });
}

// A unified diff, coloured by line.
export function diffHtml(text) {
  return '<pre class="diff"><code>' + String(text).split("\n").map((l) => {
    const cls = l.startsWith("+") && !l.startsWith("+++") ? "add" : l.startsWith("-") && !l.startsWith("---") ? "del" : l.startsWith("@@") ? "hunk" : "";
    return cls ? `<span class="${cls}">${esc(l)}</span>` : esc(l);
  }).join("\n") + "</code></pre>";
}

export function looksLikeDiff(text) {
  return /^@@ |^[-+]{3} /m.test(text || "");
}

// Stick to the bottom while the reader is there; leave them be when they scrolled up.
export function follow(log, fn) {
  const atEnd = log.scrollHeight - log.scrollTop - log.clientHeight < 80;
  fn();
  if (atEnd) log.scrollTop = log.scrollHeight;
}
