import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  ftruncateSync,
  openSync,
  read,
  readSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeSync,
} from "node:fs";
import { promisify } from "node:util";
import { LoopgateError } from "../../core/kernel/errors.js";
import { sandboxedAs } from "../../sandbox/sandbox-user.js";
import { type Component, ConfinedTree, errnoOf, R, relOf, W, WalkStop, X } from "./confined-fs.js";
import { listDir } from "./confined-list.js";
import { FileOpError, type FileOps, type ReadOutcome, sliceLines } from "./file-ops.js";
import type { ToolContext } from "./tool.js";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;
const readAt = promisify(read);

/** Files up to this size are read whole in one step; larger ones are streamed in CHUNK slices. */
const WHOLE_READ_LIMIT = 2_000_000;
const CHUNK = 1 << 20;
const FILE_OP_TIMEOUT_MS = 60_000;

/**
 * The default FileOps: the workspace read and written by loopgate itself, confined as confined-fs.ts
 * describes (no `..`, no symlink followed, no special file opened, the sandbox user's permissions). Paths
 * must lie under `workspace` (resolveToolPath's result); any other is refused.
 */
export function confinedFileOps(ctx: ToolContext, workspace: string): FileOps {
  const user = sandboxedAs(ctx.sandbox);
  const timeoutMs = Math.min(ctx.timeoutMs, FILE_OP_TIMEOUT_MS);
  const inTree = async <T>(what: string, abs: string, body: (t: ConfinedTree) => T | Promise<T>) => {
    const t = ConfinedTree.open(workspace, user);
    try {
      return await body(t);
    } catch (e) {
      // An errno from a file system call becomes a failed operation the model reads; anything else is a bug.
      if (e instanceof LoopgateError || typeof (e as NodeJS.ErrnoException).code !== "string") throw e;
      const rel = abs.startsWith(`${workspace}/`) ? abs.slice(workspace.length + 1) : abs;
      throw new FileOpError(`${what} failed: ${rel}: ${errnoOf(e)}`, { cause: e });
    } finally {
      t.close();
    }
  };
  return {
    read: (abs, range) =>
      inTree("read", abs, (t) => readFile(t, abs, range, { timeoutMs, signal: ctx.signal })),
    write: (abs, data) => inTree("write", abs, (t) => writeFile(t, abs, data)),
    list: (abs, depth, maxEntries) => inTree("list", abs, (t) => listDir(t, abs, depth, maxEntries)),
  };
}

async function readFile(
  t: ConfinedTree,
  abs: string,
  range: { offsetLine: number; maxBytes: number },
  limits: { timeoutMs: number; signal: AbortSignal | undefined },
): Promise<ReadOutcome> {
  const parts = t.components(abs);
  const last = parts.at(-1);
  if (!last) return { kind: "directory" };
  let dirFd: number;
  try {
    dirFd = t.walk(parts.slice(0, -1), false);
  } catch (e) {
    if (e instanceof WalkStop) return { kind: e.reason === "denied" ? "unreadable" : "missing" };
    throw e;
  }
  try {
    const st = t.lstatAt(dirFd, last);
    if (!st) return { kind: "missing" };
    if (st.isSymbolicLink()) t.refuseSymlink(dirFd, last, relOf(parts));
    if (st.isDirectory()) return { kind: "directory" };
    if (!st.isFile()) return { kind: "other" }; // a FIFO, socket or device is never opened
    let fd: number;
    try {
      fd = openSync(t.at(dirFd, last), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch (e) {
      const code = errnoOf(e);
      if (code === "ELOOP") t.refuseSymlink(dirFd, last, relOf(parts));
      if (code === "ENOENT") return { kind: "missing" };
      if (code === "EACCES" || code === "EPERM") return { kind: "unreadable" };
      if (code === "ENXIO") return { kind: "other" };
      throw e;
    }
    try {
      const fst = fstatSync(fd); // what was opened, whatever the name held a moment ago
      if (fst.isDirectory()) return { kind: "directory" };
      if (!fst.isFile()) return { kind: "other" };
      if (!t.may(fst, R)) return { kind: "unreadable" };
      if (fst.size <= WHOLE_READ_LIMIT) {
        const all = readUpTo(fd, WHOLE_READ_LIMIT + 1);
        if (all.length <= WHOLE_READ_LIMIT)
          return { kind: "file", ...sliceLines(all, range.offsetLine, range.maxBytes) };
      }
      return { kind: "file", ...(await streamSlice(fd, range, limits)) };
    } finally {
      closeSync(fd);
    }
  } finally {
    t.release(dirFd);
  }
}

function readUpTo(fd: number, max: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < max) {
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, max - total));
    const n = readSync(fd, buf, 0, buf.length, total);
    if (n === 0) break;
    chunks.push(buf.subarray(0, n));
    total += n;
  }
  return Buffer.concat(chunks, total);
}

/**
 * sliceLines over a file of any size without holding it: counted in chunks off the event loop's
 * thread, keeping only the slice; bounded in time like the file operation it replaces.
 */
