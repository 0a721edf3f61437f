import type { Stats } from "node:fs";
import { lstat, readdir, readFile, realpath } from "node:fs/promises";
import { isAbsolute, join, resolve, sep } from "node:path";
import { overlayOf } from "../../../workspace/overlay-workspace.js";
import { removeTree } from "../../../workspace/remove-tree.js";

/**
 * How long after a key's `current` file last changed its older snapshots are kept: a run being prepared
 * may have read the previous `current` (and checked its stamp) but not yet written the overlay.json that
 * names it. Minutes cover that step many times over; a snapshot kept a little longer costs only disk.
 */
export const SNAPSHOT_GRACE_MS = 10 * 60_000;

/**
 * How long a snapshot copy in the making (`<id>.tmp`) must have been still before it counts as crashed:
 * after its last write comes the observation, which reads the whole tree (long on a large workspace)
 * and writes nothing, so this is far longer than SNAPSHOT_GRACE_MS.
 */
export const SNAPSHOT_COPY_GRACE_MS = 24 * 3_600_000;

/** What `gc` did to the pristine snapshots under `<store>/snapshots/` (see pristine-snapshot.ts). */
export interface SnapshotPrune {
  /** Snapshots (`<key>/<id>`), crashed copies (`<key>/<id>.tmp`) and stray `<key>/current.<id>` files removed (or, dry, to be). */
  removed: { snapshot: string; bytes: number }[];
  /** What was left alone for a reason a person should know (never the ordinary: current, in use, recent). */
  left: { path: string; why: string }[];
}

/** A key folder's name as pristineSnapshot makes it, and a snapshot id as makeSnapshot makes it. */
const KEY = /^[0-9a-f]{32}$/;
const ID = /^[0-9a-z-]+$/;

/**
 * Removes the snapshots no run can use any more: a snapshot `<key>/<id>` goes when it is not the one
 * `<key>/current` names, no folder under `<localDir>/runs/` (any, known to the log or not) has an
 * overlay.json whose lower layer lies inside it, and `current` (and the snapshot folder itself) last
 * changed SNAPSHOT_GRACE_MS ago or more. A stray `current.<id>` goes once older than that grace, a
 * crashed copy (`<id>.tmp`) once nothing in it changed for SNAPSHOT_COPY_GRACE_MS. Run folders in `gone`
 * (the ones this gc removes, or with dryRun would) protect nothing, so a dry run says the same. A key
 * without a readable `current`, or any overlay.json that cannot be read, keeps its snapshots (and says
 * why); a symlink or a path that is not what it should be is left alone, never followed; key folders stay.
 */
export async function pruneSnapshots(
  localDir: string,
  now: Date,
  dryRun: boolean,
  gone: ReadonlySet<string> = new Set(),
): Promise<SnapshotPrune> {
  const result: SnapshotPrune = { removed: [], left: [] };
  const root = join(localDir, "snapshots");
  const leave = (path: string, why: string): null => {
    result.left.push({ path, why });
    return null;
  };
  const rootStat = await lstat(root).catch(() => null);
  if (!rootStat) return result;
  if (!rootStat.isDirectory()) {
    leave(root, "not a folder (a symlink?): not followed");
    return result;
  }
  const lowers = await lowersInUse(localDir, gone);
  const old = (changedMs: number, grace = SNAPSHOT_GRACE_MS) => now.getTime() - changedMs >= grace;
  const remove = async (rel: string, path: string) => {
    const bytes = await measure(path).then(
      (m) => m.bytes,
      (e: Error) => leave(path, `could not be measured (${e.message})`),
    );
    if (bytes === null) return;
    const failed = dryRun
      ? null
      : await removeTree(path).then(
          () => null,
          (e: unknown) => (e instanceof Error ? e.message : String(e)),
        );
    if (failed) leave(path, `could not be removed (${failed}); part of it may be gone`);
    else result.removed.push({ snapshot: rel, bytes });
  };
  for (const key of (await readdir(root)).sort()) {
    if (!KEY.test(key)) continue;
    const home = join(root, key);
    const st = await lstat(home).catch(() => null);
    if (!st?.isDirectory()) {
      if (st) leave(home, "not a folder (a symlink?): not followed");
      continue;
    }
    const names = await readdir(home).catch((e: Error) => leave(home, `cannot be read (${e.message})`));
    if (!names) continue;
    names.sort();
    const current = await readCurrent(home);
    const snapshots = names.filter((n) => n !== "current" && ID.test(n));
    // Every snapshot of the key stays while it has no readable current, or a run may still be taking the
    // one current named a moment ago, or any run's lower layer is unknown.
    const keepAll =
      "why" in current
        ? current.why
        : !old(current.changedMs)
          ? null
          : "why" in lowers
            ? lowers.why
            : undefined;
    if (keepAll && snapshots.some((n) => n !== ("id" in current ? current.id : undefined)))
      leave(home, `its older snapshots are kept: ${keepAll}`);
    for (const name of names) {
      if (name === "current") continue;
      const path = join(home, name);
      const e = await lstat(path).catch(() => null);
      if (!e) continue;
      const rel = `${key}/${name}`;
      if (name.startsWith("current.") && ID.test(name.slice(8))) {
        // A `current` half-written by a snapshot that crashed (or is being written this moment).
        if (e.isFile() && old(changed(e))) await remove(rel, path);
        continue;
      }
      const tmp = name.endsWith(".tmp") && ID.test(name.slice(0, -4));
      if (!tmp && !ID.test(name)) continue;
      if (!e.isDirectory()) {
        leave(path, "not a folder (a symlink?): not followed");
        continue;
      }
      if (tmp) {
        // A copy that crashed; one changed within the grace may be a copy under way.
        if ("why" in lowers || (await usedBy(path, lowers.paths))) continue;
        if (old(await newestChange(path), SNAPSHOT_COPY_GRACE_MS)) await remove(rel, path);
        continue;
      }
      if (keepAll !== undefined || ("id" in current && current.id === name)) continue;
      // Renamed from its .tmp a moment ago, its `current` not yet written: still in the making.
      if (!old(changed(e))) continue;
      if ("why" in lowers || (await usedBy(path, lowers.paths))) continue;
      await remove(rel, path);
    }
  }
  return result;
}

