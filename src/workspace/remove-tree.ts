import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { unmountAllUnder } from "./overlay-mount.js";

/**
 * Removes a folder a sandboxed process wrote into (a gate environment, a differential case's tree, a
 * run folder), however deep or odd it is. Node's `rm` walks by whole paths and fails on a chain deeper
 * than PATH_MAX (ENAMETOOLONG), which code under test can build in a moment; GNU `rm` walks with
 * `openat` at any depth, and `chmod -R u+rwX` first undoes modes that would refuse an unprivileged
 * caller. An overlay workspace mounted inside (a run folder) is unmounted first, so nothing is
 * removed through it. Throws only when the folder is still there afterwards, naming it and why.
 */
export async function removeTree(path: string): Promise<void> {
  unmountAllUnder(path);
  try {
    await rm(path, { recursive: true, force: true });
    return;
  } catch (e) {
    fallback(path, e as Error);
  }
}

/** removeTree, synchronously (for cleanups that run in a `finally` of synchronous code). */
export function removeTreeSync(path: string): void {
  unmountAllUnder(path);
  try {
    rmSync(path, { recursive: true, force: true });
  } catch (e) {
    fallback(path, e as Error);
  }
}

function fallback(path: string, first: Error): void {
  spawnSync("chmod", ["-R", "u+rwX", "--", path], { stdio: "ignore" });
  const r = spawnSync("rm", ["-rf", "--one-file-system", "--", path], { encoding: "utf8" });
  if (existsSync(path))
    throw new Error(
      `cannot remove ${path}: ${(r.stderr || r.error?.message || first.message).trim().split("\n")[0]}`,
    );
}
