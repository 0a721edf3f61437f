import {
  closeSync,
  constants,
  fchownSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  type Stats,
  statSync,
} from "node:fs";
import { InfrastructureError } from "../../core/kernel/errors.js";
import { childPath, decodePathBytes, encodePathBytes } from "../../core/kernel/path-bytes.js";
import type { SandboxUser } from "../../sandbox/sandbox-user.js";
import { PathEscapeError } from "../../workspace/safe-path.js";

/**
 * A workspace the file tools reach in process, never leaving it and never following a symlink.
 *
 * Node has no openat(2), so every step goes through the kernel's own per-descriptor view: the workspace
 * is opened once (O_DIRECTORY), and each component is opened as `/proc/self/fd/<parent>/<name>` with
 * O_NOFOLLOW. The kernel resolves `/proc/self/fd/<parent>` to the directory that descriptor holds (not
 * to a path name, which a concurrent rename could change) and looks `<name>` up in it alone: that is
 * openat(parent, name, O_NOFOLLOW), one component at a time. A name is never `.`, `..` or empty and
 * never holds a slash, so no step can climb; a symlink at any step (a folder or the final file swapped
 * for one after the path was checked) fails the open (ELOOP, or ENOTDIR with O_DIRECTORY) and is refused;
 * the final file is classified by lstat first (a FIFO, socket or device is never opened), then opened
 * with O_NONBLOCK and checked again through the descriptor with fstat, which is what the read or write
 * then uses. Nothing is checked by name and used by name later, so there is no window to race.
 *
 * Permissions: when loopgate is not root, the kernel checks them, and the sandbox runs as the same user.
 * As root (bubblewrap mode), sandboxed code runs as an unprivileged user that is handed the workspace
 * before each run (src/sandbox/sandbox-owner.ts: every entry chowned to it, except regular files with
 * more than one link, which keep their owner). The tools then grant what that user would be granted
 * after the hand-over, from the mode bits, and hand it whatever they create.
 */

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** Permission bits asked of a mode: read, write, search/execute. */
export const R = 4;
export const W = 2;
export const X = 1;

/** One path component: its encoded name (core/kernel/path-bytes.ts) and its raw bytes. */
export interface Component {
  name: string;
  raw: Buffer;
}

/** A walk stopped before the end: nothing there, a non-directory where one was needed, or not permitted. */
export class WalkStop extends Error {
  constructor(
    readonly reason: "missing" | "not_directory" | "denied",
    readonly rel: string,
  ) {
    super(`${rel}: ${reason}`);
  }
}

/** The errno code of a failed file system call. */
export function errnoOf(e: unknown): string {
  return (e as NodeJS.ErrnoException).code ?? "EIO";
}

let procChecked = false;

/** Without /proc every name would look missing: say so once, plainly, instead. */
function checkProc(fd: number): void {
  const viaProc = statSync(`/proc/self/fd/${fd}`, { throwIfNoEntry: false });
  const direct = fstatSync(fd);
  if (viaProc?.ino !== direct.ino || viaProc.dev !== direct.dev)
    throw new InfrastructureError(
      "the agent's file tools reach the workspace through /proc/self/fd, which is not mounted here; mount " +
        "proc on /proc (in a container: do not mask /proc)",
    );
}

/** The workspace, opened once; every other descriptor is reached from it. Close it when done. */
export class ConfinedTree {
  readonly rootFd: number;

  private constructor(
    /** The workspace's real path (what resolveToolPath returns paths under). */
    readonly root: string,
    /** Whose permissions apply when loopgate is root; null when the kernel checks them. */
    readonly user: SandboxUser | null,
  ) {
    this.rootFd = openSync(root, DIR_FLAGS);
    if (!procChecked) {
      try {
        checkProc(this.rootFd);
      } catch (e) {
        closeSync(this.rootFd);
        throw e;
      }
      procChecked = true;
    }
  }

  static open(root: string, user: SandboxUser | null): ConfinedTree {
    return new ConfinedTree(root, user);
  }

  close(): void {
    closeSync(this.rootFd);
  }

  /** Closes a descriptor a walk returned (the root's own stays open until close()). */
  release(fd: number): void {
    if (fd !== this.rootFd) closeSync(fd);
  }

  /** The components of an absolute path under the root; refuses (PathEscapeError) any other path. */
  components(abs: string): Component[] {
    if (abs === this.root) return [];
    if (!abs.startsWith(`${this.root}/`))
      throw new PathEscapeError(this.root, abs, "it is outside the workspace");
    return abs
      .slice(this.root.length + 1)
      .split("/")
      .map((name) => {
        if (name === "" || name === "." || name === "..")
          throw new PathEscapeError(this.root, abs, `it holds the component '${name}'`);
        return { name, raw: decodePathBytes(name) };
      });
  }

