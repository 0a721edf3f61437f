import { subtreeMatcher } from "./gate-change-plan.js";

/**
 * Whether a task's `protected` globs name anything in its starting workspace. A glob that matches
 * nothing (`test/**` where the folder is `tests/`) protects nothing, and with the default deliverables
 * a builder may then rewrite the tests the gates run. Pure: over the workspace's paths (an
 * Observation's entries), with the same matching as the gate-change plan.
 */

/** A protected glob that matches no path, with the closest existing folder and a corrected glob if one matches. */
export interface UncoveredGlob {
  glob: string;
  /** The existing folder (or file) nearest to what the glob names, "" for the workspace root. */
  closest: string | null;
  /** The glob with its first missing segment replaced by `closest`'s, when that matches something. */
  suggestion: string | null;
}

const GLOB_CHARS = /[*?[\]{}()!+@\\]/;

/** The protected globs that match nothing among `paths`, in declaration order. */
export function uncoveredProtected(globs: readonly string[], paths: readonly string[]): UncoveredGlob[] {
  const out: UncoveredGlob[] = [];
  const children = childrenByDir(paths);
  for (const glob of globs) {
    const matches = subtreeMatcher([glob]);
    if (paths.some(matches)) continue;
    out.push({ glob, ...closestFor(glob, children, paths) });
  }
  return out;
}

/** The message for one uncovered glob, e.g. "protected glob test/** matches nothing in repo/; did you mean tests/**?". */
export function describeUncovered(u: UncoveredGlob, workspace: string): string {
  const where = `${workspace.replace(/^\.\//, "").replace(/\/*$/, "")}/`;
  const head = `protected glob ${u.glob} matches nothing in ${where}`;
  if (u.suggestion) return `${head}; did you mean ${u.suggestion}?`;
  if (u.closest === null) return `${head}, which is empty`;
  return `${head}; the closest existing folder is ${u.closest === "" ? where : `${u.closest}/`}`;
}

function childrenByDir(paths: readonly string[]): Map<string, string[]> {
  const byDir = new Map<string, string[]>();
  for (const p of paths) {
    const i = p.lastIndexOf("/");
    const dir = i < 0 ? "" : p.slice(0, i);
    const list = byDir.get(dir) ?? [];
    list.push(i < 0 ? p : p.slice(i + 1));
    byDir.set(dir, list);
  }
  return byDir;
}

/**
 * Walks the glob's literal leading segments while they exist; at the first that does not, the nearest
 * sibling name (by edit distance) is the closest entry. Where the glob is already past its literal part,
 * the deepest existing folder it names is the closest.
 */
function closestFor(
  glob: string,
  children: Map<string, string[]>,
  paths: readonly string[],
): Omit<UncoveredGlob, "glob"> {
  if (paths.length === 0) return { closest: null, suggestion: null };
  const segments = glob
    .replace(/^(\.\/)+/, "")
    .replace(/\/+$/, "")
    .split("/");
  const dirs = new Set(paths.filter((p) => children.has(p)));
  let dir = "";
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as string;
    if (GLOB_CHARS.test(seg)) break;
    const path = dir === "" ? seg : `${dir}/${seg}`;
    if (dirs.has(path)) {
      dir = path;
      continue;
    }
    const last = i === segments.length - 1;
    const names = (children.get(dir) ?? []).filter((n) => last || dirs.has(dir === "" ? n : `${dir}/${n}`));
    const best = nearest(seg, names);
    if (best === null) break;
    const closest = dir === "" ? best : `${dir}/${best}`;
    const fixed = [...segments.slice(0, i), best, ...segments.slice(i + 1)].join("/");
    const suggestion = paths.some(subtreeMatcher([fixed])) ? fixed : null;
    return { closest, suggestion };
  }
  return { closest: dir, suggestion: null };
}

/** The name nearest to `want`, if any is within a few edits (case differences count as half). */
function nearest(want: string, names: readonly string[]): string | null {
  let best: string | null = null;
  let bestScore = Number.POSITIVE_INFINITY;
  for (const n of names) {
    const folded = distance(want.toLowerCase(), n.toLowerCase());
    const score = folded + (distance(want, n) > folded ? 0.5 : 0);
    if (score < bestScore || (score === bestScore && best !== null && n < best)) {
      best = n;
      bestScore = score;
    }
  }
  const limit = Math.max(2, Math.floor(want.length / 3));
  return best !== null && bestScore <= limit ? best : null;
}

/** Levenshtein distance. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(
        (prev[j] as number) + 1,
        (cur[j - 1] as number) + 1,
        (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    prev = cur;
  }
  return prev[b.length] as number;
}
