import { z } from "zod";
import { LIMITS } from "./bounded.js";
import { GateTamper } from "./gate-tamper.js";
import { SelfCheckPlan, SelfCheckSubmission } from "./self-check/schemas.js";

export { GateTamper } from "./gate-tamper.js";

import {
  BuilderDescriptor,
  Finding,
  GateDeclaration,
  GateError,
  LeaseOwner,
  Origin,
  PathList,
  RunStatus,
} from "./event-parts.js";

export {
  BuilderDescriptor,
  Finding,
  FindingSeverity,
  GateDeclaration,
  GateError,
  LeaseOwner,
  Origin,
  PathList,
  RunStatus,
} from "./event-parts.js";

const attempt = z.number().int().positive();
const excerpt = z.string().max(16_384);

const data = {
  run_started: z.object({
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
        z.object({ min: z.number().int().positive(), source: z.enum(["declared", "task_check", "default"]) }),
      )
      .optional(),
    /** Set only for the forgery benchmark's baseline runs: their gates did not see a pristine tree. */
    gate_environment: z.literal("as-built").optional(),
  }),
  workspace_observed: z.object({
    attempt: z.number().int().nonnegative(),
    phase: z.enum(["pristine", "after_builder"]),
    observation_id: z.string(),
    entries: z.number().int().nonnegative(),
    duration_ms: z.number().nonnegative(),
  }),
  attempt_started: z.object({ attempt, required_fix: z.string().max(LIMITS.requiredFix).nullable() }),
  builder_finished: z.object({
    attempt,
    exit_code: z.number().int().nullable(),
    signal: z.string().nullable(),
    timed_out: z.boolean(),
    duration_ms: z.number().nonnegative(),
    output_excerpt: excerpt,
  }),
  workspace_changed: z.object({
    attempt,
    added: PathList,
    modified: PathList,
    removed: PathList,
    type_changed: PathList,
  }),
  finding_recorded: Finding,
  claim_recorded: z.object({
    attempt,
    origin: z.literal("model"),
    text: z.string().max(LIMITS.claim),
    hedged: z.boolean(),
  }),
  gate_run_finished: z.object({
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
  }),
  attempt_finished: z.object({ attempt, passed: z.boolean() }),
  required_fix_issued: z.object({ attempt, text: z.string().max(LIMITS.requiredFix) }),
  infrastructure_failed: z.object({
    attempt: z.number().int().nonnegative(),
    reason: z.string().max(LIMITS.reason),
    /** The user interrupted the run (Ctrl-C, SIGTERM): `loopgate resume` may reopen it. */
    interrupted: z.boolean().optional(),
  }),
  run_finished: z.object({ status: RunStatus, reason: z.string().max(LIMITS.reason) }),
  // The built-in agent. Everything the loop does is one of these, appended before it is acted on.
  goal_set: z.object({
    attempt,
    condition: z.string().nullable(),
    predicates: z.array(z.record(z.string(), z.string())).min(1),
    max_turns: z.number().int().positive(),
  }),
  model_responded: z.object({
    attempt,
    turn: z.number().int().positive(),
    step: z.number().int().positive(),
    text: z.string().max(100_000),
    tool_calls: z.array(z.object({ id: z.string(), name: z.string(), args: z.unknown() })),
    input_tokens: z.number().int().nonnegative(),
    output_tokens: z.number().int().nonnegative(),
    cost_usd: z.number().nonnegative().nullable(),
    finish_reason: z.string(),
  }),
  model_failed: z.object({
    attempt,
    turn: z.number().int().positive(),
    step: z.number().int().positive(),
    kind: z.string(),
    message: z.string().max(4000),
    retryable: z.boolean(),
    retry: z.number().int().nonnegative(),
    backoff_ms: z.number().int().nonnegative().nullable(),
  }),
  tool_call_started: z.object({
    attempt,
    turn: z.number().int().positive(),
    call_id: z.string(),
    name: z.string(),
    args: z.unknown(),
    mutating: z.boolean(),
  }),
  tool_call_finished: z.object({
    attempt,
    call_id: z.string(),
    name: z.string(),
    valid: z.boolean(),
    is_error: z.boolean(),
    exit_code: z.number().int().nullable(),
    subject: z.string().max(20_000),
    content: z.string().max(40_000),
    duration_ms: z.number().nonnegative(),
  }),
  tool_call_abandoned: z.object({ attempt, call_id: z.string(), reason: z.string().max(2000) }),
  workspace_touched: z.object({ attempt, call_id: z.string(), observation_id: z.string() }),
  goal_probed: z.object({
    attempt,
    turn: z.number().int().positive(),
    predicate: z.record(z.string(), z.string()),
    holds: z.boolean(),
    detail: z.string().max(2000),
  }),
  goal_evaluated: z.object({
    attempt,
    turn: z.number().int().positive(),
    outcome: z.enum(["completed", "continuing", "blocked"]),
    unmet: z.array(z.string()),
    reason: z.string().max(2000),
  }),
  continuation_queued: z.object({ attempt, turn: z.number().int().positive(), text: z.string().max(4000) }),
  budget_exhausted: z.object({
    attempt: z.number().int().nonnegative(),
    cap: z.enum(["steps_per_turn", "turns", "tokens", "cost_usd", "wall_time", "model_retries"]),
    limit: z.number(),
    used: z.number(),
  }),
  // The self-check of the built-in agent (advisory): accepted submissions and the repair gate.
  self_check_plan_recorded: z.object({
    attempt,
    call_id: z.string(),
    plan: SelfCheckPlan,
    guard_version: z.number().int().positive(),
  }),
  self_check_recorded: z.object({
    attempt,
    call_id: z.string(),
    check: SelfCheckSubmission,
    guard_version: z.number().int().positive(),
    observation_id: z.string(),
    evidence_findings: z.array(z.object({ code: z.string(), detail: z.string().max(2000) })).max(100),
    verified_artifacts: z.array(z.string()).max(100),
    cited_commands: z.array(z.string().max(4000)).max(50),
  }),
  repair_decided: z.object({
    attempt,
    turn: z.number().int().positive(),
    decision: z.enum(["allow", "repair", "cap_reached"]),
    semantic_status: z.enum(["complete", "incomplete"]),
    blockers: z.array(z.object({ code: z.string(), detail: z.string().max(500) })).max(200),
    repairs_used: z.number().int().nonnegative(),
    cap: z.number().int().nonnegative(),
    warnings: z.array(z.string().max(500)).max(50),
  }),
  judge_finished: z.object({
    attempt,
    verdict: z.enum(["approve", "reject", "inconclusive"]),
    rules_applied: z.array(z.string()),
    violations: z.array(z.object({ rule: z.string(), evidence: z.string().max(2000) })),
    reason: z.string().max(2000),
    duration_ms: z.number().nonnegative(),
  }),
  // Plan steps of the built-in agent's `todo` tool (see src/agent/todo/).
  todo_written: z.object({
    attempt,
    call_id: z.string(),
    items: z
      .array(
        z.object({
          content: z.string().max(2000),
          status: z.enum(["pending", "in_progress", "completed"]),
          expect: z.string().max(2000).optional(),
          check: z.string().max(4000).nullable(),
          expect_calls: z.number().int().nonnegative().optional(),
          check_frozen: z.boolean(),
        }),
      )
      .max(100),
    changes: z.array(
      z.object({
        step: z.string().max(2000),
        kind: z.enum(["check_kept", "check_restored"]),
        proposed: z.string().max(4000).nullable(),
        kept: z.string().max(4000),
      }),
    ),
    completed: z.array(z.string().max(2000)),
    reopened: z.array(z.string().max(2000)),
  }),
  step_check_ran: z.object({
    attempt,
    call_id: z.string(),
    step: z.string().max(2000),
    command: z.string().max(4000),
    status: z.enum(["passed", "failed", "refused", "unavailable", "skipped"]),
    exit_code: z.number().int().nullable(),
    detail: z.string().max(2000),
    duration_ms: z.number().nonnegative(),
  }),
  step_appraised: z.object({
    attempt,
    call_id: z.string(),
    step: z.string().max(2000),
    finding: z
      .enum(["landed", "null_step", "ended_on_failure", "ended_on_refusal", "check_failed"])
      .nullable(),
    measured: z.boolean(),
    calls: z.number().int().nonnegative(),
    check: z
      .object({
        command: z.string().max(4000),
        exit_code: z.number().int().nullable(),
        verified: z.boolean(),
      })
      .nullable(),
    rendered: z.string().max(4000),
  }),
  step_escalated: z.object({
    attempt,
    call_id: z.string(),
    step: z.string().max(2000),
    trigger: z.enum(["span_outlier", "unverified_claim"]),
    decision: z.enum(["carry_on", "revise_plan", "inconclusive"]),
    escalations_used: z.number().int().nonnegative(),
  }),
  run_resumed: z.object({
    from_revision: z.number().int().nonnegative(),
    in_doubt: z.array(z.string()),
    action: z.string().max(2000),
    /** The run had finished as interrupted; this resume reopened it (its interruption no longer counts). */
    reopened: z.boolean().optional(),
  }),
  /**
   * The process now driving the run (see core/run-lease.ts). `previous` is the lease it took over, and why:
   * it had expired, or its owner's process was gone on this host. Appended with the expected revision, so
   * two processes can never both take it.
   */
  run_lease_taken: z.object({
    owner: LeaseOwner,
    expires_at: z.string().datetime({ offset: true }),
    previous: LeaseOwner.extend({
      expires_at: z.string().datetime({ offset: true }),
      reason: z.enum(["expired", "owner_gone"]),
    }).nullable(),
  }),
  /** The owner's heartbeat: its lease now runs until `expires_at`. Rare (every 10 s by default). */
  run_lease_renewed: z.object({
    token: z.string().min(1).max(128),
    expires_at: z.string().datetime({ offset: true }),
  }),
  /**
   * `loopgate task check` proved the gates with the oracle: how many real tests each gate saw pass.
   * Later runs of the same task file (same digest) take these as their test floors. Own stream per task.
   */
  task_checked: z.object({
    task_id: z.string(),
    task_digest: z.string(),
    oracle_run_id: z.string(),
    gates: z.array(
      z.object({ gate_id: z.string(), tests_passed: z.number().int().nonnegative().nullable() }),
    ),
  }),
  /**
   * A tool call an external agent's runtime reported through loopgate's hook (Claude Code's PostToolUse
   * or PostToolUseFailure) or its event stream (Codex's `item.completed` of a `command_execution` or
   * `file_change`), origin `agent_runtime`. Recorded as reported: the command, its exit code,
   * the head and tail of its output.
   */
  agent_tool_observed: z.object({
    attempt,
    agent: z.enum(["claude-code", "codex"]),
    hook_event: z.enum(["PostToolUse", "PostToolUseFailure", "TaskCompleted", "item.completed"]),
    session_id: z.string().max(200),
    tool: z.string().max(200),
    /** The Bash command, or the file path of a file tool; "" when the tool has neither. */
    command: z.string().max(4000),
    exit_code: z.number().int().nullable(),
    excerpt: excerpt,
  }),
  /** An external agent session ended: its own result line (turns, cost, usage), origin `agent_runtime`. */
  agent_session_finished: z.object({
    attempt: z.number().int().nonnegative(),
    agent: z.enum(["claude-code", "codex"]),
    session_id: z.string().max(200),
    exit_code: z.number().int().nullable(),
    subtype: z.string().max(200).nullable(),
    is_error: z.boolean().nullable(),
    num_turns: z.number().int().nonnegative().nullable(),
    total_cost_usd: z.number().nonnegative().nullable(),
    input_tokens: z.number().int().nonnegative().nullable(),
    output_tokens: z.number().int().nonnegative().nullable(),
    result_excerpt: z.string().max(4000),
  }),
  /** A hook loopgate owns could not do its work (it then blocked, never let the agent stop unchecked). */
  hook_failed: z.object({
    attempt: z.number().int().nonnegative(),
    hook_event: z.string().max(100),
    reason: z.string().max(LIMITS.reason),
  }),
} as const;