/** When a path last changed: its mtime or, newer when it was renamed, chmod-ed or had its times set, its ctime. */
function changed(st: Stats): number {
  return Math.max(st.mtimeMs, st.ctimeMs);
}

/** The newest change of anything under `dir` (symlinks not followed; an unreadable entry counts as now). */
async function newestChange(dir: string): Promise<number> {
  let newest = 0;
  const visit = async (p: string) => {
    const st = await lstat(p);
    newest = Math.max(newest, changed(st));
    if (st.isDirectory()) for (const name of await readdir(p)) await visit(join(p, name));
  };
  return visit(dir).then(
    () => newest,
    () => Number.POSITIVE_INFINITY,
  );
}

/** The id a key's `current` names and when it last changed, or why it cannot be read. */
async function readCurrent(home: string): Promise<{ id: string; changedMs: number } | { why: string }> {
  const file = join(home, "current");
  const st = await lstat(file).catch(() => null);
  if (!st) return { why: `${file} is missing` };
  if (!st.isFile()) return { why: `${file} is not a file (a symlink?)` };
  const id = (await readFile(file, "utf8").catch(() => "")).trim();
  return ID.test(id) ? { id, changedMs: changed(st) } : { why: `${file} does not name a snapshot` };
}

/**
 * The lower layers every folder under `<localDir>/runs/` names in its overlay.json (as written and as
 * resolved through symlinks), except those in `gone`; or why some cannot be known.
 */
async function lowersInUse(
  localDir: string,
  gone: ReadonlySet<string>,
): Promise<{ paths: Set<string> } | { why: string }> {
  const runs = join(localDir, "runs");
  let names: string[];
  try {
    names = await readdir(runs);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { paths: new Set() };
    return { why: `${runs} cannot be read (${(e as Error).message})` };
  }
  const paths = new Set<string>();
  for (const name of names) {
    if (gone.has(name)) continue;
    const dir = join(runs, name);
    const st = await lstat(dir).catch(() => null);
    if (!st || st.isFile()) continue; // gone meanwhile, or a file: no run folder
    if (!st.isDirectory()) return { why: `${dir} is not a folder (a symlink?): not followed` };
    const file = join(dir, "overlay.json");
    const m = await lstat(file).catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? null : e));
    if (m === null) continue; // a copy-workspace run
    const lower = m instanceof Error || !m.isFile() ? null : lowerOf(dir);
    if (lower === null) return { why: `the run's overlay record ${file} cannot be read` };
    paths.add(resolve(lower));
    const real = await realpath(lower).catch(() => null);
    if (real) paths.add(real);
  }
  return { paths };
}

/** The absolute lower layer a run folder's overlay record names (read by overlayOf), or null when unreadable. */
function lowerOf(runDir: string): string | null {
  try {
    const lower = overlayOf(runDir)?.lower;
    return lower !== undefined && isAbsolute(lower) ? lower : null;
  } catch {
    return null;
  }
}

/** Whether any of `lowers` is `dir` or lies inside it (compared as written and resolved through symlinks). */
async function usedBy(dir: string, lowers: ReadonlySet<string>): Promise<boolean> {
  const forms = [resolve(dir)];
  const real = await realpath(dir).catch(() => null);
  if (real) forms.push(real);
  for (const l of lowers) for (const d of forms) if (l === d || l.startsWith(`${d}${sep}`)) return true;
  return false;
}

/**
 * Disk space and files under `dir` as `du` counts them: allocated blocks of every entry (folders too),
 * a hard-linked file once, symlinks not followed.
 */
export async function measure(dir: string): Promise<{ bytes: number; files: number }> {
  const seen = new Set<string>();
  let bytes = 0;
  let files = 0;
  const visit = async (p: string) => {
    const st = await lstat(p);
    const key = `${st.dev}:${st.ino}`;
    if (!seen.has(key)) {
      seen.add(key);
      bytes += st.blocks * 512;
    }
    if (st.isDirectory()) for (const name of await readdir(p)) await visit(join(p, name));
    else files++;
  };
  await visit(dir);
  return { bytes, files };
}
