import { closeSync, fstatSync, opendirSync, readlinkSync } from "node:fs";
import { encodePathBytes } from "../../core/kernel/path-bytes.js";
import { type Component, type ConfinedTree, R, relOf, WalkStop, X } from "./confined-fs.js";
import { FileOpError, type ListEntry, type ListOutcome } from "./file-ops.js";

/** Bytes of listed paths and link targets at most per listing (then it is cut, and says so). */
const LIST_MAX_BYTES = 4_000_000;

/**
 * The entries under `abs`, `depth` levels down, at most `maxEntries` (then `complete` is false), never
 * following a symlink; `.git` and `node_modules` folders are listed, not entered. Names that are not
 * UTF-8 come back encoded (core/kernel/path-bytes.ts).
 */
export function listDir(t: ConfinedTree, abs: string, depth: number, maxEntries: number): ListOutcome {
  const parts = t.components(abs);
  let top: number;
  try {
    top = t.walk(parts, false);
  } catch (e) {
    if (!(e instanceof WalkStop)) throw e;
    if (e.reason === "not_directory" && e.rel === relOf(parts)) return { kind: "file" };
    if (e.reason === "denied") throw new FileOpError(`list failed: ${e.rel}: permission denied`);
    return { kind: "missing" };
  }
  const entries: ListEntry[] = [];
  let bytes = 0;
  let complete = true;
  // Breadth first, so a cut keeps the shallowest entries. A folder that vanished, turned into a symlink
  // or is closed to the sandbox user is skipped, as find(1) skips what it cannot enter.
  const queue: { parts: Component[]; prefix: string; level: number }[] = [
    { parts: [], prefix: "", level: 1 },
  ];
  try {
    scan: for (let q = 0; q < queue.length; q++) {
      const dir = queue[q] as (typeof queue)[number];
      let fd: number;
      try {
        fd = t.walk(dir.parts, false, top, parts);
      } catch {
        continue;
      }
      try {
        if (t.user && !t.may(fstatSync(fd), R | X)) continue;
        // Names come back as raw bytes: Node supports encoding "buffer" here, though its types omit it.
        const handle = opendirSync(`/proc/self/fd/${fd}`, { encoding: "buffer" as BufferEncoding });
        try {
          for (let d = handle.readSync(); d; d = handle.readSync()) {
            const raw = d.name as unknown as Buffer;
            const c: Component = { name: encodePathBytes(raw), raw };
            const p = dir.prefix ? `${dir.prefix}/${c.name}` : c.name;
            const type = d.isDirectory()
              ? "dir"
              : d.isFile()
                ? "file"
                : d.isSymbolicLink()
                  ? "symlink"
                  : "other";
            let target = "";
            if (type === "symlink")
              try {
                target = encodePathBytes(readlinkSync(t.at(fd, c), { encoding: "buffer" }));
              } catch {
                // removed since the listing
              }
            const pruned = type === "dir" && (c.name === ".git" || c.name === "node_modules");
            entries.push({ path: p, type, target, pruned });
            bytes += p.length + target.length + 2;
            if (entries.length > maxEntries || bytes > LIST_MAX_BYTES) {
              complete = false;
              break scan;
            }
            if (type === "dir" && !pruned && dir.level < depth)
              queue.push({ parts: [...dir.parts, c], prefix: p, level: dir.level + 1 });
          }
        } finally {
          handle.closeSync();
        }
      } finally {
        if (fd !== top) closeSync(fd);
      }
    }
  } finally {
    t.release(top);
  }
  return { kind: "directory", entries: entries.slice(0, maxEntries), complete };
}
