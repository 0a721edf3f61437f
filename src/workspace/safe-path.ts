import { lstatSync, mkdirSync, rmSync } from "node:fs";
import { realpath } from "node:fs/promises";
import path from "node:path";
import { InfrastructureError, LoopgateError } from "../core/kernel/errors.js";
import { fsPath } from "../core/kernel/path-bytes.js";

/** A path that would resolve outside the root it must stay in (`..`, absolute, NUL, or a symlink on the way). */
export class PathEscapeError extends LoopgateError {
  readonly root: string;
  readonly path: string;
  constructor(root: string, rel: string, why: string) {
    super("path_escape", `path ${JSON.stringify(rel)} escapes ${root}: ${why}`);
    this.root = root;
    this.path = rel;
  }
}

/** Splits a relative path into its normal components, rejecting anything that could leave the root lexically. */
function components(root: string, rel: string): string[] {
  if (rel.includes("\0")) throw new PathEscapeError(root, rel, "it contains a NUL byte");
  if (path.isAbsolute(rel)) throw new PathEscapeError(root, rel, "it is absolute");
  const parts: string[] = [];
  for (const part of rel.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) throw new PathEscapeError(root, rel, "it climbs above the root with '..'");
      parts.pop();
    } else {
      parts.push(part);
    }
  }
  return parts;
}

/** Resolves `rel` under `root` lexically; throws PathEscapeError for absolute paths, `..` escapes and NUL bytes. */
export function resolveInside(root: string, rel: string): string {
  return path.join(path.resolve(root), ...components(root, rel));
}

function isInside(root: string, p: string): boolean {
  const r = path.relative(root, p);
  return r === "" || (r !== ".." && !r.startsWith("../") && !path.isAbsolute(r));
}

/**
 * Resolves `rel` under `root` following the symlinks of the part that exists, and throws
 * PathEscapeError if the real location leaves the real root. Returns the resolved path.
 */
export async function assertRealpathInside(root: string, rel: string): Promise<string> {
  const parts = components(root, rel);
  const realRoot = await realpath(root).catch((e: unknown) => {
    throw new InfrastructureError(`root ${root} cannot be resolved (${(e as NodeJS.ErrnoException).code})`, {
      cause: e,
    });
  });
  // Find the longest existing prefix: only it can contain symlinks; the rest will be created as plain entries.
  for (let n = parts.length; n >= 0; n--) {
    let real: string;
    try {
      real = await realpath(path.join(realRoot, ...parts.slice(0, n)));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") continue;
      throw e;
    }
    if (!isInside(realRoot, real)) throw new PathEscapeError(root, rel, `it resolves to ${real}`);
    return path.join(real, ...parts.slice(n));
  }
  return path.join(realRoot, ...parts);
}

/**
 * Creates `relDir` under `root` one component at a time, never following a symlink. An existing
 * component that is a symlink or not a directory is refused (PathEscapeError), or, with
 * `replace`, removed and replaced by a directory (used when the caller's content must win).
 * Synchronous; returns the absolute directory path.
 */
export function mkdirInside(
  root: string,
  relDir: string,
  options?: { replace?: boolean; mode?: number },
): string {
  let current = path.resolve(root);
  for (const part of components(root, relDir)) {
    current = path.join(current, part);
    const st = lstatSync(fsPath(current), { throwIfNoEntry: false });
    if (st?.isDirectory()) continue;
    if (st) {
      const what = st.isSymbolicLink() ? "a symlink" : "not a directory";
      if (!options?.replace)
        throw new PathEscapeError(root, relDir, `${path.relative(root, current)} is ${what}`);
      rmSync(fsPath(current), { recursive: true, force: true });
    }
    // mkdir never follows a symlink at the final component: if one appeared meanwhile, it fails with EEXIST.
    mkdirSync(fsPath(current), { mode: options?.mode ?? 0o755 });
  }
  return current;
}
