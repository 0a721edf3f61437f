/**
 * The board's only assets, shipped in the package as strings: its style sheet and the small script that
 * keeps a page live (Server-Sent Events, then the page's <main> fetched again). Every page reads fully
 * without the script; a standalone report (`loopgate report --html`) inlines the style and has no script.
 */

/** The style sheet, served as /assets/board.css and inlined in a standalone report. */
export const BOARD_CSS = `
:root{--fg:#1d232b;--muted:#5c6773;--line:#d9dee4;--bg:#f6f7f9;--card:#fff;--ok:#1a7f37;--bad:#c62828;--warn:#9a6700;--info:#0b5cad;--claim:#7a3e9d}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header.top{display:flex;gap:18px;align-items:center;padding:10px 20px;background:#1d232b;color:#fff}
header.top a{color:#dfe6ee;text-decoration:none}header.top a:hover{color:#fff}
header.top .brand{font-weight:700;color:#fff}
header.top .right{margin-left:auto;font-size:12px;color:#aab4bf}
main{padding:16px 20px;max-width:1400px}
h1{font-size:20px;margin:4px 0 12px}h2{font-size:16px;margin:18px 0 8px}h3{font-size:14px;margin:12px 0 6px}
a{color:var(--info)}
table{border-collapse:collapse;width:100%;background:var(--card)}
th,td{border-bottom:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
th{font-size:12px;color:var(--muted);font-weight:600;background:#fbfcfd}
pre{background:#0f1419;color:#e6e1cf;padding:8px 10px;overflow:auto;max-height:360px;font-size:12px;border-radius:4px;white-space:pre-wrap;word-break:break-word}
code{font-size:12px}
.muted{color:var(--muted)}.small{font-size:12px}
.badge{display:inline-block;padding:1px 7px;border-radius:10px;font-size:12px;font-weight:600;border:1px solid transparent}
.SUCCESS,.passed,.ok,.approved,.done{color:var(--ok);border-color:#a5d6a7;background:#eef8ef}
.ESCALATED,.failed,.missing,.rejected,.blocked{color:var(--bad);border-color:#ef9a9a;background:#fdeeee}
.TOOL_FAILURE,.cancelled,.deferred,.warning{color:var(--warn);border-color:#f3d27a;background:#fdf6e3}
.RUNNING,.open,.queued,.claimed,.running,.skipped{color:var(--info);border-color:#9ec5ef;background:#eef5fd}
.card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:10px 12px;margin:10px 0}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.claim{border-left:4px solid var(--claim)}.evidence{border-left:4px solid var(--ok)}.evidence.bad{border-left-color:var(--bad)}
.label{font-size:11px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);font-weight:700}
.claimtext{color:var(--claim);font-style:italic;white-space:pre-wrap}
.columns{display:grid;grid-template-columns:repeat(4,minmax(200px,1fr));gap:12px}
.column{background:#eceff3;border-radius:6px;padding:8px}
.todo{background:var(--card);border:1px solid var(--line);border-radius:5px;padding:7px 9px;margin:6px 0}
.todo .id{font-family:ui-monospace,monospace;font-size:12px}
.waiting{border:2px solid #f3b33d;background:#fffaf0}
.notice{border:1px solid #9ec5ef;background:#eef5fd;padding:8px 12px;border-radius:6px;margin:8px 0}
.notice.error{border-color:#ef9a9a;background:#fdeeee}
form.inline{display:inline-flex;gap:6px;align-items:center;margin:4px 8px 4px 0;flex-wrap:wrap}
button{font:inherit;padding:3px 10px;border-radius:4px;border:1px solid #8a96a3;background:#fff;cursor:pointer}
button.primary{background:var(--ok);color:#fff;border-color:var(--ok)}button.danger{color:var(--bad);border-color:var(--bad)}
input[type=text]{font:inherit;padding:2px 6px;border:1px solid #b8c1cb;border-radius:4px}
.filters{display:flex;gap:8px;align-items:center;margin:6px 0 10px}
.diff .add{color:#8fdc8f}.diff .del{color:#ff8f8f}.diff .hunk{color:#8ab4f8}
.timeline td:first-child{white-space:nowrap}.timeline code{white-space:pre-wrap;word-break:break-word}
table.runs td:first-child{white-space:nowrap}
.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px}
.kv dt{color:var(--muted)}.kv dd{margin:0}
@media (max-width:900px){.pair,.columns{grid-template-columns:1fr}}
`;

/**
 * The live script, served as /assets/board.js. A page names the streams it shows (`data-watch`: stream
 * names, a trailing `*` for a prefix) and the log position it was rendered at (`data-position`); each change
 * the server announces on /live that touches them has the page's <main> fetched again and swapped in, so
 * the page follows the log without a reload (`*`: the log moved while the page was not connected, so
 * it refreshes whatever it shows). While a person types in a field of the page it waits and says so.
 */
export const BOARD_JS = `(() => {
  const body = document.body;
  const watch = (body.dataset.watch || "").split(" ").filter(Boolean);
  const status = document.getElementById("live");
  if (!watch.length || !window.EventSource || !status) return;
  const touches = (streams) => streams.some((s) => s === "*" || watch.some((w) => (w.endsWith("*") ? s.startsWith(w.slice(0, -1)) : s === w)));
  let busy = false, again = false;
  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const a = document.activeElement;
      if (a && a.closest && a.closest("main") && (a.tagName === "INPUT" || a.tagName === "TEXTAREA") && a.value) {
        status.textContent = "changed — reload to see it (you are typing)";
        return;
      }
      const r = await fetch(location.href, { headers: { "x-board-part": "main" }, credentials: "same-origin" });
      if (r.ok) {
        const main = document.querySelector("main");
        // A notice (what a decision recorded, a refusal) stays until the page is loaded again.
        const notice = document.getElementById("notice");
        if (main) main.outerHTML = await r.text();
        const fresh = document.querySelector("main");
        if (notice && fresh && !document.getElementById("notice")) fresh.prepend(notice);
        status.textContent = "live · updated " + new Date().toLocaleTimeString();
        document.dispatchEvent(new CustomEvent("board:updated"));
      }
    } catch (e) {
      status.textContent = "live: could not refresh (" + e + ")";
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }
  const source = new EventSource("/live?since=" + encodeURIComponent(body.dataset.position || "0"));
  source.addEventListener("change", (ev) => { try { if (touches(JSON.parse(ev.data).streams)) refresh(); } catch {} });
  source.onopen = () => { status.textContent = "live"; };
  source.onerror = () => { status.textContent = "live: reconnecting…"; };
})();
`;
