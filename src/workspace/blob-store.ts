import { execFile, spawn } from "node:child_process";
import { closeSync, constants, existsSync, openSync } from "node:fs";
import { chmod, copyFile, lstat, mkdir, rename, rm, stat, symlink } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { InfrastructureError } from "../core/kernel/errors.js";
import { fsPath, pathText } from "../core/kernel/path-bytes.js";
import { comparePaths, type Observation } from "../core/observation/observation.js";
import { keptMode } from "./copy-tree.js";
import { WorkspaceObserver } from "./observer.js";

/**
 * Content-addressed copies of observed files (`<dir>/<sha256>`), so the workspace can be rolled back to
 * any recorded observation. Blobs are never modified. Blobs are mode 0600 and a restored file never gets
 * back a set-uid, set-gid or sticky bit, even when the observation recorded one.
 */
export class BlobStore {
  constructor(private readonly dir: string) {}

  /** Where the blob of `hash` is kept (whether or not it is there). */
  fileOf(hash: string): string {
    return join(this.dir, hash.slice(0, 2), hash);
  }

  /** Keeps a copy of every file of `obs` (read from `root`) that the store does not hold yet. */
  async save(obs: Observation, root: string): Promise<number> {
    let saved = 0;
    const made = new Set<string>();
    for (const e of obs.entries) {
      if (e.type !== "file") continue;
      const dest = this.fileOf(e.hash);
      if (existsSync(dest)) continue;
      const fan = e.hash.slice(0, 2);
      if (!made.has(fan)) await mkdir(join(this.dir, fan), { recursive: true });
      made.add(fan);
      const tmp = `${dest}.${process.pid}.tmp`;
      // A copy, not a link: the agent may still write to the workspace file later.
      await copySparse(fsPath(join(root, e.path)), tmp);
      // A blob is content only: owner-readable, never executable, never set-uid.
      await chmod(tmp, 0o600);
      await rename(tmp, dest);
      saved++;
    }
    return saved;
  }

  /**
   * Makes `root` hold exactly what `obs` recorded: extra paths removed, changed files rewritten.
   * `current` is what `root` holds, when the caller knows (a freshly reset overlay holds its pristine).
   */
  async restore(
    obs: Observation,
    root: string,
    current?: Observation,
  ): Promise<{ removed: number; written: number }> {
    const now = current ?? (await new WorkspaceObserver(root).observe());
    const want = new Map(obs.entries.map((e) => [e.path, e]));
    const have = new Map(now.entries.map((e) => [e.path, e]));
    let removed = 0;
    let written = 0;
    // Remove what should not be there, or is of another kind (deepest first).
    const extra = now.entries
      .filter((e) => {
        const w = want.get(e.path);
        return !w || w.type !== e.type || (e.type === "symlink" && w.target !== e.target);
      })
      .map((e) => e.path)
      .sort((a, b) => comparePaths(b, a));
    for (const p of extra) {
      await rm(fsPath(join(root, p)), { recursive: true, force: true });
      have.delete(p);
      removed++;
    }
    for (const e of obs.entries) {
      // Encoded paths (path-bytes.ts): a name that is not UTF-8 is restored by its raw bytes.
      const abs = fsPath(join(root, e.path));
      const h = have.get(e.path);
      if (e.type === "dir") {
        if (!h) await mkdir(abs, { recursive: true });
        // Not when already so: on an overlay even a chmod to the same mode copies the folder up.
        if (h?.mode !== keptMode(e.mode)) await chmod(abs, keptMode(e.mode));
      } else if (e.type === "symlink") {
        if (!h) await symlink(fsPath(e.target ?? ""), abs);
      } else if (e.type === "file") {
        if (h && h.hash === e.hash && h.mode === keptMode(e.mode)) continue;
        const blob = this.fileOf(e.hash);
        if (!existsSync(blob))
          throw new InfrastructureError(`cannot roll back ${e.path}: no stored copy of ${e.hash}`);
        await rm(abs, { force: true });
        await copySparse(blob, abs);
        await chmod(abs, keptMode(e.mode));
        written++;
      }
    }
    return { removed, written };
  }
}

const execFileAsync = promisify(execFile);

/**
 * Copies a file; one with holes (fewer blocks allocated than its size needs) keeps them, through
 * `cp --sparse=always`, since Node's copyFile writes every zero and a 1 GiB sparse file the builder made
 * for free would cost a full GiB of disk at each copy.
 */
export async function copySparse(from: string | Buffer, to: string | Buffer): Promise<void> {
  const st = await stat(from);
  if (st.blocks * 512 >= st.size) return copyFile(from, to);
  try {
    if (typeof from === "string" && typeof to === "string")
      await execFileAsync("cp", ["--sparse=always", "--", from, to], { env: { PATH: "/usr/bin:/bin" } });
    else await copySparseByDescriptors(from, to);
  } catch (e) {
    throw new InfrastructureError(`cannot copy ${pathText(from)} keeping its holes`, { cause: e });
  }
}

/**
 * cp(1) with a path that is not UTF-8 (an argument is a string): both files are opened here, by their
 * bytes, and cp copies its standard input to its standard output, which are those files.
 */
async function copySparseByDescriptors(from: string | Buffer, to: string | Buffer): Promise<void> {
  const src = openSync(from, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  let dst: number | undefined;
  try {
    dst = openSync(
      to,
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
      0o600,
    );
    const out = dst;
    await new Promise<void>((resolve, reject) => {
      const child = spawn("cp", ["--sparse=always", "--", "/dev/stdin", "/dev/stdout"], {
        env: { PATH: "/usr/bin:/bin" },
        stdio: [src, out, "pipe"],
      });
      let err = "";
      child.stderr?.on("data", (d: Buffer) => {
        err += d.toString();
      });
      child.on("error", reject);
      child.on("close", (code, signal) =>
        code === 0 ? resolve() : reject(new Error(`cp exited ${code ?? signal}: ${err.slice(0, 500)}`)),
      );
    });
  } finally {
    closeSync(src);
    if (dst !== undefined) closeSync(dst);
  }
}

/** True when `path` exists without following a final symlink. */
export async function existsNoFollow(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}
