import { effectRef, type TurnIdentity } from "../../../core/events/goal/turn-events.js";
import type { TurnState } from "../../../core/goal/turn/turn-state.js";
import { DomainError } from "../../../core/kernel/errors.js";
import type { LoadedTask } from "../../task-source/load-task.js";
import { GoalTaskError, goalTaskFile } from "../goal-tasks.js";
import { readbackRun } from "../repo/readback.js";
import { receiptOfLog } from "../run-receipts.js";
import { contractNow } from "./contract-now.js";
import { forgetRun, runLog } from "./finished-run.js";
import { repoOf, type TickCtx, turnDecision, turnRunId } from "./tick-context.js";

/**
 * The todo task of a turn, its digest checked against the one the todo recorded: the recorded file, or on
 * a shared store its snapshot written out under this host's folder (see goal-tasks.ts).
 */
export async function turnTask(ctx: TickCtx, t: TurnState): Promise<LoadedTask> {
  const todoId = t.work?.kind === "todo" ? t.work.todo_id : "";
  const todo = ctx.j.state.todos[todoId];
  if (!todo?.task)
    throw new DomainError(`turn ${t.identity?.turn_instance_id}: ${todoId} has no task to run`);
  try {
    return await goalTaskFile(
      ctx.deps.store,
      ctx.deps.localDir,
      ctx.req.goalId,
      todo.task.path,
      todo.task.digest,
    );
  } catch (e) {
    if (e instanceof GoalTaskError && e.why === "changed")
      throw new DomainError(`${e.message}; the runs of ${todoId} would not prove it`);
    throw e;
  }
}

async function runIt(ctx: TickCtx, id: TurnIdentity, t: TurnState, resume: boolean): Promise<void> {
  const base = t.baseRevision ?? "";
  const loaded = await turnTask(ctx, t);
  const tree = await repoOf(ctx).tree(id.goal_id, base);
  const runId = turnRunId(id);
  ctx.progress({
    phase: "host_execute",
    detail: `${resume ? "resuming" : "running"} ${loaded.task.id} as run ${runId}`,
  });
  forgetRun(ctx, runId);
  await ctx.deps.runHost({
    runId,
    loaded: { ...loaded, workspace: tree },
    goal: { id: id.goal_id, revision: base },
    resume,
  });
  await ctx.j.append(
    turnDecision({
      type: "record_host_execute",
      identity: id,
      effectRef: effectRef(id, "host_execute"),
      runRef: runId,
    }),
  );
}

/**
 * host_execute, first time: the turn still needs its todo (a paused goal or a changed selection gives the
 * turn back before anything ran); then the effect is journaled as prepared and the run carried out.
 * Returns false when the turn was given back.
 */
export async function executeHost(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<boolean> {
  const { contract: c } = await contractNow(ctx);
  const todo = t.work?.kind === "todo" ? t.work.todo_id : null;
  if (c.runtimeState !== "eligible" || c.agentChannel.selectedTodo !== todo) {
    await ctx.j.append(
      turnDecision({
        type: "release",
        identity: id,
        reason: `nothing ran: the contract no longer selects ${todo} (${c.runtimeState}: ${c.reason})`,
      }),
    );
    return false;
  }
  const ref = effectRef(id, "host_execute");
  await ctx.j.append(
    turnDecision({ type: "prepare_effect", identity: id, phase: "host_execute", effectRef: ref }),
  );
  await runIt(ctx, id, ctx.j.state.turns[`${id.goal_id}/${id.agent_id}/${id.turn_instance_id}`] ?? t, false);
  return true;
}

/** host_execute was prepared and not settled: look the run up by its id (finished → reuse, absent → run, started → continue it). */
export async function readbackHost(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<void> {
  const runId = turnRunId(id);
  const ref = effectRef(id, "host_execute");
  const found = await readbackRun(ctx.deps.store, runId);
  ctx.progress({ phase: "readback", detail: `run ${runId}: ${found.found}` });
  if (found.found === "started") return runIt(ctx, id, t, true);
  await ctx.j.append(
    turnDecision({
      type: "resolve_readback",
      identity: id,
      phase: "host_execute",
      effectRef: ref,
      readback:
        found.found === "finished"
          ? { found: "committed", payload: { phase: "host_execute", runRef: runId } }
          : found.found === "absent"
            ? { found: "absent" }
            : { found: "unknown", reason: found.reason },
    }),
  );
}

/** The receipt of the turn's run, from loopgate's own record of it (never the caller's word). */
async function runReceipt(ctx: TickCtx, id: TurnIdentity, t: TurnState) {
  const runId = t.host?.runRef ?? turnRunId(id);
  const log = await runLog(ctx, runId);
  return { runId, receipt: receiptOfLog(runId, log.events, ctx.deps.localDir, log.envelope).receipt };
}

/** typed_result: the run's envelope (its status and digest). */
export async function recordTypedResult(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<void> {
  const { runId, receipt } = await runReceipt(ctx, id, t);
  ctx.progress({ phase: "typed_result", detail: `run ${runId}: ${receipt.status}` });
  await ctx.j.append(
    turnDecision({
      type: "record_typed_result",
      identity: id,
      result: {
        kind: "envelope",
        run_id: runId,
        task_id: receipt.task_id,
        status: receipt.status,
        envelope_digest: receipt.envelope_digest,
      },
    }),
  );
}

/** validation: the run's receipt (the decider takes only a SUCCESS on the turn's revision). */
export async function recordValidation(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<void> {
  const { receipt } = await runReceipt(ctx, id, t);
  ctx.progress({
    phase: "validation",
    detail:
      receipt.status === "SUCCESS"
        ? "receipt: SUCCESS on the turn's revision"
        : `no receipt: the run is ${receipt.status}`,
  });
  await ctx.j.append(
    turnDecision({ type: "record_validation", identity: id, receipt: { kind: "run", receipt } }),
  );
}