/** The event types, past-tense noun_verb. */
export type EventType = keyof typeof data;
export const eventTypes = Object.keys(data) as EventType[];

export const EventMeta = z.object({
  at: z.string().datetime({ offset: true }),
  origin: Origin,
});
export type EventMeta = z.infer<typeof EventMeta>;

function variant<T extends EventType>(type: T) {
  return z.object({
    id: z.string().min(1).max(128),
    type: z.literal(type),
    data: data[type],
    meta: EventMeta,
  });
}

/** One event as written to the log: `{ id, type, data, meta }`, validated on write and on read. */
export const LoopgateEvent = z.discriminatedUnion("type", [
  variant("run_started"),
  variant("workspace_observed"),
  variant("attempt_started"),
  variant("builder_finished"),
  variant("workspace_changed"),
  variant("finding_recorded"),
  variant("claim_recorded"),
  variant("gate_run_finished"),
  variant("attempt_finished"),
  variant("required_fix_issued"),
  variant("infrastructure_failed"),
  variant("run_finished"),
  variant("goal_set"),
  variant("model_responded"),
  variant("model_failed"),
  variant("tool_call_started"),
  variant("tool_call_finished"),
  variant("tool_call_abandoned"),
  variant("workspace_touched"),
  variant("goal_probed"),
  variant("goal_evaluated"),
  variant("continuation_queued"),
  variant("budget_exhausted"),
  variant("run_resumed"),
  variant("run_lease_taken"),
  variant("run_lease_renewed"),
  variant("judge_finished"),
  variant("self_check_plan_recorded"),
  variant("self_check_recorded"),
  variant("repair_decided"),
  variant("todo_written"),
  variant("step_check_ran"),
  variant("step_appraised"),
  variant("step_escalated"),
  variant("task_checked"),
  variant("agent_tool_observed"),
  variant("agent_session_finished"),
  variant("hook_failed"),
]);
export type LoopgateEvent = z.infer<typeof LoopgateEvent>;
export type EventOf<T extends EventType> = Extract<LoopgateEvent, { type: T }>;
export type EventData<T extends EventType> = EventOf<T>["data"];

/** An event read back from a store, with its position. */
export type RecordedEvent = LoopgateEvent & {
  stream: string;
  revision: number;
  position: number;
};
