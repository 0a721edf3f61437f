import { isAbsolute, relative, resolve } from "node:path";
import { InputError } from "../../core/kernel/errors.js";
import type { RunFlags } from "../../runner/host/run-flags.js";
import { checkUserMounts, mountGuards } from "../../runner/run/context/builder-mounts.js";
import type { LoadedTask } from "../../runner/task-source/load-task.js";
import type { SandboxMode } from "../../sandbox/bubblewrap.js";
import { storeFrom } from "../output/context.js";

/** Validates the options that reach the runner; a mount may never expose held-out material or the log. */
export function runSettings(loaded: LoadedTask, flags: RunFlags) {
  const store = storeFrom(flags.store);
  const localDir = store.dir;
  refuseStoreInWork(localDir, loaded.workspace, "the task's workspace");
  if (flags.workspace !== undefined) refuseStoreInWork(localDir, resolve(flags.workspace), "--workspace");
  const mounts = (flags["builder-mount"] ?? []).map((m) => resolve(m));
  checkUserMounts(mounts, mountGuards(loaded, localDir));
  for (const name of flags["builder-env"] ?? [])
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new InputError(`${JSON.stringify(name)} is not an environment variable name`, "--builder-env");
  const maxAttempts = flags["max-attempts"];
  const sandbox: SandboxMode = flags["unsafe-no-sandbox"] ? "none" : "bubblewrap";
  return { store, localDir, mounts, maxAttempts, sandbox };
}

/**
 * A store inside the work would be copied into its own runs and reachable by the builder: refused, with
 * where to run from instead (the default store is found from the current folder).
 */
function refuseStoreInWork(localDir: string, work: string, what: string): void {
  const rel = relative(work, localDir);
  if (rel === "" || (!rel.startsWith("..") && !isAbsolute(rel)))
    throw new InputError(
      `the store ${localDir} lies inside ${what} ${work}, where the builder could reach it and every run would copy it; run from a folder outside it, or pass --store DIR`,
      "--store",
    );
}
