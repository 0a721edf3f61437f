/**
 * The JavaScript / TypeScript twin language: node:test, jest, vitest, mocha (+ chai) and tape test files,
 * read with @babel/parser (never run) and written back by splicing their original text.
 */
import { replacementsFor } from "./js-literals.js";
import { JS_FILE, parseFile, span } from "./js-parse.js";
import { renderJavaScript } from "./js-render.js";
import { sitesOf } from "./js-sites.js";
import { type FoundTest, findTests } from "./js-tests.js";
import type { DefinedTest, FileAnalysis, MutationSite, RenderedFile, TwinLanguage } from "./twin.js";

/** A found test as the twin machinery sees it: sites only when it can get twins, else a note saying why not. */
function defined(test: FoundTest, source: string): DefinedTest {
  if (test.note !== null) return { path: test.path, sites: [], note: test.note };
  const literals = sitesOf(test.calls);
  const sites: MutationSite[] = [];
  for (const { key, node } of literals) {
    const replacements = replacementsFor(node, source);
    const { start, end } = span(node);
    // A literal with no wrong value of its shape (the empty string) keeps its key but gets no site.
    if (replacements.length > 0) sites.push({ key, original: source.slice(start, end), replacements });
  }
  if (sites.length > 0) return { path: test.path, sites };
  const note =
    literals.length > 0 ? "no expected literal has a wrong value of its shape" : "no literal expected value";
  return { path: test.path, sites, note };
}

/** Analyses one file: its tests and their sites, or why it cannot be read. */
export function analyseJavaScript(path: string, source: string): FileAnalysis {
  if (!JS_FILE.test(path)) return { ok: false, why: "not a JavaScript or TypeScript file" };
  const parsed = parseFile(path, source);
  if (!parsed.ok) return parsed;
  return { ok: true, tests: findTests(parsed.ast).map((t) => defined(t, source)) };
}

/** JavaScript and TypeScript test files (see js-tests.ts for what a test is, js-sites.ts for its sites). */
export const javascriptTwins: TwinLanguage = {
  id: "javascript",
  handles: (path) => JS_FILE.test(path) && !path.endsWith(".d.ts"),
  rename: (name, words) => `${name} ${words.join(" ")}`,
  async analyse(files) {
    return new Map(files.map((f): [string, FileAnalysis] => [f.path, analyseJavaScript(f.path, f.source)]));
  },
  async render(requests) {
    return new Map(
      requests.map((r): [string, RenderedFile] => {
        try {
          return [r.path, renderJavaScript(r)];
        } catch (e) {
          return [r.path, { ok: false, why: `cannot render: ${e instanceof Error ? e.message : String(e)}` }];
        }
      }),
    );
  },
};