async function streamSlice(
  fd: number,
  range: { offsetLine: number; maxBytes: number },
  limits: { timeoutMs: number; signal: AbortSignal | undefined },
): Promise<{ size: number; totalLines: number; bytes: Buffer }> {
  const deadline = performance.now() + limits.timeoutMs;
  const buf = Buffer.allocUnsafe(CHUNK);
  const slice: Buffer[] = [];
  let kept = 0;
  let pos = 0;
  let newlines = 0;
  let start = range.offsetLine <= 1 ? 0 : -1;
  let lastByte = 0x0a;
  for (;;) {
    if (limits.signal?.aborted) throw new FileOpError("read was cancelled");
    if (performance.now() > deadline) throw new FileOpError("read timed out");
    const { bytesRead: n } = await readAt(fd, buf, 0, CHUNK, pos);
    if (n === 0) break;
    for (let i = buf.indexOf(0x0a); i >= 0 && i < n; i = buf.indexOf(0x0a, i + 1)) {
      newlines++;
      if (start < 0 && newlines === range.offsetLine - 1) start = pos + i + 1;
    }
    if (start >= 0 && start < pos + n && kept < range.maxBytes) {
      const from = Math.max(0, start - pos);
      const part = Buffer.from(buf.subarray(from, Math.min(n, from + range.maxBytes - kept)));
      slice.push(part);
      kept += part.length;
    }
    lastByte = buf[n - 1] as number;
    pos += n;
  }
  return { size: pos, totalLines: newlines + (lastByte !== 0x0a ? 1 : 0), bytes: Buffer.concat(slice, kept) };
}

function writeFile(t: ConfinedTree, abs: string, data: Buffer): void {
  const parts = t.components(abs);
  const last = parts.at(-1);
  const rel = relOf(parts);
  if (!last) throw new FileOpError("write failed: . is a directory");
  let dirFd: number;
  try {
    dirFd = t.walk(parts.slice(0, -1), true);
  } catch (e) {
    if (e instanceof WalkStop)
      throw new FileOpError(
        `write failed: ${e.rel} ${e.reason === "denied" ? "is not writable by the sandbox user" : "is not a directory"}`,
      );
    throw e;
  }
  const denied = () => new FileOpError(`write failed: ${rel}: permission denied`);
  try {
    // A few rounds at most: each ends in a write unless the entry changed under us (removed, created).
    for (let round = 0; round < 3; round++) {
      const st = t.lstatAt(dirFd, last);
      if (!st) {
        if (t.user && !t.may(fstatSync(dirFd), W | X)) throw denied();
        const fd = openOrNull(
          t.at(dirFd, last),
          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK,
          0o666,
        );
        if (fd === null) continue; // created meanwhile: look again
        writeAndClose(fd, data, () => t.handOver(fd));
        return;
      }
      if (st.isSymbolicLink()) t.refuseSymlink(dirFd, last, rel);
      if (st.isDirectory()) throw new FileOpError(`write failed: ${rel} is a directory`);
      if (!st.isFile()) throw new FileOpError(`write failed: ${rel} is not a regular file`);
      if (st.nlink > 1) {
        replaceEntry(t, dirFd, last, rel, st, data, denied);
        return;
      }
      if (!t.may(st, W)) throw denied();
      let fd: number;
      try {
        // No O_TRUNC: nothing is cut before the descriptor shows what was opened.
        fd = openSync(t.at(dirFd, last), O_WRONLY | O_NOFOLLOW | O_NONBLOCK);
      } catch (e) {
        const code = errnoOf(e);
        if (code === "ELOOP") t.refuseSymlink(dirFd, last, rel);
        if (code === "EACCES" || code === "EPERM") throw denied();
        if (code === "ENXIO") throw new FileOpError(`write failed: ${rel} is not a regular file`);
        if (code === "ENOENT") continue;
        throw e;
      }
      const fst = fstatSync(fd);
      if (!fst.isFile() || fst.nlink > 1) {
        closeSync(fd);
        if (!fst.isFile()) throw new FileOpError(`write failed: ${rel} is not a regular file`);
        replaceEntry(t, dirFd, last, rel, fst, data, denied);
        return;
      }
      // Written over, then cut to length: a cut to zero first would make ext4 flush the file at close
      // (its guard for replace-by-truncate), milliseconds per call.
      writeAndClose(
        fd,
        data,
        () => {},
        () => ftruncateSync(fd, data.length),
      );
      return;
    }
    throw new FileOpError(`write failed: ${rel} kept changing while it was written`);
  } finally {
    t.release(dirFd);
  }
}

/** open(2), or null when O_EXCL found the name taken. */
function openOrNull(p: string | Buffer, flags: number, mode?: number): number | null {
  try {
    return openSync(p, flags, mode);
  } catch (e) {
    if (errnoOf(e) === "EEXIST") return null;
    throw e;
  }
}

function writeAndClose(fd: number, data: Buffer, before: () => void, after: () => void = () => {}): void {
  try {
    before();
    for (let off = 0; off < data.length; ) off += writeSync(fd, data, off, data.length - off);
    after();
  } finally {
    closeSync(fd);
  }
}

/**
 * A regular file with more than one link may share its inode with a file outside the workspace: it is
 * never written through, but replaced by a new file (same mode, the sandbox user's) renamed over its
 * name, as `sed -i` does. The other links keep the old content.
 */
function replaceEntry(
  t: ConfinedTree,
  dirFd: number,
  last: Component,
  rel: string,
  st: Stats,
  data: Buffer,
  denied: () => FileOpError,
): void {
  if (t.user && !t.may(fstatSync(dirFd), W | X)) throw denied();
  const tmpName = `.loopgate-write-${randomBytes(8).toString("hex")}`;
  const tmp: Component = { name: tmpName, raw: Buffer.from(tmpName) };
  const fd = openSync(t.at(dirFd, tmp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  try {
    writeAndClose(fd, data, () => {
      fchmodSync(fd, st.mode & 0o777);
      t.handOver(fd);
    });
    renameSync(t.at(dirFd, tmp), t.at(dirFd, last));
  } catch (e) {
    try {
      unlinkSync(t.at(dirFd, tmp));
    } catch {
      // not created or already renamed
    }
    if (errnoOf(e) === "EISDIR") throw new FileOpError(`write failed: ${rel} is a directory`);
    throw e;
  }
}
