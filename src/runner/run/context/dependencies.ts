import { createHash, randomBytes } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { InfrastructureError, InputError } from "../../../core/kernel/errors.js";
import { DEPENDENCY_CACHES, type SandboxMode } from "../../../sandbox/bubblewrap.js";
import { copyTree } from "../../../workspace/copy-tree.js";
import { WorkspaceObserver } from "../../../workspace/observer.js";
import { removeTree } from "../../../workspace/remove-tree.js";

/**
 * A task's dependency folder (`dependencies: [node_modules]`) as a run uses it: one content-addressed copy
 * in the store, shared read-only by every run whose source folder had the same content, mounted at
 * `<workspace>/<path>` in the builder's and every gate's sandbox, and never copied into a run folder.
 */
export interface SharedDependency {
  /** The folder, relative to the workspace. */
  path: string;
  /** The content address of the copy: the observation id of its tree (paths, types, modes, content hashes). */
  digest: string;
  /** Regular files in it. */
  files: number;
  /** The copy's folder: `<store dir>/dependencies/<digest>`. */
  source: string;
}

/** What run_started records of a dependency (and the envelope shows). */
export type DependencyRecord = Omit<SharedDependency, "source">;

const DIGEST = /^[0-9a-f]{64}$/;

/** The folder holding a store's dependency copies. */
export const dependenciesDir = (localDir: string): string => join(localDir, "dependencies");

/** The digests of the copies a store holds. */
export function storedDependencies(localDir: string): string[] {
  const dir = dependenciesDir(localDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((n) => DIGEST.test(n));
}

/**
 * A cheap fingerprint of a folder: a stat walk (relative paths, types, sizes, mtimes, modes, link
 * targets), no content read. Unchanged means the copy made from it last time can be reused.
 */
export function fingerprint(root: string): string {
  const h = createHash("sha256");
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const p = `${dir}/${name}`;
      const st = lstatSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      const kind = st.isDirectory() ? "d" : st.isFile() ? "f" : st.isSymbolicLink() ? "l" : "o";
      const link = kind === "l" ? readlinkSync(p) : "";
      h.update(`${r}\0${kind}\0${st.mode}\0${kind === "d" ? 0 : st.size}\0${st.mtimeMs}\0${link}\n`);
      if (kind === "d") walk(p, r);
    }
  };
  walk(root, "");
  return h.digest("hex");
}

/**
 * The shared copies of a task's dependency folders, made on first use: a folder whose fingerprint is
 * known reuses its copy; otherwise it is copied once into the store, hashed once, and put under its
 * digest (a copy another run already put there wins, so concurrent runs agree).
 */
export async function shareDependencies(
  workspace: string,
  paths: readonly string[],
  localDir: string,
): Promise<SharedDependency[]> {
  const out: SharedDependency[] = [];
  for (const path of paths) out.push(await shareOne(join(workspace, path), path, localDir));
  return out;
}

interface FingerprintEntry {
  digest: string;
  files: number;
}

async function shareOne(src: string, path: string, localDir: string): Promise<SharedDependency> {
  const st = lstatSync(src, { throwIfNoEntry: false });
  if (!st?.isDirectory())
    throw new InfrastructureError(`the dependency folder ${src} is missing or not a folder`);
  const root = dependenciesDir(localDir);
  const index = join(root, "fingerprints");
  mkdirSync(index, { recursive: true });
  const before = fingerprint(src);
  const known = readEntry(join(index, before));
  if (known && existsSync(join(root, known.digest))) {
    markUsed(join(root, known.digest));
    return { path, digest: known.digest, files: known.files, source: join(root, known.digest) };
  }
  const tmp = join(root, `.tmp-${randomBytes(6).toString("hex")}`);
  try {
    await copyTree(src, tmp);
    const obs = await new WorkspaceObserver(tmp).observe();
    const files = obs.entries.filter((e) => e.type === "file").length;
    const digest = obs.id;
    // Mount points for the sandbox's private cache layers; made after hashing, so never part of the digest.
    for (const name of DEPENDENCY_CACHES) mkdirSync(join(tmp, name), { recursive: true, mode: 0o755 });
    const dest = join(root, digest);
    if (existsSync(dest)) await removeTree(tmp);
    else
      try {
        renameSync(tmp, dest);
      } catch (e) {
        // Another run put the same content there first.
        if (!existsSync(dest)) throw e;
        await removeTree(tmp);
      }
    markUsed(dest);
    // A folder that changed while it was copied is not remembered by its first fingerprint.
    if (fingerprint(src) === before) {
      const entry = join(index, before);
      writeFileSync(`${entry}.tmp`, JSON.stringify({ digest, files } satisfies FingerprintEntry));
      renameSync(`${entry}.tmp`, entry);
    }
    return { path, digest, files, source: dest };
  } catch (e) {
    await removeTree(tmp);
    throw e instanceof InfrastructureError
      ? e
      : new InfrastructureError(`cannot share the dependency folder ${src}: ${String(e)}`);
  }
}

