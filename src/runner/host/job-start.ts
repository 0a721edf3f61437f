import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { CorruptEventError, DomainError, InputError } from "../../core/kernel/errors.js";
import { ContentCorruptError, ContentMissingError } from "../../store/kernel/content-store.js";
import { StoreError } from "../../store/kernel/store-errors.js";
import { TaskSnapshotError } from "../task-source/snapshot-store.js";

// Whose fault it is when a worker cannot start a job it claimed. The two are handled oppositely, so the
// line between them is drawn here and nowhere else: a job whose TASK is bad fails alike on every worker
// and is finished as refused; a job THIS MACHINE cannot start (its folder, its disk, a missing tool or
// key, the sandbox self-test) may run anywhere else, so it is handed back unclaimed with the reason.

/** True when the error means the store itself could not be reached (the worker stops, as for a lost database). */
export function isStoreUnreachable(e: unknown): boolean {
  return e instanceof StoreError;
}

/** A job this worker could not start for a reason of its own machine: it goes back to the queue. */
export class LocalStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "LocalStartError";
  }
}

/**
 * What an error raised while starting a job (before its run's first event) means: `store` (the database
 * is gone: the worker stops, as for any lost database), `task` (the task or what the store keeps of the
 * job is bad: every worker would fail alike), or `local` (this machine). `taskDir`: the task's folder once
 * it is loaded, null while the task itself is being read (then every input error is about the task).
 * Submit checked the run options already, so an input error that names no file of the task (an API key
 * that is not set, a scripted file absent) is a difference of this machine.
 */
export function startFault(e: unknown, taskDir: string | null): "store" | "task" | "local" {
  if (isStoreUnreachable(e)) return "store";
  if (e instanceof LocalStartError) return "local";
  if (
    e instanceof TaskSnapshotError ||
    e instanceof ContentMissingError ||
    e instanceof ContentCorruptError ||
    e instanceof CorruptEventError ||
    e instanceof DomainError
  )
    return "task";
  if (e instanceof InputError) return taskDir === null || namesPathIn(e.where, taskDir) ? "task" : "local";
  return "local";
}

/** True when an input error's `where` (`PATH` or `PATH: field`) is a path inside `dir`. */
function namesPathIn(where: string | undefined, dir: string): boolean {
  if (where === undefined) return false;
  const root = resolve(dir);
  return where === root || where.startsWith(`${root}/`) || where.startsWith(`${root}:`);
}

/**
 * Runs one step of starting a job and classifies what it throws (startFault): a local failure becomes a
 * LocalStartError naming the reason; a task's fault or a lost database is rethrown unchanged.
 */
export async function startStep<T>(taskDir: string | null, step: () => Promise<T> | T): Promise<T> {
  try {
    return await step();
  } catch (e) {
    throw startFault(e, taskDir) === "local" && !(e instanceof LocalStartError)
      ? new LocalStartError(e instanceof Error ? e.message : String(e), { cause: e })
      : e;
  }
}

/**
 * Proves this worker can write its folder (creating it if need be) before a job relies on it: a path
 * that is a file, a folder it may not write, a full disk are this machine's, named in the reason.
 */
export function usableFolder(dir: string): void {
  const abs = resolve(dir);
  try {
    mkdirSync(abs, { recursive: true });
    if (!statSync(abs).isDirectory()) throw new Error("not a directory");
    const probe = join(abs, `.loopgate-probe-${randomBytes(4).toString("hex")}`);
    writeFileSync(probe, "probe\n", { flag: "wx", mode: 0o600 });
    rmSync(probe, { force: true });
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new LocalStartError(`the work folder ${abs} is not usable: ${why}`, { cause: e });
  }
}
