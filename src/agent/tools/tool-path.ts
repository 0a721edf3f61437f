import { lstatSync, readlinkSync, realpathSync, type Stats } from "node:fs";
import path from "node:path";
import { InfrastructureError } from "../../core/kernel/errors.js";
import { encodePathBytes, fsPath } from "../../core/kernel/path-bytes.js";
import { PathEscapeError, resolveInside } from "../../workspace/safe-path.js";

/** A model-given path, resolved and checked against the workspace before any tool touches it. */
export interface ToolPath {
  /** Absolute real path: every existing component resolved, no symlink left in it. */
  abs: string;
  /** The workspace's real path: what the file operations open and the sandbox mounts. */
  workspace: string;
  /** The path relative to the workspace, for messages ("." for the workspace itself). */
  display: string;
}

// The look-ups below are synchronous: a few system calls on a local folder take microseconds, while each
// trip through libuv's thread pool costs tens of them, and a file tool call makes several.

/** The real path of the workspace; an InfrastructureError if it is gone. */
export async function realWorkspace(workspace: string): Promise<string> {
  try {
    return realpathSync.native(workspace);
  } catch (e) {
    throw new InfrastructureError(
      `workspace ${workspace} cannot be resolved (${(e as NodeJS.ErrnoException).code})`,
      { cause: e },
    );
  }
}

function isInside(root: string, p: string): boolean {
  return p === root || p.startsWith(`${root}/`);
}

/** realpath(3) of an encoded path (core/kernel/path-bytes.ts), encoded back: names that are not UTF-8 survive. */
function realpathBytes(p: string): string {
  return encodePathBytes(realpathSync.native(fsPath(p), { encoding: "buffer" }));
}

/** lstat of an encoded path, or null when it cannot be had (nothing there, a file named as a folder, no access). */
export function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(fsPath(p));
  } catch {
    return null;
  }
}

/**
 * Resolves `rel` inside the workspace in-process, before anything runs. Refuses (PathEscapeError)
 * absolute paths, `..` escapes, NUL bytes, an existing part that resolves outside the workspace,
 * and a dangling symlink on the way: writing through it would create its target, wherever that is.
 * A symlink whose target stays inside is resolved here, once; the file operations then open the
 * result without following any symlink (confined-fs.ts), so one swapped in later is refused, not followed.
 */
export async function resolveToolPath(workspace: string, rel: string): Promise<ToolPath> {
  const ws = await realWorkspace(workspace);
  const parts = path.relative(ws, resolveInside(ws, rel)).split("/").filter(Boolean);
  let abs = path.join(ws, ...parts);
  // The longest existing prefix is the only part that can hold symlinks; the rest will be created plainly.
  for (let n = parts.length; n >= 0; n--) {
    let real: string;
    try {
      real = realpathBytes(path.join(ws, ...parts.slice(0, n)));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") continue;
      throw e;
    }
    if (!isInside(ws, real)) throw new PathEscapeError(ws, rel, `it resolves to ${real}`);
    abs = path.join(real, ...parts.slice(n));
    break;
  }
  // The part of `abs` past the longest real prefix did not resolve: its first entry must not exist at all.
  for (let p = abs; p !== ws && p.startsWith(`${ws}/`); p = path.dirname(p)) {
    const st = lstatOrNull(p);
    if (!st) continue;
    if (st.isSymbolicLink()) {
      let target = "?";
      try {
        target = encodePathBytes(readlinkSync(fsPath(p), { encoding: "buffer" }));
      } catch {
        // removed meanwhile: the refusal stands without its target
      }
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
