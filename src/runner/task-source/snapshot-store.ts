import { randomBytes } from "node:crypto";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { InputError, LoopgateError } from "../../core/kernel/errors.js";
import { encodePathBytes, fsPath } from "../../core/kernel/path-bytes.js";
import {
  type SnapshotEntry,
  snapshotOverLimit,
  TASK_SNAPSHOT_LIMITS,
  TASK_SNAPSHOT_VERSION,
  TaskSnapshotManifest,
} from "../../core/task/task-snapshot.js";
import { type ContentStore, contentHash } from "../../store/kernel/content-store.js";
import { keptMode } from "../../workspace/copy-tree.js";
import { mkdirPrivate } from "../../workspace/private-modes.js";
import { resolveInside } from "../../workspace/safe-path.js";
import { type LoadedTask, loadTask } from "./load-task.js";

/**
 * The queued job's option naming its task snapshot in the store (the manifest's hash); like `cwd`, it is
 * not a run flag.
 */
export const TASK_SNAPSHOT_OPTION = "task_snapshot";

/** What `snapshotTask` stored: the manifest's hash names the snapshot. */
export interface TaskSnapshotRef {
  manifest: string;
  taskFile: string;
  files: number;
  bytes: number;
  blobsSent: number;
}

const inside = (parent: string, p: string) => {
  const r = relative(parent, p);
  return r === "" || (!r.startsWith("..") && !r.startsWith(sep) && r !== "..");
};

/** The deepest folder holding every path of `paths`. */
function commonAncestor(paths: readonly string[]): string {
  let base = paths[0] ?? "/";
  for (const p of paths) while (!inside(base, p)) base = dirname(base);
  return base;
}

/**
 * Every path a task names: its folder (its `.loopgate/` store left out) and whatever it refers to outside
 * that folder (workspace, held-out and canary folders, oracle, generator files, a scripted judge file).
 */
function taskRoots(loaded: LoadedTask): string[] {
  const judge = loaded.task.judge?.model?.match(/^(?:scripted|replay):(.+)$/)?.[1];
  const named = [loaded.workspace, ...loaded.hidden, ...(judge ? [resolve(loaded.dir, judge)] : [])];
  return [loaded.dir, ...named.filter((p) => !inside(loaded.dir, p) && existsSync(p))];
}

interface Walked {
  entry: SnapshotEntry;
  abs: string;
}

/**
 * Lists `root` (not following symlinks) as entries relative to `base`; sizes from lstat, nothing read.
 * Paths are encoded strings (path-bytes.ts): a name that is not UTF-8 is kept, by its bytes.
 */
function walk(root: string, base: string, skip: string, out: Map<string, Walked>): void {
  const visit = (abs: string) => {
    if (abs === skip) return;
    const st = lstatSync(fsPath(abs), { throwIfNoEntry: false });
    if (!st) return;
    const path = relative(base, abs).split(sep).join("/");
    if (st.isDirectory()) {
      if (path !== "")
        out.set(path, { abs, entry: { type: "dir", path, mode: keptMode(st.mode), mtime: st.mtimeMs } });
      const names = readdirSync(fsPath(abs), { encoding: "buffer" }).map((n) => encodePathBytes(n));
      for (const name of names.sort()) visit(join(abs, name));
    } else if (st.isFile()) {
      out.set(path, {
        abs,
        entry: { type: "file", path, mode: keptMode(st.mode), mtime: st.mtimeMs, size: st.size, hash: "" },
      });
    } else if (st.isSymbolicLink()) {
      const target = encodePathBytes(readlinkSync(fsPath(abs), { encoding: "buffer" }));
      out.set(path, { abs, entry: { type: "symlink", path, target } });
    }
    // FIFOs, sockets and devices are left out, as copyTree leaves them out of a run's workspace.
  };
  visit(root);
}

/**
 * Stores everything a run of `loaded` needs in `content` (each file once, by its sha256, sending only the
 * blobs the store lacks; the manifest last, so a stored manifest implies all its blobs). A task over the
 * limits is refused before anything is read or sent, naming its size and the limit.
 */
