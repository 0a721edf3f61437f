import { createHash } from "node:crypto";
import { decodePathBytes, hasRawBytes, isEncodedPath } from "../kernel/path-bytes.js";

/** What an observed path is; "other" covers FIFOs, sockets, devices, what cannot be read, and paths too long to carry. */
export type EntryType = "file" | "dir" | "symlink" | "other";

/** One path of an observed tree, as lstat saw it (symlinks are never followed). */
export interface ObservedEntry {
  /** POSIX path relative to the root, no leading "./"; a name that is not UTF-8 is encoded as path-bytes.ts says. */
  path: string;
  type: EntryType;
  /** Permission bits (st_mode & 0o7777). */
  mode: number;
  /** Bytes; 0 for directories. */
  size: number;
  /** sha256 hex of the content (files) or of the link target (symlinks); "" otherwise. */
  hash: string;
  /** Raw readlink result, symlinks only, encoded like a path. */
  target?: string;
}

/** A content-addressed snapshot of a tree: entries sorted by path in byte order. */
export interface Observation {
  id: string;
  entries: ObservedEntry[];
}

/** The paths that differ between two observations, each list sorted by path. */
export interface ObservationDiff {
  added: string[];
  modified: string[];
  removed: string[];
  typeChanged: string[];
}

/**
 * Orders paths as their UTF-8 bytes would sort (what `git` and `sort` with LC_ALL=C do); an escaped
 * byte of a name that is not UTF-8 (path-bytes.ts) sorts after every character, in byte order among
 * escapes: a fixed total order, and a folder always sorts before what it holds.
 * UTF-16 code-unit order differs from byte order only when a surrogate meets U+E000..U+FFFF,
 * so the fast `<` comparison is corrected in that one case.
 */
export function comparePaths(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x += x < 0xe000 ? 0x2000 : -0x800;
      y += y < 0xe000 ? 0x2000 : -0x800;
    }
    return x - y;
  }
  return a.length - b.length;
}

/**
 * sha256 over a canonical serialisation: every field NUL-terminated, so no path or target can forge a
 * boundary. Paths and targets are hashed as their raw bytes, so two names that differ only in bytes
 * that are not UTF-8 never share an id.
 */
export function observationId(entries: readonly ObservedEntry[]): string {
  const h = createHash("sha256");
  h.update("loopgate-observation-v1\0");
  let chunk = "";
  for (const e of entries) {
    chunk += entryText(e);
    if (chunk.length > 65_536) {
      h.update(hasRawBytes(chunk) ? decodePathBytes(chunk) : chunk);
      chunk = "";
    }
  }
  h.update(hasRawBytes(chunk) ? decodePathBytes(chunk) : chunk);
  return h.digest("hex");
}

/** The text observationId serialises one entry as. */
function entryText(e: ObservedEntry): string {
  return `${e.path}\0${e.type}\0${e.mode.toString(8)}\0${e.size}\0${e.hash}\0${e.target ?? ""}\0`;
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * The bytes observationId hashes for one entry, or null when its text holds a surrogate that is not
 * an escape (path-bytes.ts): observationId's bytes for such an entry depend on its neighbours.
 * Otherwise an entry's bytes never do (each ends in NUL, so no pair or escape spans two), and the
 * id is the prefix's hash followed by the entries' bytes in order.
 */
export function entryIdBytes(e: ObservedEntry): Buffer | null {
  const text = entryText(e);
  if (!SURROGATE.test(text)) return Buffer.from(text, "utf8");
  if (!isEncodedPath(text)) return null;
  return hasRawBytes(text) ? decodePathBytes(text) : Buffer.from(text, "utf8");
}

/** What observationId hashes for a list of entries, whole, with the offset in it where each entry starts. */
export interface ObservationIdBytes {
  bytes: Buffer;
  /** offsets[i] is where entry i starts; offsets[entries.length] is the end. */
  offsets: Float64Array;
}

/**
 * The bytes observationId would hash for `entries`, so an id of a list made of runs of them and a
 * few other entries costs one pass of sha256 and no serialisation (observationIdOf); null where
 * entryIdBytes is null for an entry.
 */
export function observationIdBytes(entries: readonly ObservedEntry[]): ObservationIdBytes | null {
  const offsets = new Float64Array(entries.length + 1);
  const pieces: Buffer[] = [];
  let chunk = "";
  let at = 0;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as ObservedEntry;
    offsets[i] = at;
    const text = entryText(e);
    if (SURROGATE.test(text)) {
      const b = entryIdBytes(e);
      if (b === null) return null;
      pieces.push(Buffer.from(chunk, "utf8"), b);
      chunk = "";
      at += b.length;
      continue;
    }
    chunk += text;
    at += Buffer.byteLength(text, "utf8");
    if (chunk.length > 65_536) {
      pieces.push(Buffer.from(chunk, "utf8"));
      chunk = "";
    }
  }
  pieces.push(Buffer.from(chunk, "utf8"));
  offsets[entries.length] = at;
  return { bytes: Buffer.concat(pieces, at), offsets };
}

/** observationId of the entries whose bytes (entryIdBytes, observationIdBytes) are `parts`, in order. */
export function observationIdOf(parts: Iterable<Uint8Array>): string {
  const h = createHash("sha256");
  h.update("loopgate-observation-v1\0");
  for (const p of parts) h.update(p);
  return h.digest("hex");
}

/** Builds an Observation from entries in any order: sorts them by path and computes the id. */
export function createObservation(entries: readonly ObservedEntry[]): Observation {
  const sorted = [...entries].sort((a, b) => comparePaths(a.path, b.path));
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]?.path === sorted[i - 1]?.path)
      throw new Error(`duplicate observed path ${sorted[i]?.path}`);
  }
  return { id: observationId(sorted), entries: sorted };
}

/** True when `after` differs from `before` in content or mode (directories: mode only). */
export function entryChanged(before: ObservedEntry, after: ObservedEntry): boolean {
  if (before.mode !== after.mode) return true;
  return before.type !== "dir" && before.hash !== after.hash;
}

/** Compares two observations by a merge walk over their sorted entries. */
export function diffObservations(before: Observation, after: Observation): ObservationDiff {
  const diff: ObservationDiff = { added: [], modified: [], removed: [], typeChanged: [] };
  const a = before.entries;
  const b = after.entries;
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    const c = x === undefined ? 1 : y === undefined ? -1 : comparePaths(x.path, y.path);
    if (c < 0 && x) {
      diff.removed.push(x.path);
      i++;
    } else if (c > 0 && y) {
      diff.added.push(y.path);
      j++;
    } else if (x && y) {
      if (x.type !== y.type) diff.typeChanged.push(x.path);
      else if (entryChanged(x, y)) diff.modified.push(x.path);
      i++;
      j++;
    }
  }
  return diff;
}

/**
 * True when following the link could leave the root: an absolute target, a relative one that
 * climbs above the root, or one with ".." after a normal component (lexical resolution of
 * "dir/.." is only sound when "dir" is not itself a symlink, which we cannot know here).
 */
export function symlinkEscapes(linkPath: string, target: string): boolean {
  if (target === "" || target.startsWith("/") || target.includes("\0")) return true;
  let depth = linkPath.split("/").filter((p) => p !== "" && p !== ".").length - 1;
  let seenNormal = false;
  for (const part of target.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (seenNormal) return true;
      depth--;
      if (depth < 0) return true;
    } else {
      seenNormal = true;
    }
  }
  return false;
}
