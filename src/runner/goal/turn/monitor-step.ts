import { PollFailureKind } from "../../../core/events/goal/monitor-events.js";
import { effectRef, type TurnIdentity, type Usage } from "../../../core/events/goal/turn-events.js";
import { decide, type GoalCommand } from "../../../core/goal/goal-decider.js";
import type { GoalState } from "../../../core/goal/goal-state-shape.js";
import {
  monitorOperation,
  monitorPollCommand,
  monitorSchedule,
  type PollObservation,
} from "../../../core/goal/monitor-goal.js";
import type { TurnState } from "../../../core/goal/turn/turn-state.js";
import { DomainError } from "../../../core/kernel/errors.js";
import { pollMonitor } from "../monitor-poll.js";
import { presence, readbackGoalOperation, writeGoalOperation } from "./operation-writeback.js";
import { goalFileDir, repoOf, type TickCtx, turnDecision } from "./tick-context.js";
import { readbackKeptEffect } from "./turn-effects.js";

/**
 * A monitor turn: a todo turn whose todo is a continuous monitor. host_execute = the poll
 * in the sandbox on a fresh tree of the turn's revision (kept as the turn's effect file); typed_result =
 * the observation; validation = a well-formed observation; durable_writeback = the monitor's goal command
 * appended under operation id = the writeback effect_ref (readback: `monitorOperation`). A typed poll
 * failure is recorded through the monitor's failure command (never a material change). A monitor whose
 * stop holds (expired, resume_when) is completed with no follow-up of its own.
 */
export type MonitorObservation =
  | { kind: "poll"; at: string; poll: PollObservation; excerpt: string }
  | { kind: "complete"; at: string; reason: string };

/** The monitor todo a turn polls. */
export const todoOf = (t: TurnState) => (t.work?.kind === "todo" ? t.work.todo_id : "");

export const isMonitorTurn = (s: GoalState, t: TurnState) =>
  t.work?.kind === "todo" && s.todos[t.work.todo_id]?.class === "continuous_monitor";

/** The observation's digest: the typed result and the validation receipt carry it. */
export function observationDigest(o: MonitorObservation): string {
  if (o.kind === "complete") return "monitor_complete";
  return o.poll.ok ? o.poll.result_hash : `poll_failed:${o.poll.failure}`;
}

const HASH = /^sha256:[0-9a-f]{64}$/;
const FAILURES = new Set<string>(PollFailureKind.options);

/** Well-formed: a sha256 observation, a typed poll failure, or a completion with its reason. */
export function wellFormed(o: MonitorObservation | null): boolean {
  if (!o) return false;
  if (o.kind === "complete") return o.reason.trim() !== "";
  return o.poll.ok ? HASH.test(o.poll.result_hash) : FAILURES.has(o.poll.failure);
}

