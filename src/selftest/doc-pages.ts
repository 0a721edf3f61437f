// The documentation as the documentation dimension reads it: the README and every markdown page under
// `docs/` beside it, and what is wrong with their links — a link that leaves the repository, or a relative
// link to a file that is not there. Anchors are not checked (a heading may be reworded; the page is what
// a reader must reach).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, posix, relative, resolve, sep } from "node:path";

/** One markdown page: its path relative to the documentation's root (posix separators) and its text. */
export interface DocPage {
  path: string;
  text: string;
}

/** The README and the pages of `docs/` beside it; the root is the README's folder (the repository). */
export interface DocSet {
  root: string;
  readme: DocPage | null;
  pages: DocPage[];
}

/** Every `.md` file under `dir`, recursively, as paths relative to `root`, sorted. */
function markdownFiles(root: string, dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => {
      const full = join(dir, e.name);
      if (e.isDirectory()) return markdownFiles(root, full);
      return e.isFile() && e.name.endsWith(".md") ? [relative(root, full).split(sep).join("/")] : [];
    })
    .sort();
}

/** Reads the README at `readme` and every markdown page of the `docs/` folder beside it. */
export function loadDocSet(readme: string): DocSet {
  const root = dirname(readme);
  const text = existsSync(readme) ? readFileSync(readme, "utf8") : null;
  const pages = markdownFiles(root, join(root, "docs")).map((path) => ({
    path,
    text: readFileSync(join(root, path), "utf8"),
  }));
  return { root, readme: text === null ? null : { path: basename(readme), text }, pages };
}

/** The page at `path` (relative to the root), if there is one. */
export function page(docs: DocSet, path: string): DocPage | undefined {
  return docs.pages.find((p) => p.path === path);
}

/** A link of a markdown page: its 1-based line and its target as written. */
export interface MarkdownLink {
  line: number;
  target: string;
}

/** The links of a markdown text (`[text](target)`, `[ref]: target`), outside code fences and inline code. */
export function markdownLinks(md: string): MarkdownLink[] {
  const out: MarkdownLink[] = [];
  let fenced = false;
  md.split("\n").forEach((raw, i) => {
    if (/^\s*```/.test(raw)) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    const line = raw.replace(/`[^`]*`/g, "``");
    for (const m of line.matchAll(/\]\(\s*(?:<([^>]+)>|([^)\s]+))(?:\s+"[^"]*")?\s*\)/g))
      out.push({ line: i + 1, target: m[1] ?? m[2] ?? "" });
    const def = /^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
    if (def) out.push({ line: i + 1, target: def[1] ?? "" });
  });
  return out;
}

const WEB = /^(?:https?:|mailto:)/i;

/**
 * What is wrong with the links of `p`: a web address is fine; any other scheme, an absolute path, or a
 * relative path that resolves outside `root` leaves the repository; a relative path must name a file or
 * folder that exists. The anchor (`#…`) and query are not checked.
 */
export function linkProblems(p: DocPage, root: string, exists: (abs: string) => boolean): string[] {
  const problems: string[] = [];
  for (const link of markdownLinks(p.text)) {
    const where = `${p.path}:${link.line}: ${link.target}`;
    if (WEB.test(link.target) || link.target.startsWith("#")) continue;
    if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) {
      problems.push(`${where}: not a web address, and outside the repository`);
      continue;
    }
    const path = link.target.replace(/[#?].*$/, "");
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      decoded = path;
    }
    if (decoded.startsWith("/")) {
      problems.push(`${where}: an absolute path points outside the repository`);
      continue;
    }
    const abs = resolve(root, posix.dirname(p.path), decoded);
    const rel = relative(root, abs);
    if (rel === ".." || rel.startsWith(`..${sep}`)) problems.push(`${where}: points outside the repository`);
    else if (!exists(abs)) problems.push(`${where}: no such file`);
  }
  return problems;
}

/** The pages of `docs/` (the index itself aside) that `docs/README.md` does not link to. */
export function unlinkedPages(docs: DocSet): string[] {
  const index = page(docs, "docs/README.md");
  if (!index) return docs.pages.map((p) => p.path);
  const linked = new Set(
    markdownLinks(index.text)
      .filter((l) => !WEB.test(l.target) && !l.target.startsWith("#"))
      .map((l) => posix.normalize(posix.join("docs", l.target.replace(/[#?].*$/, "")))),
  );
  return docs.pages.map((p) => p.path).filter((path) => path !== index.path && !linked.has(path));
}
