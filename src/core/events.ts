import { z } from "zod";

/** Where a piece of evidence came from. Only trusted origins may complete anything. */
export const Origin = z.enum(["runtime", "gate", "judge", "operator", "model", "continuation"]);
export type Origin = z.infer<typeof Origin>;

export const RunStatus = z.enum(["SUCCESS", "ESCALATED", "TOOL_FAILURE"]);
export type RunStatus = z.infer<typeof RunStatus>;

const attempt = z.number().int().positive();
const excerpt = z.string().max(16_384);

/** Why a gate did not decide: each of these is "not passed", never a pass. */
export const GateError = z.enum(["timeout", "spawn_failed", "crashed", "unreadable", "sandbox_unavailable"]);
export type GateError = z.infer<typeof GateError>;

export const FindingSeverity = z.enum(["blocking", "warning"]);
export const Finding = z.object({
  attempt: attempt,
  code: z.string().min(1),
  severity: FindingSeverity,
  path: z.string().optional(),
  detail: z.string().max(2000),
});
export type Finding = z.infer<typeof Finding>;

export const PathList = z.object({
  paths: z.array(z.string()).max(200),
  total: z.number().int().nonnegative(),
});
export type PathList = z.infer<typeof PathList>;

export const GateDeclaration = z.object({
  id: z.string(),
  kind: z.enum(["subprocess", "static", "builtin"]),
});

export const BuilderDescriptor = z.object({
  kind: z.enum(["command", "oracle", "noop", "workspace"]),
  command: z.string().optional(),
});

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
  }),
  workspace_observed: z.object({
    attempt: z.number().int().nonnegative(),
    phase: z.enum(["pristine", "after_builder"]),
    observation_id: z.string(),
    entries: z.number().int().nonnegative(),
    duration_ms: z.number().nonnegative(),
  }),
  attempt_started: z.object({ attempt, required_fix: z.string().max(8000).nullable() }),
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
    text: z.string().max(4000),
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
    summary: z.string().max(2000),
  }),
  attempt_finished: z.object({ attempt, passed: z.boolean() }),
  required_fix_issued: z.object({ attempt, text: z.string().max(8000) }),
  infrastructure_failed: z.object({ attempt: z.number().int().nonnegative(), reason: z.string().max(4000) }),
  run_finished: z.object({ status: RunStatus, reason: z.string().max(4000) }),
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
