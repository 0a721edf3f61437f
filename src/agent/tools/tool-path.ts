import { lstat, readlink, realpath } from "node:fs/promises";
import path from "node:path";
import { InfrastructureError } from "../../core/errors.js";
import { assertRealpathInside, PathEscapeError } from "../../workspace/safe-path.js";

/** A model-given path, resolved and checked against the workspace before any tool touches it. */
export interface ToolPath {
  /** Absolute real path: every existing component resolved, no symlink left in it. */
  abs: string;
  /** The workspace's real path: what the sandbox mounts. */
  workspace: string;
  /** The path relative to the workspace, for messages ("." for the workspace itself). */
  display: string;
}

/** The real path of the workspace; an InfrastructureError if it is gone. */
export async function realWorkspace(workspace: string): Promise<string> {
  return realpath(workspace).catch((e: unknown) => {
    throw new InfrastructureError(
      `workspace ${workspace} cannot be resolved (${(e as NodeJS.ErrnoException).code})`,
      { cause: e },
    );
  });
}

/**
 * Resolves `rel` inside the workspace in-process, before anything runs. Refuses (PathEscapeError)
 * absolute paths, `..` escapes, NUL bytes, an existing part that resolves outside the workspace,
 * and a dangling symlink on the way: writing through it would create its target, wherever that is.
 * The returned path has no symlinks in its existing part, so a tool that uses it cannot be redirected.
 */
export async function resolveToolPath(workspace: string, rel: string): Promise<ToolPath> {
  const ws = await realWorkspace(workspace);
  const abs = await assertRealpathInside(ws, rel);
  // The part of `abs` past the longest real prefix did not resolve: its first entry must not exist at all.
  for (let p = abs; p !== ws && p.startsWith(`${ws}/`); p = path.dirname(p)) {
    const st = await lstat(p).catch(() => null);
    if (!st) continue;
    if (st.isSymbolicLink()) {
      const target = await readlink(p).catch(() => "?");
      throw new PathEscapeError(
        ws,
        rel,
        `${path.relative(ws, p)} is a symlink to ${target}, which does not exist; use the target's own path`,
      );
    }
    break;
  }
  return { abs, workspace: ws, display: path.relative(ws, abs) || "." };
}
