import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { InfrastructureError } from "../core/kernel/errors.js";
import type { SandboxUser } from "./sandbox-user.js";

const run = promisify(execFile);

/**
 * Hands the folders a sandbox may write to its unprivileged user, before each sandboxed run: everything
 * under them not yet owned by that user (what loopgate copied, restored or wrote there since) is chowned,
 * so the builder can edit in place what it could edit as root.
 *
 * Hard links are the exception. A regular file with more than one link may share its inode with the
 * pristine copy or the content store; chowning it would hand that file to the sandbox user. Such a file
 * keeps its owner, and loses the write bit for others when root owns it, so the sandbox can replace it
 * in its own folder but never write through it. loopgate makes no such links in a writable folder
 * (writable gate environments and workspaces are real copies); the rule holds whoever made them.
 *
 * find(1) walks with `-execdir`, from inside each folder: a path component swapped for a symlink by a
 * process still running in the sandbox cannot redirect a chown outside the tree. Symlinks are chowned
 * themselves (`-h`), never followed; `-xdev` stays on the folder's filesystem.
 */
export async function handToSandboxUser(paths: readonly string[], user: SandboxUser): Promise<void> {
  const owner = `${user.uid}:${user.gid}`;
  for (const path of new Set(paths)) {
    if (!existsSync(path)) continue;
    // biome-ignore format: find's expression reads best one clause per line
    const expr = [
      "(", "-type", "f", "-links", "+1", ")", "(",
        "!", "-user", String(user.uid), "-perm", "-0002", "-execdir", "chmod", "o-w", "--", "{}", "+",
        "-o", "-true",
      ")",
      "-o",
      "(", "!", "-user", String(user.uid), "-o", "!", "-group", String(user.gid), ")",
      "-execdir", "chown", "-h", owner, "--", "{}", "+",
    ];
    try {
      await run("find", ["-P", path, "-xdev", ...expr], { env: { PATH: "/usr/bin:/bin" } });
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      throw new InfrastructureError(
        `cannot hand ${path} to the sandbox user (uid ${user.uid}): ${(err.stderr || err.message).trim().split("\n")[0]}`,
      );
    }
  }
}
