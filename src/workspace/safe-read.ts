import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/**
 * Reads a file that code loopgate does not trust may have touched (a workspace, a gate environment, a
 * runner's config in either): opened without following a final symlink and without blocking (a FIFO
 * or a device put where a file was expected cannot wedge loopgate), checked to be a regular file of at
 * most `maxBytes` through the open descriptor (so nothing can be swapped in between), then read.
 */
export type SafeRead =
  | { ok: true; bytes: Buffer }
  | { ok: false; reason: "missing" | "not_regular" | "too_large" | "unreadable"; detail: string };

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Config files, manifests, small sources: what loopgate reads to plan a gate. */
export const SMALL_FILE_BYTES = 4 * 1024 * 1024;

/** A file a static gate matches or hashes. */
export const STATIC_GATE_BYTES = 64 * 1024 * 1024;

export function readRegularFile(path: string | Buffer, maxBytes: number = SMALL_FILE_BYTES): SafeRead {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "EIO";
    if (code === "ENOENT" || code === "ENOTDIR") return { ok: false, reason: "missing", detail: code };
    // ELOOP: the last component is a symlink; ENXIO: a FIFO or socket nobody serves.
    if (code === "ELOOP" || code === "ENXIO")
      return {
        ok: false,
        reason: "not_regular",
        detail: code === "ELOOP" ? "a symbolic link" : "a FIFO or socket",
      };
    return { ok: false, reason: "unreadable", detail: code };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, reason: "not_regular", detail: kindOf(st) };
    if (st.size > maxBytes)
      return { ok: false, reason: "too_large", detail: `${st.size} bytes, more than ${maxBytes}` };
    // Read to the end, not to the size fstat gave: a file that grows past the bound while read is refused.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(1 << 20, maxBytes + 1 - total));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
      if (total > maxBytes) return { ok: false, reason: "too_large", detail: `more than ${maxBytes} bytes` };
    }
    return { ok: true, bytes: Buffer.concat(chunks, total) };
  } catch (e) {
    return { ok: false, reason: "unreadable", detail: (e as NodeJS.ErrnoException).code ?? String(e) };
  } finally {
    closeSync(fd);
  }
}

/** The text of a small regular file, or null when it is missing, not a regular file, too large or unreadable. */
export function readRegularText(path: string, maxBytes: number = SMALL_FILE_BYTES): string | null {
  const r = readRegularFile(path, maxBytes);
  return r.ok ? r.bytes.toString("utf8") : null;
}

function kindOf(st: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (st.isDirectory()) return "a directory";
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  return "a device or other special file";
}
