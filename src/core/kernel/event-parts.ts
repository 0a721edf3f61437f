import { z } from "zod";
import { LIMITS } from "./bounded.js";

/**
 * An ISO 8601 time with its offset, as every fact records one. One schema shared by every event that has a
 * time: zod builds a datetime schema's pattern anew for each one it makes.
 */
export const Timestamp = z.string().datetime({ offset: true });

// The value schemas events are built from; the events themselves are declared once, by area, in events/.

/** An attempt's number, from 1. */
export const attempt = z.number().int().positive();
/** A turn's (or step's) number, from 1. */
export const turn = z.number().int().positive();
/** A bounded output excerpt (a builder's or a gate's). */
export const excerpt = z.string().max(16_384);

/**
 * Where a piece of evidence came from. Only trusted origins may complete anything. `agent_runtime`:
 * what an external agent's own runtime reported through hooks loopgate owns (Claude Code's PostToolUse):
 * good for step appraisal and goal predicates when that runtime ran in loopgate's sandbox, never for
 * the task verdict, which only gates decide.
 */
export const Origin = z.enum([
  "runtime",
  "gate",
  "judge",
  "operator",
  "model",
  "continuation",
  "agent_runtime",
]);
export type Origin = z.infer<typeof Origin>;

/** The most characters an actor's name holds. */
export const ACTOR_MAX = 64;

/**
 * Who made a person's write (`meta.by` of an operator-origin event): a short name as the writer gave it
 * (`--as`, `$LOOPGATE_ACTOR`, the OS user, a board credential's name). Printable: no control, format or
 * line-separator character, no surrounding space; 1 to 64 characters. A label for people and audits,
 * never a credential: nothing is trusted because of it.
 */
export const Actor = z
  .string()
  .min(1, "an actor's name is at least 1 character")
  .refine((s) => [...s].length <= ACTOR_MAX, `an actor's name is at most ${ACTOR_MAX} characters`)
  .refine(
    (s) => /^[^\p{C}\p{Zl}\p{Zp}]*$/u.test(s),
    "an actor's name is printable: no newline, tab or other control character",
  )
  .refine((s) => s.trim() === s, "an actor's name has no leading or trailing space");
export type Actor = z.infer<typeof Actor>;

/**
 * Why a model request failed (see src/agent/models/model-failure.ts, which classifies provider errors).
 * `script_exhausted`: a scripted model was asked for more responses than it has.
 */
export const ModelFailureKind = z.enum([
  "rate_limit",
  "provider",
  "refusal",
  "malformed",
  "network",
  "timeout",
  "auth",
  "script_exhausted",
]);
export type ModelFailureKind = z.infer<typeof ModelFailureKind>;

export const RunStatus = z.enum(["SUCCESS", "ESCALATED", "TOOL_FAILURE"]);
export type RunStatus = z.infer<typeof RunStatus>;

/** Why a gate did not decide: each of these is "not passed", never a pass. */
export const GateError = z.enum([
  "timeout",
  "spawn_failed",
  "crashed",
  "unreadable",
  "sandbox_unavailable",
  "tampered",
  "too_few_tests",
]);
export type GateError = z.infer<typeof GateError>;

export const FindingSeverity = z.enum(["blocking", "warning"]);
export const Finding = z.object({
  attempt: attempt,
  code: z.string().min(1),
  severity: FindingSeverity,
  path: z.string().optional(),
  detail: z.string().max(LIMITS.detail),
});
export type Finding = z.infer<typeof Finding>;

export const PathList = z.object({
  paths: z.array(z.string()).max(200),
  total: z.number().int().nonnegative(),
});
export type PathList = z.infer<typeof PathList>;

export const GateDeclaration = z.object({
  id: z.string(),
  kind: z.enum(["subprocess", "static", "differential", "builtin"]),
});

export const BuilderDescriptor = z.object({
  /** `claude-code`: `loopgate claude`, the real Claude Code gated through its Stop hook. */
  kind: z.enum(["command", "oracle", "noop", "workspace", "agent", "claude-code"]),
  command: z.string().optional(),
  /** The built-in agent's command-line caps, kept so a resumed run enforces the same ones. */
  max_turns: z.number().int().positive().optional(),
  max_cost_usd: z.number().positive().optional(),
  /** False when the run was started with --no-step-checks. */
  step_checks: z.boolean().optional(),
  /** The step-escalation model, so a resumed run escalates as the original did. */
  step_escalation: z.string().optional(),
});

/** Who holds a run's lease: a process on a host, and a random token only that process knows. */
export const LeaseOwner = z.object({
  pid: z.number().int().positive(),
  host: z.string().min(1).max(255),
  token: z.string().min(1).max(128),
});
export type LeaseOwner = z.infer<typeof LeaseOwner>;
