import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { InfrastructureError } from "../../../core/kernel/errors.js";
import { type Observation, observationId } from "../../../core/observation/observation.js";
import type { SandboxUser } from "../../../sandbox/sandbox-user.js";
import { copyTree } from "../../../workspace/copy-tree.js";
import { WorkspaceObserver } from "../../../workspace/observer.js";
import { removeTree } from "../../../workspace/remove-tree.js";

const run = promisify(execFile);

/** A task workspace's read-only copy, shared as the lower layer of every overlay run on it. */
export interface PristineSnapshot {
  /** The tree itself (owned by the sandbox user, never written once made). */
  tree: string;
  observation: Observation;
  /** The observation's file, content-addressed like a run's (`<id>.json`). */
  observationFile: string;
  /** False when an up-to-date snapshot was found and nothing was copied. */
  made: boolean;
}

/**
 * The snapshot of `source` under `<localDir>/snapshots/`, made once and reused while the source is
 * unchanged. A snapshot records a stamp taken before its copy began; it is current while nothing in
 * the source has a status-change time (ctime: every write, chmod, rename, link and deletion in a folder
 * sets one, and no user can set it back) newer than the stamp — one `find` over the source, no reads.
 * The copy starts a clock tick after the stamp, so a change in the stamp's own tick was copied.
 * Dependency folders are left out of the copy and the check (they are mounted, never copied), and
 * their mount points made. The tree is handed to `owner` (the sandbox user) whole, once: a builder
 * edits files copied up from it as it would edit its own copy.
 */
export async function pristineSnapshot(
  localDir: string,
  source: string,
  dependencies: readonly string[],
  filter: (rel: string) => boolean,
  owner: SandboxUser | null,
): Promise<PristineSnapshot> {
  const real = realpathSync(source);
  const key = createHash("sha256")
    .update(JSON.stringify([real, [...dependencies].sort(), owner ? `${owner.uid}:${owner.gid}` : "caller"]))
    .digest("hex")
    .slice(0, 32);
  const home = join(localDir, "snapshots", key);
  const current = currentOf(home);
  if (current && (await unchangedSince(real, join(home, current, "stamp"), dependencies)))
    return { ...readSnapshot(join(home, current)), made: false };
  // An older snapshot stays: a run folder may still name it as its lower layer (gc's to remove).
  const made = await makeSnapshot(home, real, dependencies, filter, owner);
  return { ...readSnapshot(join(home, made.id)), made: true };
}

function currentOf(home: string): string | null {
  try {
    const id = readFileSync(join(home, "current"), "utf8").trim();
    return /^[0-9a-z-]+$/.test(id) && existsSync(join(home, id, "tree")) ? id : null;
  } catch {
    return null;
  }
}

async function unchangedSince(
  source: string,
  stamp: string,
  dependencies: readonly string[],
): Promise<boolean> {
  if (!existsSync(stamp)) return false;
  const prune = dependencies.flatMap((d) => ["-path", join(source, d), "-prune", "-o"]);
  try {
    const r = await run("find", ["-P", source, ...prune, "-cnewer", stamp, "-print", "-quit"], {
      env: { PATH: "/usr/bin:/bin" },
      maxBuffer: 1 << 20,
    });
    return r.stdout === "";
  } catch {
    // A source find cannot walk whole is never vouched for: a fresh copy is made.
    return false;
  }
}

async function makeSnapshot(
  home: string,
  source: string,
  dependencies: readonly string[],
  filter: (rel: string) => boolean,
  owner: SandboxUser | null,
): Promise<{ id: string }> {
  const id = `${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
  const tmp = join(home, `${id}.tmp`);
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  try {
    writeFileSync(join(tmp, "stamp"), "");
    await new Promise((r) => setTimeout(r, 20)); // past the stamp's clock tick (see pristineSnapshot)
    await copyTree(source, join(tmp, "tree"), { filter });
    for (const d of dependencies) mkdirSync(join(tmp, "tree", d), { recursive: true });
    const obs = await new WorkspaceObserver(join(tmp, "tree")).observe();
    writeFileSync(join(tmp, `${obs.id}.json`), JSON.stringify(obs));
    if (owner)
      await run("chown", ["-R", "-h", "--", `${owner.uid}:${owner.gid}`, join(tmp, "tree")], {
        env: { PATH: "/usr/bin:/bin" },
      });
    renameSync(tmp, join(home, id));
  } catch (e) {
    await removeTree(tmp);
    throw new InfrastructureError(`cannot snapshot the task workspace ${source}: ${(e as Error).message}`);
  }
  writeFileSync(join(home, `current.${id}`), id);
  renameSync(join(home, `current.${id}`), join(home, "current"));
  return { id };
}

function readSnapshot(dir: string): Omit<PristineSnapshot, "made"> {
  const file = readdirSync(dir).find((n) => /^[0-9a-f]{64}\.json$/.test(n));
  if (!file) throw new InfrastructureError(`the snapshot ${dir} has no observation`);
  const observationFile = join(dir, file);
  const observation = JSON.parse(readFileSync(observationFile, "utf8")) as Observation;
  // loopgate's own file in its own 0700 folder, but a snapshot every run trusts is checked all the same.
  if (observationId(observation.entries) !== file.slice(0, 64))
    throw new InfrastructureError(`the snapshot's observation ${observationFile} does not hash to its name`);
  return { tree: join(dir, "tree"), observation, observationFile };
}
