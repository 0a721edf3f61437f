import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  symlinkSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { InfrastructureError, InputError } from "../core/kernel/errors.js";
import { fsPath } from "../core/kernel/path-bytes.js";
import type { Observation, ObservedEntry } from "../core/observation/observation.js";
import { keptMode } from "./copy-tree.js";

/** Where a file's content may be found: a file to read, or bytes; null when this source lacks it. */
export type ContentSource = (
  entry: ObservedEntry,
) => Promise<string | Buffer | null> | string | Buffer | null;

/** What `writeObservation` wrote. */
export interface WrittenTree {
  dirs: number;
  files: number;
  symlinks: number;
  bytes: number;
  /** Entries an observation records but no tree can hold again (FIFOs, sockets, devices): not written. */
  skipped: string[];
}

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Writes the tree an observation recorded into `dest` (a new or empty folder): its folders, its symlinks
 * with their recorded targets, and each file from the first source that has it, checked against the
 * recorded hash as it is copied, so a source that changed since can never be written as the observed
 * file. Modes are the recorded ones without set-uid, set-gid or sticky bits. Nothing is read through a
 * symlink, and every write is exclusive: nothing at `dest` can redirect one.
 */
export async function writeObservation(
  obs: Observation,
  dest: string,
  sources: readonly ContentSource[],
): Promise<WrittenTree> {
  const root = path.resolve(dest);
  const st = lstatSync(root, { throwIfNoEntry: false });
  if (st && !st.isDirectory()) throw new InputError(`${root} exists and is not a folder`);
  if (st && readdirSync(root).length > 0)
    throw new InputError(`${root} is not empty; name a new or empty folder`);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const out: WrittenTree = { dirs: 0, files: 0, symlinks: 0, bytes: 0, skipped: [] };
  const dirModes: [string, number][] = [];
  const buf = Buffer.allocUnsafe(1 << 20);
  // Entries are sorted by path, so a folder is always made before what it holds.
  for (const e of obs.entries) {
    const abs = `${root}/${e.path}`;
    if (e.type === "dir") {
      mkdirSync(fsPath(abs), { mode: 0o700 });
      dirModes.push([abs, keptMode(e.mode)]);
      out.dirs++;
    } else if (e.type === "symlink") {
      symlinkSync(fsPath(e.target ?? ""), fsPath(abs));
      out.symlinks++;
    } else if (e.type === "file") {
      out.bytes += await writeFile(e, abs, sources, buf);
      out.files++;
    } else out.skipped.push(e.path);
  }
  // Deepest first, so a folder made read-only never stops what goes inside it.
  for (const [abs, mode] of dirModes.reverse()) chmodSync(fsPath(abs), mode);
  return out;
}

async function writeFile(
  e: ObservedEntry,
  abs: string,
  sources: readonly ContentSource[],
  buf: Buffer,
): Promise<number> {
  const refused: string[] = [];
  for (const source of sources) {
    const from = await source(e);
    if (from === null) continue;
    const why = copyChecked(e, from, abs, buf);
    if (why === null) return e.size;
    refused.push(why);
  }
  throw new InfrastructureError(
    `cannot write ${e.path}: its content (sha256 ${e.hash.slice(0, 12)}) is in no source left${refused.length ? ` (${refused.join("; ")})` : ""}`,
  );
}

/** Writes `from` (a file or bytes) at `abs` when its content hashes to the entry's; else why not (and nothing written). */
function copyChecked(e: ObservedEntry, from: string | Buffer, abs: string, buf: Buffer): string | null {
  if (Buffer.isBuffer(from)) {
    if (createHash("sha256").update(from).digest("hex") !== e.hash) return "a stored copy does not match";
    const out = openSync(fsPath(abs), WRITE_FLAGS, 0o600);
    try {
      for (let off = 0; off < from.length; ) off += writeSync(out, from, off, from.length - off);
      fchmodSync(out, keptMode(e.mode));
    } finally {
      closeSync(out);
    }
    return null;
  }
  const why = copyObserved(from, abs, e, buf);
  if (why === null) return null;
  return why === "vanished" || why.startsWith("cannot be opened")
    ? `${from}: ${why}`
    : `${from} changed since it was observed (${why})`;
}

/**
 * Copies the file `src` (never through a symlink) to the new file `dst`, checking on the way that it is
 * still the observed entry: a regular file of its size whose bytes hash to its hash. The copy gets the
 * entry's mode without privileged bits. Returns null, or what differs (and then nothing is left at `dst`).
 */
export function copyObserved(src: string, dst: string, e: ObservedEntry, buf: Buffer): string | null {
  let fd: number;
  try {
    fd = openSync(fsPath(src), READ_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? "vanished" : `cannot be opened (${code})`;
  }
  let out: number | undefined;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return "is no longer a regular file";
    if (st.size !== e.size) return `changed size (${e.size} → ${st.size} bytes)`;
    out = openSync(fsPath(dst), WRITE_FLAGS, 0o600);
    const h = createHash("sha256");
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
      for (let off = 0; off < n; ) off += writeSync(out, buf, off, n - off);
    }
    if (h.digest("hex") !== e.hash) {
      closeSync(out);
      out = undefined;
      rmFile(dst);
      return "changed content";
    }
    fchmodSync(out, keptMode(e.mode));
    return null;
  } finally {
    closeSync(fd);
    if (out !== undefined) closeSync(out);
  }
}

function rmFile(abs: string) {
  try {
    unlinkSync(fsPath(abs));
  } catch {
    // Nothing was left to remove.
  }
}