export async function snapshotTask(
  loaded: LoadedTask,
  content: ContentStore,
  limits: { bytes: number; paths: number } = TASK_SNAPSHOT_LIMITS,
): Promise<TaskSnapshotRef> {
  const roots = taskRoots(loaded);
  const base = commonAncestor(roots);
  const walked = new Map<string, Walked>();
  for (const root of roots) walk(root, base, join(loaded.dir, ".loopgate"), walked);
  const files = [...walked.values()].filter((w) => w.entry.type === "file");
  const bytes = files.reduce((n, w) => n + (w.entry.type === "file" ? w.entry.size : 0), 0);
  const over = snapshotOverLimit({ bytes, paths: walked.size }, limits);
  if (over)
    throw new InputError(
      `${over} (everything under ${base} that the task names, its .loopgate/ left out); make the task folder smaller (leave out dependency folders and build output)`,
      loaded.file,
    );
  const hashes = new Map<string, string>();
  for (const w of files) {
    if (w.entry.type !== "file") continue;
    const h = contentHash(readFileSync(fsPath(w.abs)));
    w.entry.hash = h;
    hashes.set(h, w.abs);
  }
  let blobsSent = 0;
  const unique = [...hashes.keys()];
  for (let i = 0; i < unique.length; i += 500) {
    for (const h of await content.missingBlobs(unique.slice(i, i + 500))) {
      await content.putBlob(h, readFileSync(fsPath(hashes.get(h) as string)));
      blobsSent++;
    }
  }
  const entries = [...walked.values()].map((w) => w.entry).sort((a, b) => (a.path < b.path ? -1 : 1));
  const manifest: TaskSnapshotManifest = {
    version: TASK_SNAPSHOT_VERSION,
    task_file: relative(base, loaded.file).split(sep).join("/"),
    task_digest: loaded.digest,
    entries,
  };
  const body = Buffer.from(JSON.stringify(TaskSnapshotManifest.parse(manifest)));
  const manifestHash = contentHash(body);
  if (await content.putBlob(manifestHash, body)) blobsSent++;
  return { manifest: manifestHash, taskFile: manifest.task_file, files: files.length, bytes, blobsSent };
}

/** A snapshot that cannot be written out (missing or malformed in the store). */
export class TaskSnapshotError extends LoopgateError {
  constructor(manifest: string, why: string) {
    super("task_snapshot", `task snapshot ${manifest.slice(0, 12)}: ${why}`);
  }
}

/**
 * Writes snapshot `manifest` out under `root/tasks/<manifest>/` (once: a complete copy is reused; a copy
 * is built in a temporary folder and renamed into place, so a half-written one is never used) and loads
 * its task file, whose digest must be the one submitted. The folder is the worker's own, beside its run
 * folders, never inside a run's workspace: the held-out files in it stay out of the builder's sandbox.
 */
export async function materializeTask(
  content: ContentStore,
  manifest: string,
  root: string,
  expectedDigest: string,
): Promise<LoadedTask> {
  const tasks = join(resolve(root), "tasks");
  const dest = join(tasks, manifest);
  let parsed: TaskSnapshotManifest | undefined;
  if (!existsSync(dest)) {
    parsed = await readManifest(content, manifest);
    mkdirPrivate(tasks, { parentToo: false });
    const tmp = `${dest}.tmp-${randomBytes(4).toString("hex")}`;
    try {
      await writeSnapshot(content, parsed, tmp, manifest);
      try {
        renameSync(tmp, dest);
      } catch (e) {
        // Another job of the same snapshot wrote it first: theirs is as good.
        if (!existsSync(dest)) throw e;
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  parsed ??= await readManifest(content, manifest);
  const loaded = loadTask(join(dest, ...parsed.task_file.split("/")));
  if (loaded.digest !== expectedDigest || loaded.digest !== parsed.task_digest)
    throw new TaskSnapshotError(
      manifest,
      `its task file has digest ${loaded.digest}, the job was submitted with ${expectedDigest}`,
    );
  return loaded;
}

async function readManifest(content: ContentStore, manifest: string): Promise<TaskSnapshotManifest> {
  const body = await content.getBlob(manifest);
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    throw new TaskSnapshotError(manifest, "its manifest is not JSON");
  }
  const r = TaskSnapshotManifest.safeParse(json);
  if (!r.success)
    throw new TaskSnapshotError(
      manifest,
      `its manifest is not valid: ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  return r.data;
}

async function writeSnapshot(
  content: ContentStore,
  m: TaskSnapshotManifest,
  into: string,
  manifest: string,
): Promise<void> {
  mkdirSync(into, { mode: 0o700 });
  const links = new Set<string>();
  const dirs: { abs: string | Buffer; mode: number; mtime: number }[] = [];
  for (const e of m.entries) {
    // Nothing is written through a link the snapshot itself made.
    const parts = e.path.split("/");
    for (let i = 1; i < parts.length; i++)
      if (links.has(parts.slice(0, i).join("/")))
        throw new TaskSnapshotError(
          manifest,
          `${e.path} lies under the symlink ${parts.slice(0, i).join("/")}`,
        );
    const rel = resolveInside(into, e.path);
    const abs = fsPath(rel);
    mkdirSync(fsPath(dirname(rel)), { recursive: true, mode: 0o700 });
    if (e.type === "dir") {
      mkdirSync(abs, { recursive: true, mode: 0o700 });
      dirs.push({ abs, mode: e.mode, mtime: e.mtime / 1000 });
    } else if (e.type === "file") {
      writeFileSync(abs, await content.getBlob(e.hash), { flag: "wx", mode: 0o600 });
      chmodSync(abs, e.mode);
      utimesSync(abs, e.mtime / 1000, e.mtime / 1000);
    } else {
      symlinkSync(fsPath(e.target), abs);
      links.add(e.path);
    }
  }
  // Folder modes and times last (deepest first): a read-only folder could not be filled otherwise.
  for (const d of dirs.reverse()) {
    chmodSync(d.abs, d.mode);
    utimesSync(d.abs, d.mtime, d.mtime);
  }
}
