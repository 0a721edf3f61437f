import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Folders a scan of the repository never enters: dependencies, caches, build output, version control. */
const SKIPPED = new Set([
  "node_modules",
  ".venv",
  "venv",
  "__pycache__",
  "dist",
  "build",
  "coverage",
  "target",
  "site-packages",
]);
/** How many folder entries one scan looks at, at most: a huge repository is described by its first ones. */
const SCAN_LIMIT = 20_000;
/** How deep a scan goes below the repository's root. */
const MAX_DEPTH = 6;

/** One file of the repository, by its path relative to the root (forward slashes). */
export interface RepoFile {
  path: string;
  /** The folders above it, `[]` at the root. */
  dirs: string[];
  name: string;
}

/** The repository's files as one bounded breadth-first walk (dot folders, dependencies and build output left out). */
export interface RepoScan {
  root: string;
  /** Top-level entry names, sorted. */
  top: { name: string; dir: boolean }[];
  files: RepoFile[];
  /** True when the walk stopped at its limit, so the picture may be partial. */
  truncated: boolean;
}

function kind(p: string): "file" | "dir" | null {
  try {
    const st = lstatSync(p);
    return st.isFile() ? "file" : st.isDirectory() ? "dir" : null;
  } catch {
    return null;
  }
}

/** Walks `root` (symbolic links are never followed). */
export function scanRepo(root: string): RepoScan {
  const top = readdirSync(root)
    .sort()
    .map((name) => ({ name, dir: kind(join(root, name)) === "dir" }));
  const files: RepoFile[] = [];
  const queue: string[][] = [[]];
  let seen = 0;
  let truncated = false;
  while (queue.length) {
    const dirs = queue.shift() ?? [];
    let names: string[];
    try {
      names = readdirSync(join(root, ...dirs)).sort();
    } catch {
      continue;
    }
    for (const name of names) {
      if (++seen > SCAN_LIMIT) {
        truncated = true;
        queue.length = 0;
        break;
      }
      const k = kind(join(root, ...dirs, name));
      if (k === "dir") {
        if (!name.startsWith(".") && !SKIPPED.has(name) && dirs.length < MAX_DEPTH)
          queue.push([...dirs, name]);
      } else if (k === "file") files.push({ path: [...dirs, name].join("/"), dirs, name });
    }
  }
  return { root, top, files, truncated };
}

/** The text of a file of the repository (at most 1 MiB read), or null when it is absent or unreadable. */
export function readRepoText(root: string, rel: string): string | null {
  try {
    const p = join(root, rel);
    if (kind(p) !== "file") return null;
    const text = readFileSync(p, "utf8");
    return text.length > 1 << 20 ? text.slice(0, 1 << 20) : text;
  } catch {
    return null;
  }
}

/** True when `rel` is a folder of the repository (not a symbolic link). */
export function isRepoDir(root: string, rel: string): boolean {
  return kind(join(root, rel)) === "dir";
}

/** True when `rel` is a regular file of the repository. */
export function isRepoFile(root: string, rel: string): boolean {
  return kind(join(root, rel)) === "file";
}

/** The top-level entries of `scan` whose names match `re`, as written. */
export function topMatching(scan: RepoScan, re: RegExp): string[] {
  return scan.top.filter((t) => re.test(t.name)).map((t) => t.name);
}

/** The shortest set of folders covering `paths`: a folder under another one is dropped. */
export function outermost(paths: readonly string[]): string[] {
  const sorted = [...new Set(paths)].sort((a, b) => a.length - b.length || a.localeCompare(b));
  const out: string[] = [];
  for (const p of sorted) if (!out.some((o) => o === "." || p === o || p.startsWith(`${o}/`))) out.push(p);
  return out.sort();
}
