import type { ModelAdapter } from "../../../core/agent/model-boundary.js";
import type { GoalEventBody } from "../../../core/events/goal/goal-events.js";
import { effectRef, type TurnIdentity, type Usage } from "../../../core/events/goal/turn-events.js";
import { decide, type GoalCommand } from "../../../core/goal/goal-decider.js";
import type { GoalState } from "../../../core/goal/goal-state-shape.js";
import { type Obligation, obligations } from "../../../core/goal/obligations.js";
import { replanOperation } from "../../../core/goal/replan.js";
import type { TurnState } from "../../../core/goal/turn/turn-state.js";
import { DomainError, InputError } from "../../../core/kernel/errors.js";
import { plannerModel, planReplan, replanObligation } from "../planner-turn.js";
import { presence, readbackGoalOperation, writeGoalOperation } from "./operation-writeback.js";
import { goalFileDir, repoOf, type TickCtx, turnDecision } from "./tick-context.js";
import { digestOf, readbackKeptEffect } from "./turn-effects.js";

/**
 * A planner turn bound to a replan obligation: host_execute = `planReplan` with the goal's
 * model (its admitted commands, outcome and usage kept as the turn's effect file); typed_result = the
 * plan's digest; validation = an answer the model finished (null commands: receipt_missing);
 * durable_writeback = the admitted commands in ONE goal append under operation id = the writeback
 * effect_ref (readback: `replanOperation`). `replan_noop` is recorded and leaves the obligation open.
 * Spend = the planner's usage, once.
 */
export interface PlanEffect {
  commands: GoalCommand[] | null;
  outcome: "delta" | "replan_noop";
  usage: Usage;
  failure: string | null;
}

/** The replan obligation a turn answers. */
export const obligationOf = (t: TurnState) => (t.work?.kind === "replan" ? t.work.obligation_id : "");

/** The first obligation a planner turn answers (closeout is the operator's), or null. */
export function openObligation(s: GoalState): Obligation | null {
  return obligations(s).find((o) => o.kind !== "closeout") ?? null;
}

/** The goal's planner model, or the reason there is none (then a person answers). */
export function tickPlanner(ctx: TickCtx): ModelAdapter | string {
  try {
    return plannerModel(ctx.j.state, ctx.deps.planner?.model, {}, ctx.deps.planner?.builderModel);
  } catch (e) {
    if (e instanceof InputError) return e.message;
    throw e;
  }
}

export async function executeReplanHost(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<void> {
  const oid = obligationOf(t);
  const obligation = replanObligation(ctx.j.state, oid);
  const model = tickPlanner(ctx);
  if (!obligation || typeof model === "string") {
    await ctx.j.append(
      turnDecision({
        type: "release",
        identity: id,
        reason: `nothing ran: ${obligation ? model : `the obligation ${oid} is answered already`}`,
      }),
    );
    return;
  }
  await ctx.j.append(
    turnDecision({
      type: "prepare_effect",
      identity: id,
      phase: "host_execute",
      effectRef: effectRef(id, "host_execute"),
    }),
  );
  ctx.progress({ phase: "host_execute", detail: `planner turn on ${oid}` });
  const r = await planReplan({
    state: ctx.j.state,
    obligation,
    model,
    // A proposed todo's task path resolves against the goal file's folder (the goal was created from it).
    taskRoot: ctx.deps.planner?.taskRoot ?? (await goalFileDir(ctx)) ?? process.cwd(),
    operationId: effectRef(id, "durable_writeback"),
    ...(ctx.req.signal ? { signal: ctx.req.signal } : {}),
  });
  const effect: PlanEffect = {
    commands: r.commands,
    outcome: r.outcome,
    usage: { tokens: r.usage.tokens, cost_usd: r.usage.cost_usd, turns: 1 },
    failure: r.failure ? `${r.failure.kind}: ${r.failure.message}` : null,
  };
  const runRef = await repoOf(ctx).saveEffect(id, effect);
  await ctx.j.append(
    turnDecision({
      type: "record_host_execute",
      identity: id,
      effectRef: effectRef(id, "host_execute"),
      runRef: runRef,
    }),
  );
}

/** A prepared planner turn not recorded: its kept answer (committed → reuse) or none (absent → ask again). */
export const readbackReplanHost = (ctx: TickCtx, id: TurnIdentity) =>
  readbackKeptEffect(ctx, id, "planner answer");

export const planOf = (ctx: TickCtx, id: TurnIdentity) => repoOf(ctx).loadEffect<PlanEffect>(id);

/** The planner's kept answer; gone is an error (the turn cannot be settled without it). */
async function keptPlan(ctx: TickCtx, id: TurnIdentity): Promise<PlanEffect> {
  const p = await planOf(ctx, id);
  if (!p) throw new DomainError(`turn ${id.turn_instance_id}: the planner's answer is gone`);
  return p;
}

/** typed_result: the digest of the admitted commands. */
export async function recordReplanTypedResult(ctx: TickCtx, id: TurnIdentity): Promise<void> {
  const p = await keptPlan(ctx, id);
  ctx.progress({ phase: "typed_result", detail: `${p.outcome}${p.failure ? ` (${p.failure})` : ""}` });
  await ctx.j.append(
    turnDecision({
      type: "record_typed_result",
      identity: id,
      result: { kind: "plan", delta_digest: digestOf(p.commands) },
    }),
  );
}

/** validation: an answer the model finished is the receipt (null commands: none, receipt_missing). */
export async function recordReplanValidation(ctx: TickCtx, id: TurnIdentity): Promise<void> {
  const p = await keptPlan(ctx, id);
  ctx.progress({
    phase: "validation",
    detail: p.commands ? `an admitted ${p.outcome}` : `no answer: ${p.failure}`,
  });
  await ctx.j.append(
    turnDecision({
      type: "record_validation",
      identity: id,
      receipt: p.commands ? { kind: "typed", digest: digestOf(p.commands) } : null,
    }),
  );
}

/** The admitted commands' events on `s` (planReplan admits one answer_replan; each is decided on `s`). */
function answerEvents(s: GoalState, commands: GoalCommand[]): GoalEventBody[] {
  return commands.flatMap((c) => decide(c, s));
}

export async function executeReplanWriteback(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<void> {
  const p = await planOf(ctx, id);
  await writeGoalOperation(ctx, id, t, {
    noun: "answer",
    events: (s) => {
      const goal = answerEvents(s, p?.commands ?? []);
      if (!p?.commands?.length) throw new DomainError("the planner admitted no answer");
      return goal;
    },
    detail: (types) => `${p?.outcome}: ${types}`,
  });
}

export const readbackReplanWriteback = (ctx: TickCtx, id: TurnIdentity, t: TurnState) =>
  readbackGoalOperation(ctx, id, t, (s, ref) => {
    const found = presence(replanOperation(s, ref) !== null);
    return { found, detail: `replan operation ${ref}: ${found.found}` };
  });