/** Stamps a copy as just used (its `.used` file's mtime), so `gc` leaves it to a run about to record it. */
function markUsed(copy: string): void {
  writeFileSync(`${copy}.used`, "");
}

/** How long an unreferenced copy is kept after its last use: a run records its copy just after taking it. */
export const DEPENDENCY_GRACE_MS = 3_600_000;

/**
 * Removes the shared copies no kept run references (`referenced`: digests from their run_started) and not
 * used within DEPENDENCY_GRACE_MS, with their fingerprint entries. Returns the digests removed (or, with
 * dryRun, that would be).
 */
export async function pruneDependencies(
  localDir: string,
  referenced: ReadonlySet<string>,
  now: Date,
  dryRun: boolean,
): Promise<string[]> {
  const root = dependenciesDir(localDir);
  const gone = storedDependencies(localDir).filter((d) => {
    if (referenced.has(d)) return false;
    const used = lstatSync(join(root, `${d}.used`), { throwIfNoEntry: false })?.mtimeMs ?? 0;
    return now.getTime() - used >= DEPENDENCY_GRACE_MS;
  });
  if (dryRun || gone.length === 0) return gone;
  const index = join(root, "fingerprints");
  for (const f of existsSync(index) ? readdirSync(index) : []) {
    const e = readEntry(join(index, f));
    if (!e || gone.includes(e.digest)) await removeTree(join(index, f));
  }
  for (const d of gone) {
    await removeTree(join(root, d));
    await removeTree(join(root, `${d}.used`));
  }
  return gone;
}

function readEntry(file: string): FingerprintEntry | null {
  try {
    const v = JSON.parse(readFileSync(file, "utf8")) as Partial<FingerprintEntry>;
    return typeof v.digest === "string" && DIGEST.test(v.digest) && typeof v.files === "number"
      ? { digest: v.digest, files: v.files }
      : null;
  } catch {
    return null;
  }
}

/** The copies a resumed run recorded, which must still be in the store. */
export function recordedDependencies(
  records: readonly DependencyRecord[],
  localDir: string,
): SharedDependency[] {
  return records.map((r) => {
    const source = join(dependenciesDir(localDir), r.digest);
    if (!DIGEST.test(r.digest) || !existsSync(source))
      throw new InfrastructureError(
        `the shared copy ${r.digest} of the dependency folder ${r.path} is no longer in the store; start a new run`,
      );
    return { ...r, source };
  });
}

/** A copyTree filter that keeps each dependency folder itself (the mount point) and leaves its contents out. */
export function withoutDependencyFiles(paths: readonly string[]): (rel: string) => boolean {
  return (rel) => !paths.some((p) => rel.startsWith(`${p}/`));
}

/** Shared dependency folders are mounts: without bubblewrap there is nothing to mount them with. */
export function checkDependencySandbox(paths: readonly string[], sandbox: SandboxMode, where: string): void {
  if (paths.length && sandbox !== "bubblewrap")
    throw new InputError(
      `the task shares dependency folders (${paths.join(", ")}), which are mounted read-only into the bubblewrap sandbox; without a sandbox they cannot be: run with bubblewrap, or remove dependencies from the task`,
      where,
    );
}

/** The sandbox mounts of a run's dependencies inside the tree at `root` (a workspace or a gate environment). */
export function dependencyMounts(
  deps: readonly SharedDependency[],
  root: string,
): { source: string; target: string }[] {
  return deps.map((d) => ({ source: d.source, target: join(root, d.path) }));
}
