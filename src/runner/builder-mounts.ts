import { realpathSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Builder } from "../builders/builder.js";
import { InputError } from "../core/errors.js";
import type { LoadedTask } from "./load-task.js";

/** What the builder must never see through a mount: the task folder, held-out material, event logs. */
export interface MountGuards {
  taskDir: string;
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

/** The real path when it exists (a symlink cannot smuggle a held-out folder in), else the absolute one. */
const real = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
};

/** True when `p` is `parent` or lies inside it. */
export const inside = (parent: string, p: string) =>
  p === parent || p.startsWith(`${parent.replace(/\/$/, "")}/`);

/** The guards of a task run with the event log in `storeDir`. */
export function mountGuards(loaded: LoadedTask, storeDir: string): MountGuards {
  const stores = [...new Set([storeDir, join(loaded.dir, ".loopgate")].map(real))];
  return {
    taskDir: real(loaded.dir),
    hidden: loaded.hidden.map(real),
    stores,
    oracle: loaded.oracle ? real(loaded.oracle) : null,
  };
}

/** Why mounting `path` would expose what the builder must never see; null when it may be mounted. */
export function mountRefusal(path: string, g: MountGuards): string | null {
  const p = real(path);
  for (const h of [...g.hidden, ...g.stores])
    if (inside(p, h) || inside(h, p)) return `${path} would expose ${h} to the builder`;
  if (inside(p, g.taskDir)) return `${path} would expose ${g.taskDir} to the builder`;
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
    const why = mountRefusal(m, g);
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
  builder: Builder,
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
    const why = mountRefusal(f, g);
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
