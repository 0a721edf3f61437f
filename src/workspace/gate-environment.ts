import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { InfrastructureError } from "../core/kernel/errors.js";
import { encodePathBytes, fsPath } from "../core/kernel/path-bytes.js";
import type { ChangePlan } from "../core/observation/gate-change-plan.js";
import type { Observation, ObservedEntry } from "../core/observation/observation.js";
import { comparePaths } from "../core/observation/observation.js";
import { keptMode, PRIVILEGED_BITS } from "./copy-tree.js";
import { freshLayers, mountOverlay } from "./overlay-mount.js";
import { removeTreeSync } from "./remove-tree.js";
import { mkdirInside } from "./safe-path.js";
import { copyObserved } from "./write-observation.js";

/** Everything needed to build one gate environment. */
export interface GateEnvironmentSpec {
  pristineDir: string;
  pristine: Observation;
  workspaceDir: string;
  workspace: Observation;
  /** From planGateChanges(pristine, workspace, rules). */
  plan: ChangePlan;
  /** Held-out files, overlaid last; they replace whatever is at their paths. */
  heldoutDir?: string;
  /** A declared canary's files, overlaid after the held-out files (the canary run of a gate). */
  canaryDir?: string;
  /** Files written before the overlays (inert stand-ins where a canary's files go in the other run). */
  padding?: readonly { path: string; content: string }[];
  /** Where the padding's folders take their modes from (the canary folder), so both runs look alike. */
  paddingModesFrom?: string;
  /** Must not exist; created. */
  destDir: string;
  /**
   * link: unchanged pristine files are hardlinked (the gate sandbox mounts the env read-only); copy: real
   * copies; overlay: a kernel overlay with the pristine tree as its read-only lower layer and the changes
   * written on top (O(changes); needs root; the layers live beside `destDir`, see removeGateEnvironment).
   */
  mode: "link" | "copy" | "overlay";
}

/** A built gate environment and how its regular files got there. */
export interface GateEnvironment {
  dir: string;
  files: number;
  linked: number;
  copied: number;
}

const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const NO_LINK = new Set(["EXDEV", "EPERM", "EMLINK", "EACCES"]);

class Builder {
  readonly counts = { files: 0, linked: 0, copied: 0 };
  /** Final directory modes, applied deepest first once everything is written. */
  readonly dirModes = new Map<string, number>();
  private readonly buf = Buffer.allocUnsafe(1 << 20);

  constructor(
    private readonly spec: GateEnvironmentSpec,
    readonly dest: string,
  ) {}

  build() {
    if (this.spec.mode === "overlay") this.buildOnPristine();
    else this.buildFromEntries();
    const { spec } = this;
    for (const p of spec.padding ?? []) this.writeInside(p.path, p.content);
    if (spec.heldoutDir) this.overlay(path.resolve(spec.heldoutDir), "");
    if (spec.canaryDir) this.overlay(path.resolve(spec.canaryDir), "");
    const byDepth = [...this.dirModes].sort((a, b) => b[0].length - a[0].length);
    for (const [abs, mode] of byDepth) {
      // On an overlay even a chmod to the same mode copies the folder up: only what differs is changed.
      if (spec.mode === "overlay" && (lstatSync(fsPath(abs)).mode & 0o7777) === mode) continue;
      chmodSync(fsPath(abs), mode);
    }
    // On an overlay every pristine file left is the lower layer's own: shared, as a link would be.
    if (spec.mode === "overlay") this.counts.linked = this.counts.files - this.counts.copied;
  }

  /**
   * The pristine tree is already there (the mount's lower layer): dropped paths are removed, carried
   * entries replace what is at their paths, in path order, so a folder is always there before what it holds.
   */
  private buildOnPristine() {
    const { spec, dest } = this;
    this.counts.files = spec.pristine.entries.filter((e) => e.type === "file").length;
    for (const p of [...spec.plan.drop].sort((a, b) => comparePaths(b, a))) this.clear(`${dest}/${p}`);
    const carried = [...spec.plan.carry].sort((a, b) => comparePaths(a.path, b.path));
    for (const e of carried) {
      const slash = e.path.lastIndexOf("/");
      const parent = slash < 0 ? dest : `${dest}/${e.path.slice(0, slash)}`;
      if (!lstatSync(fsPath(parent), { throwIfNoEntry: false })?.isDirectory())
        throw new InfrastructureError(
          `inconsistent change plan: ${e.path} has no directory parent in ${dest}`,
        );
      const abs = `${dest}/${e.path}`;
      const there = lstatSync(fsPath(abs), { throwIfNoEntry: false });
      if (e.type === "dir") {
        if (there && !there.isDirectory()) this.clear(abs);
        if (!there?.isDirectory()) mkdirSync(fsPath(abs), { mode: 0o700 });
        this.dirModes.set(abs, keptMode(e.mode));
      } else if (e.type === "symlink") {
        if (there) this.clear(abs);
        symlinkSync(fsPath(e.target ?? ""), fsPath(abs));
      } else if (e.type === "file") {
        if (there) this.clear(abs);
        this.copyVerified(e, abs);
        this.counts.files++;
      }
    }
  }

