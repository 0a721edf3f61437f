import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { InfrastructureError } from "../core/kernel/errors.js";

/** The four folders of one overlay workspace: what it shows (`merged`) is `lower` with `upper` on top. */
export interface OverlayDirs {
  /** The read-only pristine tree, shared; never written while mounted. */
  lower: string;
  /** What the builder changed: new and changed files, whiteouts for deletions. */
  upper: string;
  /** Overlayfs's own scratch folder, on the same filesystem as `upper`. */
  work: string;
  /** The mount point: the workspace the builder, the observer and the gates see. */
  merged: string;
}

/**
 * Mount options fixed so that the upper layer is plain to read: every changed file is whole there
 * (metacopy=off), a renamed lower folder is refused with EXDEV and copied by the tool instead of
 * leaving a redirect (redirect_dir=off), no index or inode remapping that would tie the upper layer
 * to one lower layer (index=off, xino=off).
 */
const FIXED_OPTIONS = "redirect_dir=off,metacopy=off,index=off,xino=off";

/** Characters mount(8) and overlayfs would read as separators in an option value: such a path is refused. */
const UNSAFE_PATH = /[,:\\\s"']/;

/** Why kernel overlayfs cannot be used here, or null when it can (root, the filesystem type, a path mount can take). */
export function overlayUnavailable(euid: number = process.geteuid?.() ?? -1): string | null {
  if (process.platform !== "linux") return "overlay workspaces need Linux";
  if (euid !== 0) return "mounting an overlay needs root (loopgate runs unprivileged)";
  let filesystems = "";
  try {
    filesystems = readFileSync("/proc/filesystems", "utf8");
  } catch {
    return "cannot read /proc/filesystems";
  }
  if (!/\toverlay$/m.test(filesystems)) return "the kernel has no overlay filesystem (modprobe overlay)";
  return null;
}

/** Why an overlay cannot be mounted under `dir` by its path alone, or null. */
export function unsafeStorePath(dir: string): string | null {
  return UNSAFE_PATH.test(path.resolve(dir))
    ? `the store path ${path.resolve(dir)} holds a character mount options cannot carry (, : \\ space or a quote)`
    : null;
}

/**
 * Mounts a trial overlay in a fresh folder under `dir` and removes it: null when that worked, else
 * why not (the filesystem under `dir` may refuse to be an upper layer, e.g. an overlay itself).
 */
export function probeOverlay(dir: string): string | null {
  const first = overlayUnavailable();
  if (first) return first;
  const unsafe = unsafeStorePath(dir);
  if (unsafe) return unsafe;
  let root: string;
  // Where `dir` does not exist yet, its nearest existing parent is on the filesystem it will be on.
  let at = path.resolve(dir);
  while (!lstatSync(at, { throwIfNoEntry: false })?.isDirectory() && path.dirname(at) !== at)
    at = path.dirname(at);
  try {
    root = mkdtempSync(path.join(at, ".loopgate-overlay-probe-"));
  } catch (e) {
    return `cannot make a trial folder in ${dir}: ${(e as Error).message}`;
  }
  const d: OverlayDirs = {
    lower: path.join(root, "l"),
    upper: path.join(root, "u"),
    work: path.join(root, "w"),
    merged: path.join(root, "m"),
  };
  try {
    for (const p of Object.values(d)) mkdirSync(p);
    mountOverlay(d);
    unmountOverlay(d.merged);
    return null;
  } catch (e) {
    return (e as Error).message;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * Makes an empty upper layer whose root is like the lower's (the merged root takes its owner and mode
 * from it: whoever owns the lower tree owns the view), and an empty scratch folder; both must be new.
 */
export function freshLayers(d: OverlayDirs): void {
  const root = lstatSync(d.lower);
  mkdirSync(d.upper, { mode: 0o700 });
  chownSync(d.upper, root.uid, root.gid);
  mkdirSync(d.work, { mode: 0o700 });
  // After the chown, and apart from mkdir, so the umask never narrows the lower root's mode.
  chmodSync(d.upper, root.mode & 0o777);
}

/** The kernel (or mount) refused an overlay: where one was only chosen, a copy does instead. */
export class OverlayMountError extends InfrastructureError {}

/**
 * Mounts `d.lower` + `d.upper` at `d.merged` (kernel overlayfs); throws OverlayMountError with mount's words.
 * `volatile` (Linux 5.10+) skips every sync of the upper layer, at its unmount too, which otherwise
 * syncs the whole filesystem the upper layer is on: only for an overlay thrown away once unmounted,
 * never mounted again (after a crash overlayfs refuses such an upper layer until it is renewed).
 */
export function mountOverlay(d: OverlayDirs, options: { volatile?: boolean } = {}): void {
  const dirs = [d.lower, d.upper, d.work, d.merged].map((p) => path.resolve(p));
  const bad = dirs.find((p) => UNSAFE_PATH.test(p));
  if (bad)
    throw new OverlayMountError(`cannot mount an overlay over ${bad}: its path holds , : \\ or a space`);
  const [lower, upper, work, merged] = dirs as [string, string, string, string];
  const given = `lowerdir=${lower},upperdir=${upper},workdir=${work},${FIXED_OPTIONS}${options.volatile ? ",volatile" : ""}`;
  const r = spawnSync("mount", ["-t", "overlay", "overlay", "-o", given, merged], {
    encoding: "utf8",
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
  });
  if (r.status !== 0)
    throw new OverlayMountError(
      `cannot mount an overlay at ${merged}: ${(r.stderr || r.error?.message || `mount exited ${r.status}`).trim().split("\n")[0]}`,
    );
}

/** Unmounts the overlay at `merged` when one is mounted there; a busy mount is detached lazily. */
export function unmountOverlay(merged: string): void {
  const at = path.resolve(merged);
  if (!mountPointsUnder(at).includes(at)) return;
  const env = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" };
  let r = spawnSync("umount", [at], { encoding: "utf8", env });
  // Busy: a process the builder left (already killed, still exiting) holds it; detach it now, freed when done.
  if (r.status !== 0) r = spawnSync("umount", ["-l", at], { encoding: "utf8", env });
  if (r.status !== 0)
    throw new InfrastructureError(
      `cannot unmount the overlay at ${at}: ${(r.stderr || r.error?.message || "").trim().split("\n")[0]}`,
    );
}

/** True when an overlay is mounted exactly at `merged`. */
export function isOverlayMounted(merged: string): boolean {
  return mountPointsUnder(path.resolve(merged)).includes(path.resolve(merged));
}

/**
 * The mount points at `dir` or under it (this process's mount namespace), deepest first. Mountinfo
 * escapes space, tab, newline and backslash as octal.
 */
export function mountPointsUnder(dir: string): string[] {
  let text: string;
  try {
    text = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return [];
  }
  const at = path.resolve(dir);
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const field = line.split(" ")[4];
    if (!field) continue;
    const p = field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
    if (p === at || p.startsWith(`${at}/`)) out.push(p);
  }
  return out.sort((a, b) => b.length - a.length);
}

/** Unmounts every mount at or under `dir` (deepest first): a folder about to be removed holds none. */
export function unmountAllUnder(dir: string): void {
  for (const p of mountPointsUnder(dir)) unmountOverlay(p);
}

/** True when `p` is an overlay whiteout: a character device 0/0 in an upper layer. */
export function isWhiteout(p: string | Buffer): boolean {
  const st = lstatSync(p, { throwIfNoEntry: false });
  return st?.isCharacterDevice() === true && st.rdev === 0;
}