export async function executeMonitorHost(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<void> {
  const todoId = todoOf(t);
  const now = ctx.now();
  const at = now.toISOString();
  const sched = monitorSchedule(ctx.j.state, todoId, now);
  if (
    ctx.j.state.todos[todoId]?.status !== "open" ||
    (sched?.action !== "poll" && sched?.action !== "complete")
  ) {
    await ctx.j.append(
      turnDecision({
        type: "release",
        identity: id,
        reason: `nothing ran: monitor ${todoId} is ${sched?.action ?? "gone"} now`,
      }),
    );
    return;
  }
  const ref = effectRef(id, "host_execute");
  await ctx.j.append(
    turnDecision({ type: "prepare_effect", identity: id, phase: "host_execute", effectRef: ref }),
  );
  await pollIt(ctx, id, t, sched.action === "complete" ? (sched.stop ?? "its stop holds") : null, at);
}

async function pollIt(ctx: TickCtx, id: TurnIdentity, t: TurnState, stop: string | null, at: string) {
  const todoId = todoOf(t);
  let obs: MonitorObservation;
  if (stop !== null) obs = { kind: "complete", at, reason: stop };
  else {
    const spec = ctx.j.state.todos[todoId]?.monitor;
    if (!spec) throw new DomainError(`${todoId} is not a continuous monitor of goal ${id.goal_id}`);
    const tree = await repoOf(ctx).tree(id.goal_id, t.baseRevision ?? "");
    ctx.progress({ phase: "host_execute", detail: `polling ${todoId}: ${spec.argv.join(" ")}` });
    // The argv resolves against the goal file's folder (cwd, read-only); the store beside it stays hidden.
    const goalDir = await goalFileDir(ctx);
    const p = await pollMonitor(spec, tree, {
      sandbox: ctx.deps.sandbox ?? "bubblewrap",
      ...(goalDir ? { goalDir, masked: [ctx.deps.localDir] } : {}),
      ...(ctx.req.signal ? { signal: ctx.req.signal } : {}),
    });
    obs = {
      kind: "poll",
      at,
      poll: p.ok
        ? { ok: true, result_hash: p.result_hash }
        : { ok: false, failure: p.failure, exit_code: p.exit_code, detail: p.detail },
      excerpt: p.output_excerpt,
    };
  }
  const runRef = await repoOf(ctx).saveEffect(id, obs);
  await ctx.j.append(
    turnDecision({
      type: "record_host_execute",
      identity: id,
      effectRef: effectRef(id, "host_execute"),
      runRef: runRef,
    }),
  );
}

/** A prepared poll not recorded: its kept observation (committed → reuse) or none (absent → poll again). */
export const readbackMonitorHost = (ctx: TickCtx, id: TurnIdentity, t: TurnState) =>
  readbackKeptEffect(ctx, id, `poll of ${todoOf(t)}`);

function observation(ctx: TickCtx, id: TurnIdentity): Promise<MonitorObservation | null> {
  return repoOf(ctx).loadEffect<MonitorObservation>(id);
}

/** typed_result: the observation's digest. */
export async function recordMonitorTypedResult(ctx: TickCtx, id: TurnIdentity): Promise<void> {
  const obs = await observation(ctx, id);
  if (!obs) throw new DomainError(`turn ${id.turn_instance_id}: the poll's observation is gone`);
  const digest = observationDigest(obs);
  ctx.progress({ phase: "typed_result", detail: `observation ${digest.slice(0, 24)}` });
  await ctx.j.append(
    turnDecision({
      type: "record_typed_result",
      identity: id,
      result: { kind: "observation", result_hash: digest },
    }),
  );
}

/** validation: a well-formed observation is the receipt; none, nothing is written back. */
export async function recordMonitorValidation(ctx: TickCtx, id: TurnIdentity): Promise<void> {
  const obs = await observation(ctx, id);
  const ok = wellFormed(obs);
  ctx.progress({
    phase: "validation",
    detail: ok ? "a well-formed observation" : "no well-formed observation",
  });
  await ctx.j.append(
    turnDecision({
      type: "record_validation",
      identity: id,
      receipt: ok && obs ? { kind: "typed", digest: observationDigest(obs) } : null,
    }),
  );
}

function monitorCommand(s: GoalState, todoId: string, ref: string, o: MonitorObservation): GoalCommand {
  if (o.kind === "poll") return monitorPollCommand(s, todoId, ref, new Date(o.at), o.poll);
  return {
    type: "complete_monitor",
    todoId: todoId,
    operationId: ref,
    now: new Date(o.at),
    reason: o.reason,
    followup: { kind: "no_followup", rationale: `the monitor stopped: ${o.reason}` },
  };
}

/** durable_writeback: the monitor's command and the accepted writeback in ONE goal append (the revision is unchanged). */
export async function executeMonitorWriteback(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<void> {
  const obs = await observation(ctx, id);
  await writeGoalOperation(ctx, id, t, {
    noun: "observation",
    events: (s, ref) => {
      if (!obs) throw new DomainError("the poll's observation is gone");
      return decide(monitorCommand(s, todoOf(t), ref, obs), s);
    },
    detail: (types, ref) => `${types || "replayed"} under ${ref}`,
  });
}

/**
 * quota_spend of a monitor turn, read from what its writeback recorded: a poll that delivered an observation
 * (baseline, no change, material change) or a completion is one turn; a failed poll delivered none and is
 * charged nothing, as a builder run that delivers nothing (no writeback) is charged nothing. Failed polls
 * are bounded by the monitor's max_failures instead. Never tokens: a poll calls no model.
 */
export function monitorUsage(ctx: TickCtx, id: TurnIdentity): Usage {
  const op = monitorOperation(ctx.j.state, effectRef(id, "durable_writeback"));
  const failed = op?.events.some((e) => e.type === "monitor_poll_failed") === true;
  return { tokens: 0, cost_usd: 0, turns: failed ? 0 : 1 };
}

/** A prepared monitor writeback not settled: the goal stream holds the operation (committed → reuse) or not (absent → write). */
export const readbackMonitorWriteback = (ctx: TickCtx, id: TurnIdentity, t: TurnState) =>
  readbackGoalOperation(ctx, id, t, (s, ref) => {
    const found = presence(monitorOperation(s, ref) !== null);
    return { found, detail: `monitor operation ${ref}: ${found.found}` };
  });
