import { createHash } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { InputError } from "../../core/kernel/errors.js";
import type { Envelope } from "../../core/run/envelope.js";
import { isSubprocessGate } from "../../core/task/task.js";
import { type LockedGate, type PinnedIdentity, TaskLock } from "../../core/task/task-lock.js";
import { tamperCheckFor } from "../../gates/tamper/instrument.js";
import { listFiles } from "../../workspace/tree-files.js";
import type { LoadedTask } from "./load-task.js";

/** The lock file of a task file: `task.yaml` → `task.lock.json`, beside it. */
export function lockPathFor(taskFile: string): string {
  const name = basename(taskFile).replace(/\.(ya?ml|json)$/i, "");
  return join(dirname(taskFile), `${name}.lock.json`);
}

/**
 * The digest of the material the lock's identities and twins were recorded from: every file of every
 * held-out and canary folder the task's gates name, by path and content.
 */
export function materialDigest(loaded: LoadedTask): string {
  const h = createHash("sha256");
  const folders = new Set<string>();
  for (const g of loaded.task.gates)
    for (const key of ["heldout", "canary"] as const) {
      const p = (g as Partial<Record<typeof key, string>>)[key];
      if (typeof p === "string") folders.add(resolve(loaded.dir, p));
    }
  for (const folder of [...folders].sort()) {
    h.update(`folder\0${relative(loaded.dir, folder)}\0`);
    for (const f of listFiles(folder))
      h.update(`${f}\0`)
        .update(readFileSync(join(folder, f)))
        .update("\0");
  }
  return h.digest("hex");
}

/** What the lock beside a task file says for a run of it. */
export type LockReading =
  | { status: "ok"; lock: TaskLock; path: string; digest: string }
  | { status: "missing" | "stale" | "invalid"; path: string; why: string };

/** Reads and checks the lock beside a task file: present, well-formed, and recorded from this task file and held-out material. */
export function readTaskLock(loaded: LoadedTask): LockReading {
  const path = lockPathFor(loaded.file);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return { status: "missing", path, why: `no lock file ${path}` };
  }
  let parsed: TaskLock;
  try {
    const r = TaskLock.safeParse(JSON.parse(text));
    if (!r.success) {
      const issue = r.error.issues[0];
      return {
        status: "invalid",
        path,
        why: `${path}: ${issue?.path.join(".") || "(top)"}: ${issue?.message ?? "not a loopgate lock"}`,
      };
    }
    parsed = r.data;
  } catch (e) {
    return { status: "invalid", path, why: `${path}: not JSON (${(e as Error).message})` };
  }
  if (parsed.task_digest !== loaded.digest)
    return {
      status: "stale",
      path,
      why: `${path} was recorded for another version of ${basename(loaded.file)}`,
    };
  if (parsed.material_digest !== materialDigest(loaded))
    return { status: "stale", path, why: `${path} was recorded before the held-out or canary files changed` };
  const digest = createHash("sha256").update(text).digest("hex");
  return { status: "ok", lock: parsed, path, digest };
}

/**
 * What a new run pins in run_started: recording (task check's oracle run), or the valid lock's entries for
 * the task's subprocess gates. Without a valid lock the run is judged by count and canary as before, and
 * says so once (an InputError with `strict`).
 */
export function pinIdentity(
  loaded: LoadedTask,
  mode: "lock" | "record",
  options: { strict: boolean; reporter?: { note?(text: string): void } | undefined },
): PinnedIdentity | null {
  if (mode === "record") return { mode: "record" };
  const subprocess = loaded.task.gates.filter(isSubprocessGate);
  // Only gates whose runner loopgate reads per test can be judged by identity; without one a lock changes nothing.
  if (!subprocess.some((g) => tamperCheckFor(g).check === "auto")) return null;
  const reading = readTaskLock(loaded);
  if (reading.status !== "ok") {
    const what =
      reading.status === "missing"
        ? `no lock beside the task file (${reading.path})`
        : `the lock is ${reading.status}: ${reading.why}`;
    if (options.strict)
      throw new InputError(`${what}; run \`loopgate task check ${loaded.file}\` to record it`, reading.path);
    options.reporter?.note?.(
      `${what}: gates are judged by test count and canary, not by identity and mutated twins; ` +
        `run \`loopgate task check\` to record the lock`,
    );
    return null;
  }
  const gates: Record<string, LockedGate> = {};
  for (const g of subprocess) {
    const locked = reading.lock.gates[g.id];
    if (locked?.tests.length) gates[g.id] = locked;
  }
  return { mode: "lock", lock: { path: reading.path, digest: reading.digest }, gates };
}

/**
 * Writes the lock from the oracle's recording run: per gate, the tests it passed and the twins it
 * failed. Written whole to a temporary file and renamed, so a reader never sees half a lock.
 */
export function writeTaskLock(
  loaded: LoadedTask,
  oracle: Envelope,
  now: Date,
): { path: string; lock: TaskLock } {
  const gates: Record<string, LockedGate> = {};
  for (const g of loaded.task.gates.filter(isSubprocessGate)) {
    const run = oracle.gates.findLast((x) => x.id === g.id);
    const observed = run?.tamper?.observed;
    if (!run || !observed) continue;
    const twins: Record<string, { site: string; replacement: string }[]> = {};
    for (const t of observed.twins_failed) {
      const pool = twins[t.test] ?? [];
      if (pool.length < 16) pool.push({ site: t.site, replacement: t.replacement });
      twins[t.test] = pool;
    }
    gates[g.id] = {
      runner: run.tamper?.runner ?? null,
      tests: [...observed.passed].sort(),
      twins: Object.fromEntries(Object.entries(twins).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      untwinned: observed.untwinned,
    };
  }
  const lock: TaskLock = {
    loopgate_lock: 1,
    task_id: loaded.task.id,
    task_digest: loaded.digest,
    material_digest: materialDigest(loaded),
    oracle_run_id: oracle.run_id,
    recorded_at: now.toISOString(),
    gates,
  };
  const path = lockPathFor(loaded.file);
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(lock, null, 2)}\n`);
  renameSync(tmp, path);
  return { path, lock };
}
