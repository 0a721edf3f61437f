import { realpathSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import type { Builder } from "../../../builders/builder.js";
import { InputError } from "../../../core/kernel/errors.js";
import type { LoadedTask } from "../../task-source/load-task.js";

/**
 * What the builder must never see through a mount: the task folder, held-out material, event logs.
 * Every path here is resolved with realpath, and so is every mount before it is compared, so neither a
 * symlinked mount nor a task opened through a symlinked folder can slip past a check.
 */
export interface MountGuards {
  taskDir: string;
  /** The task or fixture file itself (a mission fixture holds its criteria). */
  taskFile: string;
  /** Held-out and canary folders, and the oracle. */
  hidden: readonly string[];
  /** Event logs (the run's and the default one beside the task): other runs live there. */
  stores: readonly string[];
  oracle: string | null;
}

/** The read-only mounts a run's builder gets, and what is hidden inside them. */
export interface MountPlan {
  /** Every read-only mount: the user's, then the ones the builder command needs. */
  mounts: string[];
  /** The user's own `--builder-mount` paths (a missing one is their typo, and said so). */
  user: string[];
  /** Paths hidden inside a mount (held-out folders and logs inside an oracle's folder). */
  masked: string[];
  /** What was not mounted and why, for the progress output. */
  notes: string[];
}

/**
 * The real path: realpath of the deepest part that exists, the rest appended, so a path that does not
 * exist yet (a log folder created later) is still compared through its real parent, never through a symlink.
 */
export const real = (p: string): string => {
  const abs = resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    const parent = dirname(abs);
    return parent === abs ? abs : join(real(parent), basename(abs));
  }
};

/** True when `p` is (or resolves to) a regular file. */
function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** True when `p` is `parent` or lies inside it. */
export const inside = (parent: string, p: string) =>
  p === parent || p.startsWith(`${parent.replace(/\/$/, "")}/`);

/** The guards of a task run with the event log in `localDir`. */
export function mountGuards(loaded: LoadedTask, localDir: string): MountGuards {
  const stores = [...new Set([localDir, join(loaded.dir, ".loopgate")].map(real))];
  return {
    taskDir: real(loaded.dir),
    taskFile: real(loaded.file),
    hidden: loaded.hidden.map(real),
    stores,
    oracle: loaded.oracle ? real(loaded.oracle) : null,
  };
}

/**
 * Why mounting `path` would expose what the builder must never see; null when it may be mounted.
 * Refused, after realpath: the root folder; anything that equals, contains or lies inside a held-out or
 * canary folder, the oracle, the task or fixture file, or an event store (every run's folder lives in
 * one); anything that equals or contains the task folder; and a folder inside the task folder. A single
 * file inside the task folder (`bash ./fix.sh` beside task.yaml) exposes only itself and may be mounted.
 */
export function mountRefusal(
  path: string,
  g: MountGuards,
  kind: "folder" | "file" = "folder",
): string | null {
  const p = real(path);
  const shown = p === path ? path : `${path} (really ${p})`;
  if (p === "/") return `${shown} is the root folder: it would expose everything to the builder`;
  for (const h of [...g.hidden, ...g.stores, g.taskFile])
    if (inside(p, h) || inside(h, p)) return `${shown} would expose ${h} to the builder`;
  if (inside(p, g.taskDir)) return `${shown} would expose the task folder ${g.taskDir} to the builder`;
  if (kind === "folder" && inside(g.taskDir, p))
    return `${shown} lies inside the task folder ${g.taskDir}; mount single files from it, or keep the builder's own files elsewhere`;
  return null;
}

/** Folders too broad to mount without being asked: the root, the home folder and what holds it, the temp root. */
function tooBroad(folder: string): boolean {
  const p = real(folder);
  return [homedir(), tmpdir()].some((d) => inside(p, real(d)));
}

/** Refuses any `--builder-mount` that would expose the task folder, held-out material or a log. */
export function checkUserMounts(mounts: readonly string[], g: MountGuards): void {
  for (const m of mounts) {
    const why = mountRefusal(m, g, isFile(m) ? "file" : "folder");
    if (why) throw new InputError(why, "--builder-mount");
  }
}

/**
 * Plans the builder's read-only mounts: the user's `--builder-mount` paths, the files its command
 * names, and an interpreter's script folder, all under the same refusal rules. A named file that
 * would expose held-out material is an InputError; a folder that may not be mounted is skipped with a
 * note (the file alone is). The oracle (the task author's own) may see its folder, the task folder
 * included, with the held-out folders and the logs inside it hidden.
 */
export function planBuilderMounts(
  builder: Pick<Builder, "needs">,
  userMounts: readonly string[],
  g: MountGuards,
): MountPlan {
  const user = userMounts.map((m) => resolve(m));
  checkUserMounts(user, g);
  const mounts = [...user];
  const masked: string[] = [];
  const notes: string[] = [];
  const add = (p: string) => {
    if (!mounts.some((m) => inside(real(m), real(p)))) mounts.push(p);
  };
  const needs = builder.needs;
  if (!needs) return { mounts, user, masked, notes };
  const trustedFile = (f: string) => needs.trusted === true && g.oracle !== null && real(f) === g.oracle;
  for (const f of needs.files) {
    if (trustedFile(f)) {
      add(f);
      continue;
    }
    const why = mountRefusal(f, g, isFile(f) ? "file" : "folder");
    if (why) throw new InputError(`the builder command names ${f}, but ${why}`, "--builder");
    add(f);
  }
  for (const folder of needs.folders) {
    if (tooBroad(folder)) {
      notes.push(
        `${folder} is not mounted for the builder (too broad: it holds your home or temp folder); only the files its command names are`,
      );
      continue;
    }
    if (needs.trusted) {
      const p = real(folder);
      const secret = [...g.hidden.filter((h) => h !== g.oracle), ...g.stores];
      const holder = secret.find((h) => inside(h, p));
      if (holder) {
        notes.push(`${folder} is not mounted for the oracle (it lies inside ${holder}); only the oracle is`);
        continue;
      }
      add(folder);
      for (const h of secret) if (inside(p, h) && !masked.includes(h)) masked.push(h);
      continue;
    }
    const why = mountRefusal(folder, g);
    if (why) {
      notes.push(`the script's folder is not mounted (${why}); only the files the command names are`);
      continue;
    }
    add(folder);
  }
  return { mounts, user, masked, notes };
}
