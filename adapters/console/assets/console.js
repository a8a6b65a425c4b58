// Live updates for the sluice console: no framework, no inline code (the page's CSP is
// default-src 'self'). Elements with data-live="MS" are refreshed by fetching the same
// URL with ?partial=1 every MS milliseconds; #log follows the run's log stream.
"use strict";

function partialURL() {
  const u = new URL(window.location.href);
  u.searchParams.set("partial", "1");
  u.searchParams.delete("notice");
  return u.toString();
}

function live(el) {
  const every = parseInt(el.dataset.live, 10) || 1500;
  const target = el.id === "live" ? el : el.querySelector("#live");
  if (!target) return;
  let busy = false;
  setInterval(async () => {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const res = await fetch(partialURL(), { credentials: "same-origin", headers: { Accept: "text/html" } });
      if (res.status === 401) { window.location.reload(); return; }
      if (!res.ok) return;
      const html = await res.text();
      // Keep focus and the open state of controls: swap only when something changed.
      if (html !== target.dataset.last) {
        target.dataset.last = html;
        const focused = document.activeElement && document.activeElement.id;
        target.innerHTML = html;
        if (focused) { const f = document.getElementById(focused); if (f) f.focus(); }
      }
    } catch (e) {
      // the server may be restarting; the next tick tries again
    } finally {
      busy = false;
    }
  }, every);
}

function followLog(list) {
  const state = document.getElementById("log-state");
  const src = new EventSource(list.dataset.src);
  src.addEventListener("open", () => { state.textContent = "Following the log live."; });
  src.addEventListener("line", (ev) => {
    const l = JSON.parse(ev.data);
    const li = document.createElement("li");
    li.className = "lvl-" + String(l.level).toLowerCase();
    const at = document.createElement("time");
    at.textContent = l.at.replace("T", " ").replace(/\.\d+Z$/, "Z");
    li.append(at, " ", String(l.level).toUpperCase(), " ", l.message);
    list.append(li);
  });
  src.addEventListener("end", (ev) => {
    const e = JSON.parse(ev.data);
    state.textContent = "The run ended (" + e.status + "); this is its whole log.";
    src.close();
  });
  src.addEventListener("failure", (ev) => {
    const e = JSON.parse(ev.data);
    state.textContent = "The log stream stopped: " + e.code + ": " + e.message;
    src.close();
  });
  src.addEventListener("error", () => {
    if (src.readyState === EventSource.CLOSED) state.textContent = "The log stream closed; reload to follow it again.";
    else state.textContent = "Reconnecting to the log…";
  });
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("[data-live]").forEach(live);
  const log = document.getElementById("log");
  if (log && log.dataset.src) followLog(log);
});
