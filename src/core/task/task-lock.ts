import { z } from "zod";
import { MAX_RECORDED_TESTS } from "./gate-tamper.js";

const testId = z.string().min(1).max(2000);

/** A twin a later run may draw for a test: the literal to change and the wrong value the oracle failed on. */
export const LockedTwin = z.object({
  site: z.string().min(1).max(64),
  replacement: z.string().min(1).max(2000),
});
export type LockedTwin = z.infer<typeof LockedTwin>;

/** What `loopgate task check` recorded for one subprocess gate. */
export const LockedGate = z.object({
  /** The runner loopgate recognised, or null when it could not read per-test results. */
  runner: z.string().nullable(),
  /** Every test the oracle passed, by identity (`file::Suite::name`): each must pass in later runs. */
  tests: z.array(testId).max(MAX_RECORDED_TESTS),
  /** Per held-out test: the twins the oracle failed; each run draws one per test from these. */
  twins: z.record(testId, z.array(LockedTwin).min(1).max(16)),
  /** Why some tests have no twin (no literal expected value, a language loopgate cannot rewrite, …). */
  untwinned: z.array(z.string().max(500)).max(200),
});
export type LockedGate = z.infer<typeof LockedGate>;

/** The lock file beside a task file (`task.lock.json` for `task.yaml`): reviewable, committed with the task. */
export const TaskLock = z.object({
  loopgate_lock: z.literal(1),
  task_id: z.string().min(1),
  /** The task file's digest: the lock is stale when the task file changes. */
  task_digest: z.string().regex(/^[0-9a-f]{64}$/),
  /** The digest of every held-out and canary folder the gates name: stale when a held-out test changes. */
  material_digest: z.string().regex(/^[0-9a-f]{64}$/),
  oracle_run_id: z.string().min(1),
  recorded_at: z.string(),
  gates: z.record(z.string(), LockedGate),
});
export type TaskLock = z.infer<typeof TaskLock>;

/** How a gate run is judged by identity: enforcing the lock's entry for it, or recording one. */
export type GateIdentity = { mode: "enforce"; gate: LockedGate } | { mode: "record" };

/** What run_started pins: recording, or the lock's entries (with the lock's path and digest) that every attempt and resume enforces. */
export const PinnedIdentity = z.discriminatedUnion("mode", [
  z.object({ mode: z.literal("record") }),
  z.object({
    mode: z.literal("lock"),
    lock: z.object({ path: z.string().max(4096), digest: z.string().regex(/^[0-9a-f]{64}$/) }),
    gates: z.record(z.string(), LockedGate),
  }),
]);
export type PinnedIdentity = z.infer<typeof PinnedIdentity>;

/** A gate's identity rule under what run_started pinned: recording, the lock's entry for it, or none. */
export function gateIdentity(pinned: PinnedIdentity | null, gateId: string): GateIdentity | null {
  if (!pinned) return null;
  if (pinned.mode === "record") return { mode: "record" };
  const gate = pinned.gates[gateId];
  return gate ? { mode: "enforce", gate } : null;
}
