/**
 * Writing twins into a JavaScript file by splicing its original text: a twin is a copy of its original's
 * statement with the name and one literal replaced, so formatting, comments and layout are the same.
 */
import type { Node } from "@babel/types";
import { literalKind, quoteLike, replacementKind } from "./js-literals.js";
import { parseFile, span } from "./js-parse.js";
import { sitesOf } from "./js-sites.js";
import { type FoundTest, findTests } from "./js-tests.js";
import type { RenderedFile, RenderRequest, TwinSpec } from "./twin.js";

/** A change to the original text: the span it replaces and what it writes there. */
interface Edit {
  start: number;
  end: number;
  text: () => string;
}

/** One requested test, found in the file. */
interface Target {
  test: FoundTest;
  name: string;
  twins: TwinSpec[];
  sites: Map<string, Node>;
}

/** The whitespace before a statement on its line (empty when something else precedes it there). */
function indentOf(source: string, at: number): string {
  const lineStart = source.lastIndexOf("\n", at - 1) + 1;
  const before = source.slice(lineStart, at);
  return /^[ \t]*$/.test(before) ? before : "";
}

/** `source[start, end)` with the outermost of `edits` inside it applied (inner ones are theirs to apply), but not `skip`. */
function splice(
  source: string,
  start: number,
  end: number,
  edits: readonly Edit[],
  skip: Edit | null,
): string {
  const inside = edits.filter((e) => e !== skip && e.start >= start && e.end <= end);
  const outer = inside.filter(
    (e) =>
      !inside.some(
        (o) => o !== e && o.start <= e.start && o.end >= e.end && (o.start < e.start || o.end > e.end),
      ),
  );
  outer.sort((a, b) => b.start - a.start);
  let out = source.slice(start, end);
  for (const e of outer) out = out.slice(0, e.start - start) + e.text() + out.slice(e.end - start);
  return out;
}

/** Finds every requested test and checks its twins against the file as it is now. */
function targetsOf(request: RenderRequest, source: string, tests: FoundTest[]): Target[] | string {
  const targets: Target[] = [];
  const seen = new Set<string>();
  for (const wanted of request.tests) {
    const key = JSON.stringify(wanted.path);
    const matches = tests.filter((t) => JSON.stringify(t.path) === key);
    const label = wanted.path.join(" > ");
    if (matches.length !== 1)
      return `${matches.length === 0 ? "no" : "more than one"} test ${label} in the file`;
    if (seen.has(key)) return `test ${label} is requested twice`;
    seen.add(key);
    const test = matches[0] as FoundTest;
    const sites = new Map(sitesOf(test.calls).map((s) => [s.key, s.node]));
    if (wanted.twins.length > 0 && (test.note !== null || test.statement === null)) {
      return `test ${label} cannot get twins: ${test.note ?? "no statement of its own"}`;
    }
    for (const twin of wanted.twins) {
      const site = sites.get(twin.site);
      if (!site)
        return `test ${label} has no expected value at site ${twin.site} (the file changed since the lock?)`;
      const kind = replacementKind(twin.replacement);
      if (kind === null || kind !== literalKind(site)) {
        return `replacement ${JSON.stringify(twin.replacement)} at ${label} site ${twin.site} is not a literal like the original`;
      }
      const { start, end } = span(site);
      if (source.slice(start, end) === twin.replacement) {
        return `replacement at ${label} site ${twin.site} equals the original`;
      }
    }
    targets.push({ test, name: wanted.name, twins: wanted.twins, sites });
  }
  return targets;
}

/** The text that takes a requested test's place (its edit is `self`), given all the edits of the file. */
function block(source: string, t: Target, self: Edit, edits: readonly Edit[]): string {
  const nameRaw = source.slice(span(t.test.nameNode).start, span(t.test.nameNode).end);
  const statement = t.test.statement as Node;
  const { start, end } = span(statement);
  const copy = (name: string, twin?: TwinSpec): string => {
    const own: Edit[] = [{ ...span(t.test.nameNode), text: () => quoteLike(nameRaw, name) }];
    const site = twin ? t.sites.get(twin.site) : undefined;
    if (twin && site) own.push({ ...span(site), text: () => twin.replacement });
    return splice(source, start, end, [...own, ...edits], self);
  };
  const indent = indentOf(source, start);
  const parts = [
    ...t.twins.filter((w) => w.before).map((w) => copy(w.name, w)),
    copy(t.name),
    ...t.twins.filter((w) => !w.before).map((w) => copy(w.name, w)),
  ];
  return parts.join(`\n${indent}`);
}

/** The paths the rendered file must define exactly once: every renamed original and every twin. */
function expectedPaths(targets: readonly Target[]): string[][] {
  const rename = (path: readonly string[], name: string) => [...path.slice(0, -1), name];
  // A test nested in a renamed one has the new name among its suites.
  const renamedSuites = (path: readonly string[]): string[] => {
    const out = [...path];
    for (const t of targets) {
      const p = t.test.path;
      if (p.length < out.length && p.every((s, i) => s === path[i])) out[p.length - 1] = t.name;
    }
    return out;
  };
  return targets.flatMap((t) => {
    const own = renamedSuites(t.test.path);
    return [rename(own, t.name), ...t.twins.map((w) => rename(own, w.name))];
  });
}

/** Renders one file, or says why it cannot be (then it keeps no twins at all). */
export function renderJavaScript(request: RenderRequest): RenderedFile {
  const { source } = request;
  const parsed = parseFile(request.path, source);
  if (!parsed.ok) return parsed;
  const targets = targetsOf(request, source, findTests(parsed.ast));
  if (typeof targets === "string") return { ok: false, why: targets };
  const edits: Edit[] = [];
  for (const t of targets) {
    if (t.twins.length === 0) {
      const nameRaw = source.slice(span(t.test.nameNode).start, span(t.test.nameNode).end);
      edits.push({ ...span(t.test.nameNode), text: () => quoteLike(nameRaw, t.name) });
    } else {
      const self: Edit = { ...span(t.test.statement as Node), text: () => block(source, t, self, edits) };
      edits.push(self);
    }
  }
  const content = splice(source, 0, source.length, edits, null);
  // Read back what was written: every renamed test and twin must be there, once, as a test.
  const again = parseFile(request.path, content);
  if (!again.ok) return { ok: false, why: `the rendered file ${again.why}` };
  const found = findTests(again.ast).map((t) => JSON.stringify(t.path));
  for (const path of expectedPaths(targets)) {
    const n = found.filter((f) => f === JSON.stringify(path)).length;
    if (n !== 1)
      return { ok: false, why: `the rendered file defines ${path.join(" > ")} ${n} times, not once` };
  }
  return { ok: true, content };
}
