import { z } from "zod";
import { LIMITS } from "../kernel/bounded.js";
import { declareEvent, type EventArea } from "../kernel/event-area.js";
import {
  attempt,
  BuilderDescriptor,
  excerpt,
  Finding,
  GateDeclaration,
  GateError,
  LeaseOwner,
  PathList,
  RunStatus,
  Timestamp,
} from "../kernel/event-parts.js";
import { GateTamper } from "../task/gate-tamper.js";
import { PinnedIdentity } from "../task/task-lock.js";

/** The run: attempts, the builder, observations, gates, the verdict, resumes and the lease. */
export const runEvents = {
  run_started: declareEvent(["runtime"], () =>
    z.object({
      task_id: z.string(),
      task_path: z.string(),
      task_digest: z.string(),
      builder: BuilderDescriptor,
      max_attempts: z.number().int().positive(),
      gates: z.array(GateDeclaration).min(1),
      sandbox: z.enum(["bubblewrap", "none"]),
      run_dir: z.string(),
      /** The user's `--builder-mount` paths: a resume mounts them again, and checks them again first. */
      builder_mounts: z.array(z.string()).optional(),
      /** The judge's model when the task configures one: an attempt then also needs its approval. */
      judge: z.string().optional(),
      /** The fewest real tests each subprocess gate must see pass, fixed when the run starts (resume keeps them). */
      test_floors: z
        .record(
          z.string(),
          z.object({
            min: z.number().int().positive(),
            source: z.enum(["declared", "task_check", "default"]),
          }),
        )
        .optional(),
      /** How subprocess gates are judged by identity: the task's lock (pinned whole, so resumes judge alike) or recording one. */
      identity: PinnedIdentity.optional(),
      /** Set only for the forgery benchmark's baseline runs: their gates did not see a pristine tree. */
      gate_environment: z.literal("as-built").optional(),
      /** The task's shared dependency folders: each one's content address in the store, fixed for the run (resume mounts the same). */
      dependencies: z
        .array(
          z.object({
            path: z.string().max(4096),
            digest: z.string().regex(/^[0-9a-f]{64}$/),
            files: z.number().int().nonnegative(),
          }),
        )
        .optional(),
      /** Set when the run is a goal todo's: the goal and the workspace revision (commit) it started from. */
      goal: z
        .object({ id: z.string().min(1).max(128), revision: z.string().regex(/^[0-9a-f]{40,64}$/) })
        .optional(),
    }),
  ),
  workspace_observed: declareEvent(["runtime"], () =>
    z.object({
      attempt: z.number().int().nonnegative(),
      phase: z.enum(["pristine", "after_builder"]),
      observation_id: z.string(),
      entries: z.number().int().nonnegative(),
      duration_ms: z.number().nonnegative(),
    }),
  ),
  attempt_started: declareEvent(["runtime"], () =>
    z.object({ attempt, required_fix: z.string().max(LIMITS.requiredFix).nullable() }),
  ),
  builder_finished: declareEvent(["runtime"], () =>
    z.object({
      attempt,
      exit_code: z.number().int().nullable(),
      signal: z.string().nullable(),
      timed_out: z.boolean(),
      duration_ms: z.number().nonnegative(),
      output_excerpt: excerpt,
    }),
  ),
  workspace_changed: declareEvent(["runtime"], () =>
    z.object({
      attempt,
      added: PathList,
      modified: PathList,
      removed: PathList,
      type_changed: PathList,
    }),
  ),
  finding_recorded: declareEvent(["runtime"], () => Finding),
  /** What the builder said it did: a claim, never evidence. */
  claim_recorded: declareEvent(["model"], () =>
    z.object({
      attempt,
      origin: z.literal("model"),
      text: z.string().max(LIMITS.claim),
      hedged: z.boolean(),
    }),
  ),
  gate_run_finished: declareEvent(["gate"], () =>
    z.object({
      attempt,
      gate_id: z.string(),
      passed: z.boolean(),
      exit_code: z.number().int().nullable(),
      timed_out: z.boolean(),
      error: GateError.nullable(),
      duration_ms: z.number().nonnegative(),
      log_excerpt: excerpt,
      summary: z.string().max(LIMITS.detail),
      /** A differential gate's generator seed, drawn at gate time. */
      seed: z.number().int().nonnegative().optional(),
      tamper: GateTamper.optional(),
      /**
       * The gate-change plan the gate's environment was built from (core/observation/gate-change-digest.ts); a goal
       * writes back only that. Absent in runs recorded before it was, and under a benchmark's as-built policy.
       */
      change_plan_digest: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .optional(),
    }),
  ),
  attempt_finished: declareEvent(["runtime"], () => z.object({ attempt, passed: z.boolean() })),
  required_fix_issued: declareEvent(["runtime"], () =>
    z.object({ attempt, text: z.string().max(LIMITS.requiredFix) }),
  ),
  infrastructure_failed: declareEvent(["runtime"], () =>
    z.object({
      attempt: z.number().int().nonnegative(),
      reason: z.string().max(LIMITS.reason),
      /** The user interrupted the run (Ctrl-C, SIGTERM): `loopgate resume` may reopen it. */
      interrupted: z.boolean().optional(),
    }),
  ),
  run_finished: declareEvent(["runtime"], () =>
    z.object({ status: RunStatus, reason: z.string().max(LIMITS.reason) }),
  ),
  run_resumed: declareEvent(["runtime"], () =>
    z.object({
      from_revision: z.number().int().nonnegative(),
      in_doubt: z.array(z.string()),
      action: z.string().max(2000),
      /** The run had finished as interrupted; this resume reopened it (its interruption no longer counts). */
      reopened: z.boolean().optional(),
    }),
  ),
  /**
   * The process now driving the run (see core/run/run-lease.ts). `previous` is the lease it took over, and why:
   * it had expired, or its owner's process was gone on this host. Appended with the expected revision, so
   * two processes can never both take it.
   */
  run_lease_taken: declareEvent(["runtime"], () =>
    z.object({
      owner: LeaseOwner,
      expires_at: Timestamp,
      previous: LeaseOwner.extend({
        expires_at: Timestamp,
        reason: z.enum(["expired", "owner_gone"]),
      }).nullable(),
    }),
  ),
  /** The owner's heartbeat: its lease now runs until `expires_at`. Rare (every 10 s by default). */
  run_lease_renewed: declareEvent(["runtime"], () =>
    z.object({
      token: z.string().min(1).max(128),
      expires_at: Timestamp,
    }),
  ),
  /**
   * `loopgate task check` proved the gates with the oracle: how many real tests each gate saw pass.
   * Later runs of the same task file (same digest) take these as their test floors. Own stream per task.
   */
  task_checked: declareEvent(["runtime"], () =>
    z.object({
      task_id: z.string(),
      task_digest: z.string(),
      oracle_run_id: z.string(),
      gates: z.array(
        z.object({ gate_id: z.string(), tests_passed: z.number().int().nonnegative().nullable() }),
      ),
    }),
  ),
} as const satisfies EventArea;