  private buildFromEntries() {
    const { spec, dest } = this;
    const carry = new Map(spec.plan.carry.map((e) => [e.path, e]));
    const drop = new Set(spec.plan.drop);
    const items: { e: ObservedEntry; carried: boolean }[] = [];
    for (const e of spec.pristine.entries)
      if (!drop.has(e.path) && !carry.has(e.path)) items.push({ e, carried: false });
    for (const e of carry.values()) items.push({ e, carried: true });
    items.sort((a, b) => comparePaths(a.e.path, b.e.path));
    const dirs = new Set<string>([""]);
    for (const { e, carried } of items) {
      const slash = e.path.lastIndexOf("/");
      if (!dirs.has(slash < 0 ? "" : e.path.slice(0, slash))) {
        throw new InfrastructureError(
          `inconsistent change plan: ${e.path} has no directory parent in ${dest}`,
        );
      }
      // Paths are encoded strings (path-bytes.ts) until the file system call, which gets their raw bytes.
      const abs = `${dest}/${e.path}`;
      if (e.type === "dir") {
        mkdirSync(fsPath(abs), { mode: 0o700 });
        this.dirModes.set(abs, keptMode(e.mode));
        dirs.add(e.path);
      } else if (e.type === "symlink") {
        // Only pristine links and carried links that planGateChanges found non-escaping get here; the observed target is used, not a re-read.
        symlinkSync(fsPath(e.target ?? ""), fsPath(abs));
      } else if (e.type === "file") {
        if (carried) this.copyVerified(e, abs);
        else if (spec.mode === "link") this.link(`${spec.pristineDir}/${e.path}`, abs);
        else this.copyPlain(`${spec.pristineDir}/${e.path}`, abs);
        this.counts.files++;
      }
    }
  }

  private link(src: string, dst: string) {
    try {
      linkSync(fsPath(src), fsPath(dst));
      this.counts.linked++;
    } catch (e) {
      if (!NO_LINK.has((e as NodeJS.ErrnoException).code ?? "")) throw e;
      this.copyPlain(src, dst); // another filesystem, or hardlinks not allowed: fall back to a copy
    }
  }

  private copyPlain(src: string, dst: string) {
    copyFileSync(fsPath(src), fsPath(dst), constants.COPYFILE_EXCL);
    const st = lstatSync(fsPath(src));
    if (st.mode & PRIVILEGED_BITS) chmodSync(fsPath(dst), keptMode(st.mode));
    utimesSync(fsPath(dst), st.atimeMs / 1000, st.mtimeMs / 1000);
    this.counts.copied++;
  }

  /** Copies a carried file from the run workspace, checking on the way that it is still what was observed. */
  private copyVerified(e: ObservedEntry, dst: string) {
    const src = `${this.spec.workspaceDir}/${e.path}`;
    const changed = (why: string) =>
      new InfrastructureError(
        `${e.path} in ${this.spec.workspaceDir} ${why} since it was observed; observe the workspace again`,
      );
    // The copy keeps its fresh mtime, never the builder's: a cache keyed on mtime (a pristine
    // `.pyc`, cargo's fingerprints, make) can never take a carried file for a pristine one.
    const why = copyObserved(src, dst, e, this.buf);
    if (why !== null) throw changed(why);
    this.counts.copied++;
  }

  /** Writes a file of loopgate's own at `rel`, with the overlay's rules: nothing in the way may redirect it. */
  private writeInside(rel: string, content: string) {
    const slash = rel.lastIndexOf("/");
    const from = this.spec.paddingModesFrom;
    if (from && slash > 0) {
      const parts = rel.slice(0, slash).split("/");
      for (let i = 1; i <= parts.length; i++) {
        const sub = parts.slice(0, i).join("/");
        const src = lstatSync(fsPath(`${from}/${sub}`), { throwIfNoEntry: false });
        if (src?.isDirectory() && !lstatSync(fsPath(`${this.dest}/${sub}`), { throwIfNoEntry: false }))
          this.dirModes.set(`${this.dest}/${sub}`, keptMode(src.mode));
      }
    }
    const parent = mkdirInside(this.dest, slash < 0 ? "" : rel.slice(0, slash), {
      replace: true,
      mode: 0o700,
    });
    const abs = `${parent}/${slash < 0 ? rel : rel.slice(slash + 1)}`;
    this.clear(abs);
    const fd = openSync(fsPath(abs), WRITE_FLAGS, 0o644);
    try {
      writeSync(fd, content);
    } finally {
      closeSync(fd);
    }
    this.counts.files++;
    this.counts.copied++;
  }

