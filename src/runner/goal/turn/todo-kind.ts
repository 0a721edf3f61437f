import type { TurnIdentity, Usage } from "../../../core/events/goal/turn-events.js";
import type { GoalState } from "../../../core/goal/goal-state-shape.js";
import type { TurnState } from "../../../core/goal/turn/turn-state.js";
import { runLog } from "./finished-run.js";
import { executeHost, readbackHost, recordTypedResult, recordValidation } from "./host-step.js";
import { executeWriteback, readbackWritebackStep } from "./settle-step.js";
import type { TickCtx } from "./tick-context.js";
import type { TurnKind } from "./turn-kind.js";

/** The turn's usage from its run's envelope (audit tokens and cost; one turn). */
async function usage(ctx: TickCtx, _id: TurnIdentity, t: TurnState): Promise<Usage> {
  const env = (await runLog(ctx, t.host?.runRef ?? "")).envelope;
  return { tokens: env?.audit.tokens ?? 0, cost_usd: env?.audit.cost ?? 0, turns: 1 };
}

/** What a todo's turn did: the todo done on its run's evidence, at the writeback's revision. */
function summary(_s: GoalState, _id: TurnIdentity, t: TurnState) {
  const todo = t.work?.kind === "todo" ? t.work.todo_id : "";
  return {
    result: `${todo} done on evidence of run ${t.host?.runRef}; revision ${t.writeback?.newRevision.slice(0, 12)}`,
    changed: true,
  };
}

/**
 * An advancement todo's turn: its task run through a builder on the turn's revision (host-step.ts), the
 * accepted change committed to the goal workspace with the todo's completion (settle-step.ts).
 */
export const todoKind: TurnKind = {
  name: "todo",
  select(ctx, c) {
    const sel = c.agentChannel.selectedAction;
    const todo = sel?.kind === "todo" ? ctx.j.state.todos[sel.todoId] : undefined;
    if (todo?.class === "advancement_task" && todo.task)
      return { found: true, work: { kind: "todo", todo_id: todo.id }, what: `${todo.id}'s run` };
    return {
      found: false,
      why: `the selected work ${todo ? `${todo.id} (${todo.class})` : "(none)"} is not an advancement todo`,
    };
  },
  execute: async (ctx, id, t) => void (await executeHost(ctx, id, t)),
  readback: (ctx, id, t, phase) =>
    phase === "host_execute" ? readbackHost(ctx, id, t) : readbackWritebackStep(ctx, id, t),
  typedResult: recordTypedResult,
  validate: recordValidation,
  writeback: executeWriteback,
  usage,
  summary,
  todoOf: (work) => (work.kind === "todo" ? work.todo_id : null),
};
