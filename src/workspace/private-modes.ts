import { spawnSync } from "node:child_process";
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
} from "node:fs";
import { dirname } from "node:path";
import { InfrastructureError } from "../core/kernel/errors.js";
import { fsPath } from "../core/kernel/path-bytes.js";
import type { Observation } from "../core/observation/observation.js";
import { keptMode, PRIVILEGED_BITS } from "./copy-tree.js";

/**
 * Creates `dir` (and its missing parents) mode 0700 and makes sure `dir` and `parentToo` (when given)
 * are 0700 even if they existed: a run folder holds the builder's files, which no other local user may reach.
 */
export function mkdirPrivate(dir: string, options: { parentToo?: boolean } = {}): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  if (options.parentToo) chmodSync(dirname(dir), 0o700);
}

// O_NOFOLLOW: a path swapped for a symlink is never followed; O_NONBLOCK: a FIFO swapped in cannot hang us.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Clears set-uid, set-gid and sticky bits in `root` on every path `obs` recorded with one, through a
 * descriptor opened without following symlinks (a name that is not UTF-8 by its raw bytes). When `obs`
 * holds entries it could not read, the whole tree is walked by raw bytes instead, so nothing can hide a
 * privileged file. Returns how many were
 * cleared. Run once the builder has exited: nothing privileged may stay in a run workspace.
 */
export function clearPrivilegedBits(root: string, obs: Observation): number {
  if (obs.entries.some((e) => e.type === "other")) {
    try {
      return clearTree(Buffer.from(root));
    } catch (e) {
      // A tree deeper than PATH_MAX cannot be walked by absolute paths; find(1) walks it from inside.
      if ((e as NodeJS.ErrnoException).code !== "ENAMETOOLONG") throw e;
      return clearWithFind(root);
    }
  }
  // The root itself is not an observed entry, but `chmod 1777 .` must not survive either.
  let cleared = clearOne(root) ? 1 : 0;
  for (const e of obs.entries) {
    if ((e.type !== "file" && e.type !== "dir") || !(e.mode & PRIVILEGED_BITS)) continue;
    if (clearOne(fsPath(`${root}/${e.path}`))) cleared++;
  }
  return cleared;
}

function clearOne(p: string | Buffer): boolean {
  let fd: number;
  try {
    fd = openSync(p, OPEN_FLAGS);
  } catch {
    return false; // gone, unopenable, or replaced by a symlink since it was observed
  }
  try {
    const st = fstatSync(fd);
    if (!(st.isFile() || st.isDirectory()) || !(st.mode & PRIVILEGED_BITS)) return false;
    fchmodSync(fd, keptMode(st.mode));
    return true;
  } finally {
    closeSync(fd);
  }
}

/** Clears the bits with find(1), which descends with relative paths (-execdir), however deep the tree. */
function clearWithFind(root: string): number {
  const r = spawnSync(
    "find",
    [
      root,
      "-xdev",
      "!",
      "-type",
      "l",
      "(",
      "-perm",
      "-4000",
      "-o",
      "-perm",
      "-2000",
      "-o",
      "-perm",
      "-1000",
      ")",
      "-execdir",
      "chmod",
      "u-s,g-s,o-t",
      "{}",
      "+",
    ],
    { stdio: "ignore", env: { PATH: "/usr/bin:/bin" } },
  );
  if (r.status !== 0)
    throw new InfrastructureError(
      `cannot clear set-uid, set-gid and sticky bits under ${root} (find exited ${r.status ?? r.signal})`,
    );
  return 0;
}

function clearTree(dir: Buffer): number {
  let cleared = clearOne(dir) ? 1 : 0;
  for (const name of readdirSync(dir, { encoding: "buffer" })) {
    const p = Buffer.concat([dir, Buffer.from("/"), name]);
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (!st || st.isSymbolicLink()) continue;
    if (st.isDirectory()) cleared += clearTree(p);
    else if (st.isFile() && st.mode & PRIVILEGED_BITS && clearOne(p)) cleared++;
  }
  return cleared;
}
