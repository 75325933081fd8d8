// octo's web UI: the pieces wired together, the theme, keyboard shortcuts, and the first session.
import { api, sessionPath } from "./api.js";
import { $ } from "./dom.js";
import { state, open, say, onChange } from "./chat.js";
import * as sidebar from "./sidebar.js";
import * as composer from "./composer.js";
import * as rewind from "./rewind.js";

function theme(next) {
  document.documentElement.dataset.theme = next;
  localStorage.setItem("octo-theme", next);
}

function shortcuts() {
  document.addEventListener("keydown", (e) => {
    if (e.altKey && (e.key === "n" || e.key === "N")) { e.preventDefault(); sidebar.newSession(true); }
    else if (e.key === "Escape" && !$("stop").disabled && $("complete").hidden) { $("stop").click(); }
    else if (e.key === "/" && document.activeElement === document.body) { e.preventDefault(); $("prompt").focus(); }
    else if ((e.ctrlKey || e.metaKey) && e.key === "k") { e.preventDefault(); $("search").focus(); }
  });
}

function controls() {
  $("theme").addEventListener("click", () => theme(document.documentElement.dataset.theme === "dark" ? "light" : "dark"));
  $("mode").addEventListener("change", (e) => state.current && api("PUT", sessionPath(state.current, "/mode"), { mode: e.target.value }).catch((x) => say(x.message, true)));
  $("model").addEventListener("change", (e) => state.current && api("PUT", sessionPath(state.current, "/model"), { model: e.target.value }).catch((x) => say(x.message, true)));
  // The list follows what sessions do: a turn that ends changes titles, counts and times.
  let last = "";
  onChange((s) => {
    const key = `${s.id}:${s.running}:${s.turns}`;
    if (key !== last) { last = key; sidebar.load().catch(() => {}); }
    $("title").textContent = s.saved_as ? ($(`saved`).querySelector(`[data-saved="${CSS.escape(s.saved_as)}"] .t`)?.textContent || "octo") : "octo";
  });
}

async function start() {
  sidebar.wire();
  composer.wire();
  rewind.wire(() => state.current, () => open(state.current));
  controls();
  shortcuts();
  const [saved, live] = await Promise.all([sidebar.load(), api("GET", "/api/sessions")]);
  const want = localStorage.getItem("octo-saved");
  const pick = saved.find((s) => s.id === want);
  if (pick) return sidebar.choose(pick);
  if (live.length) return open(live[live.length - 1].id);
  return sidebar.newSession(false);
}

start().catch((e) => say(e.message, true));