  /** What the kernel resolves as `name` inside the directory open at `dirFd`, and nowhere else. */
  at(dirFd: number, c: Component): string | Buffer {
    return childPath(`/proc/self/fd/${dirFd}`, c.raw, c.name);
  }

  /** lstat of `name` in `dirFd`, or null when there is nothing there. */
  lstatAt(dirFd: number, c: Component): Stats | null {
    try {
      return lstatSync(this.at(dirFd, c));
    } catch (e) {
      if (errnoOf(e) === "ENOENT") return null;
      throw e;
    }
  }

  /** Refuses a symlink met while walking, naming its target (bounded, encoded). */
  refuseSymlink(dirFd: number, c: Component, rel: string): never {
    let target = "?";
    try {
      target = encodePathBytes(readlinkSync(this.at(dirFd, c), { encoding: "buffer" })).slice(0, 300);
    } catch {
      // gone again: the refusal stands without its target
    }
    throw new PathEscapeError(
      this.root,
      rel,
      `${rel} is a symlink (to ${target}); the file tools never follow one they meet after resolving the path`,
    );
  }

  /**
   * Opens directory `c` inside `dirFd`; with `create`, makes it first when missing (handed to the
   * sandbox user). Throws WalkStop, or PathEscapeError for a symlink.
   */
  openDir(dirFd: number, c: Component, rel: string, create: boolean): number {
    for (let tries = 0; ; tries++) {
      try {
        const fd = openSync(this.at(dirFd, c), DIR_FLAGS);
        if (this.user && !this.may(fstatSync(fd), X)) {
          closeSync(fd);
          throw new WalkStop("denied", rel);
        }
        return fd;
      } catch (e) {
        if (e instanceof WalkStop) throw e;
        const code = errnoOf(e);
        if (code === "ENOTDIR" || code === "ELOOP") {
          const st = this.lstatAt(dirFd, c);
          if (st?.isSymbolicLink()) this.refuseSymlink(dirFd, c, rel);
          if (st) throw new WalkStop("not_directory", rel);
        } else if (code === "EACCES") throw new WalkStop("denied", rel);
        else if (code !== "ENOENT") throw e;
        if (!create || tries > 2) throw new WalkStop("missing", rel);
        this.mkdirAt(dirFd, c, rel);
      }
    }
  }

  /**
   * Opens the directory at `parts` below `from` (default: the root; `base` names `from` in messages);
   * the caller releases the descriptor. Throws WalkStop, or PathEscapeError for a symlink on the way.
   */
  walk(
    parts: readonly Component[],
    create: boolean,
    from: number = this.rootFd,
    base: readonly Component[] = [],
  ): number {
    if (from === this.rootFd && this.user && !this.may(fstatSync(from), X)) throw new WalkStop("denied", ".");
    let fd = from;
    const drop = (x: number) => {
      if (x !== from) this.release(x);
    };
    try {
      for (let i = 0; i < parts.length; i++) {
        const rel = relOf([...base, ...parts], base.length + i + 1);
        const next = this.openDir(fd, parts[i] as Component, rel, create);
        drop(fd);
        fd = next;
      }
      return fd;
    } catch (e) {
      drop(fd);
      throw e;
    }
  }

  /** Whether the sandbox's user may do `bits` (R|W|X) to an entry with these stats. */
  may(st: Stats, bits: number): boolean {
    const user = this.user;
    if (!user) return true; // the kernel checked, as the same user the sandbox runs as
    // The hand-over gives the sandbox user every entry but a multiply-linked regular file.
    const kept = st.isFile() && st.nlink > 1;
    const uid = kept ? st.uid : user.uid;
    const gid = kept ? st.gid : user.gid;
    const shift = uid === user.uid ? 6 : gid === user.gid ? 3 : 0;
    return ((st.mode >> shift) & bits) === bits;
  }

  /** Hands a descriptor of something just created to the sandbox user, as if the sandbox had made it. */
  handOver(fd: number): void {
    if (this.user) fchownSync(fd, this.user.uid, this.user.gid);
  }

  private mkdirAt(dirFd: number, c: Component, rel: string): void {
    if (this.user && !this.may(fstatSync(dirFd), W | X)) throw new WalkStop("denied", rel);
    try {
      mkdirSync(this.at(dirFd, c), 0o777); // the umask applies, as to `mkdir -p`
    } catch (e) {
      if (errnoOf(e) === "EEXIST") return; // made meanwhile: the next open decides what it is
      throw e;
    }
    const fd = openSync(this.at(dirFd, c), DIR_FLAGS);
    try {
      this.handOver(fd);
    } finally {
      closeSync(fd);
    }
  }
}

/** The workspace-relative text of the first `n` components ("." for none). */
export function relOf(parts: readonly Component[], n: number = parts.length): string {
  return n === 0
    ? "."
    : parts
        .slice(0, n)
        .map((p) => p.name)
        .join("/");
}