  /** Removes whatever is at `abs` (never following a symlink), keeping the counters and pending modes right. */
  private clear(abs: string) {
    const st = lstatSync(fsPath(abs), { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      this.counts.files -= countFiles(abs);
      for (const key of [...this.dirModes.keys()]) {
        if (key === abs || key.startsWith(`${abs}/`)) this.dirModes.delete(key);
      }
      rmSync(fsPath(abs), { recursive: true, force: true });
    } else {
      if (st.isFile()) this.counts.files--;
      unlinkSync(fsPath(abs));
    }
  }

  /**
   * Overlays the held-out tree. Every directory on the way is created with mkdirInside semantics and
   * anything in the way that is not a real directory is removed first, so a symlink the builder planted
   * can never redirect a held-out write, and the overlay always wins.
   */
  private overlay(heldout: string, rel: string) {
    const srcDir = rel === "" ? heldout : `${heldout}/${rel}`;
    for (const raw of readdirSync(fsPath(srcDir), { encoding: "buffer" })) {
      const name = encodePathBytes(raw);
      const childRel = rel === "" ? name : `${rel}/${name}`;
      const src = `${srcDir}/${name}`;
      const st = lstatSync(fsPath(src));
      if (st.isDirectory()) {
        const abs = mkdirInside(this.dest, childRel, { replace: true, mode: 0o700 });
        this.dirModes.set(abs, keptMode(st.mode));
        this.overlay(heldout, childRel);
        continue;
      }
      if (!st.isFile() && !st.isSymbolicLink()) continue;
      const parent = mkdirInside(this.dest, rel, { replace: true, mode: 0o700 });
      const abs = `${parent}/${name}`;
      this.clear(abs);
      if (st.isSymbolicLink()) {
        symlinkSync(readlinkSync(fsPath(src), { encoding: "buffer" }), fsPath(abs));
      } else {
        copyFileSync(fsPath(src), fsPath(abs), constants.COPYFILE_EXCL);
        if (st.mode & PRIVILEGED_BITS) chmodSync(fsPath(abs), keptMode(st.mode));
        this.counts.copied++;
        this.counts.files++;
      }
    }
  }
}

function countFiles(dir: string): number {
  let n = 0;
  for (const raw of readdirSync(fsPath(dir), { encoding: "buffer" })) {
    const p = `${dir}/${encodePathBytes(raw)}`;
    const st = lstatSync(fsPath(p));
    if (st.isFile()) n++;
    else if (st.isDirectory()) n += countFiles(p);
  }
  return n;
}

/**
 * Builds a fresh gate environment: pristine + carried changes − dropped paths, then the held-out
 * overlay. Carried files are always copied from the run workspace (the agent may still hold them),
 * verified against their observed hash, and get fresh mtimes; pristine files keep theirs. On any failure the partial environment is removed.
 */
export async function buildGateEnvironment(spec: GateEnvironmentSpec): Promise<GateEnvironment> {
  const dest = path.resolve(spec.destDir);
  if (lstatSync(dest, { throwIfNoEntry: false })) {
    throw new InfrastructureError(`cannot build a gate environment at ${dest}: it already exists`);
  }
  const pristineRoot = lstatSync(spec.pristineDir, { throwIfNoEntry: false });
  if (!pristineRoot?.isDirectory()) {
    throw new InfrastructureError(`pristine workspace ${spec.pristineDir} is missing or not a directory`);
  }
  mkdirSync(dest, { mode: 0o700 });
  const builder = new Builder(spec, dest);
  builder.dirModes.set(dest, keptMode(pristineRoot.mode));
  try {
    if (spec.mode === "overlay") mountLayers(spec.pristineDir, dest);
    builder.build();
  } catch (e) {
    removeGateEnvironment(dest);
    throw e instanceof InfrastructureError
      ? e
      : new InfrastructureError(`cannot build the gate environment at ${dest}: ${String(e)}`, { cause: e });
  }
  return { dir: dest, ...builder.counts };
}

/** The layers of an overlay gate environment at `dest`: beside it, never inside what the gate sees. */
const layersOf = (dest: string) => `${dest}.layers`;

/** Whether this kernel takes overlayfs's `volatile` option; false once it refused it. */
let volatileTaken = true;

/**
 * Mounts `lower` with fresh layers at `dest`: the upper layer's root is like the lower's (owner, mode).
 * Volatile where the kernel has it: the environment is thrown away after its gate, so its unmount need
 * not sync the store's whole filesystem (measured: 4 ms against 195 ms with 400 MB written elsewhere).
 */
function mountLayers(lower: string, dest: string) {
  const layers = layersOf(dest);
  const dirs = { lower, upper: path.join(layers, "upper"), work: path.join(layers, "work"), merged: dest };
  mkdirSync(layers, { mode: 0o700 });
  freshLayers(dirs);
  if (volatileTaken)
    try {
      mountOverlay(dirs, { volatile: true });
      return;
    } catch {
      volatileTaken = false;
    }
  mountOverlay(dirs);
}

/** Removes a gate environment of any mode, and an overlay's layers and mount with it. */
export function removeGateEnvironment(dest: string): void {
  removeTreeSync(dest);
  removeTreeSync(layersOf(dest));
}
