import { BOARD_CSS } from "./board-assets.js";
import { type Html, html, raw } from "./html.js";

/** How a page is delivered: by the server (linked assets, live) or as one standalone file. */
export interface PageOptions {
  title: string;
  /** The page's content, inside <main>. */
  main: Html;
  /** Standalone: the style inlined, no script, no link out of the file (loopgate report --html). */
  standalone?: boolean;
  /** The streams the page shows (a trailing `*` for a prefix): live updates follow them. */
  watch?: string[];
  /** The log position the page was rendered at. */
  position?: number;
  /** What the header says on the right (the store, who is signed in). */
  status?: string;
}

/** The <main> element of a page, alone: what a live update swaps in. */
export function mainElement(main: Html): Html {
  return html`<main>${main}</main>`;
}

/** A whole page. */
export function pageDocument(o: PageOptions): string {
  const head = o.standalone
    ? html`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<style>${raw(BOARD_CSS)}</style>`
    : html`<link rel="stylesheet" href="/assets/board.css"><script src="/assets/board.js" defer></script>`;
  const nav = o.standalone
    ? html`<span class="brand">loopgate</span><span>run report</span>`
    : html`<a class="brand" href="/">loopgate</a><a href="/">runs</a><a href="/goals">goals</a><a href="/health">health</a>`;
  const live = o.standalone || !o.watch?.length ? "" : "live: connecting…";
  return `<!doctype html>\n${
    html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · loopgate</title>${head}</head>
<body data-watch="${(o.watch ?? []).join(" ")}" data-position="${o.position ?? 0}">
<header class="top">${nav}<span class="right">${o.status ?? ""} <span id="live">${live}</span></span></header>
${mainElement(o.main)}
</body></html>`.text
  }\n`;
}
