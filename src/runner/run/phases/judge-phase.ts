import type { EventData } from "../../../core/events/loopgate-event.js";
import type { Envelope } from "../../../core/run/envelope.js";
import { judgeRules } from "../../../core/task/judge-spec.js";
import { runJudge } from "../../../judge/judge.js";
import { deliverablesDiff } from "../../../judge/judge-diff.js";
import { failRun, type RunContext } from "../context/run-context.js";
import type { GateState } from "./gate-run.js";

/** Consults the judge on attempt `n`, whose gates all passed: a fresh session that can only veto. */
export async function judgePhase(ctx: RunContext, n: number, inputs: GateState): Promise<Envelope | null> {
  const task = ctx.loaded.task;
  // Resolved when the task loaded: set whenever the task has a judge.
  const timeoutMs = ctx.loaded.resolved.judgeTimeoutMs;
  if (!ctx.judge || !task.judge || timeoutMs === null)
    return failRun(ctx, "the task configures a judge but the run has no judge model");
  const gateLogs = ofAttempt(ctx, "gate_run_finished", n).map((g) => ({
    id: g.gate_id,
    passed: g.passed,
    log: g.log_excerpt,
  }));
  const verdict = await runJudge(
    ctx.judge,
    {
      prompt: task.prompt,
      diff: await deliverablesDiff(inputs.plan, ctx.pristineDir, ctx.workspace),
      gateLogs,
      finalMessage: ofAttempt(ctx, "claim_recorded", n).at(-1)?.text ?? "",
      rules: judgeRules(task),
    },
    timeoutMs,
    ctx.signal,
  );
  // An interrupted judge did not decide: nothing is recorded and the driver records the interrupt.
  if (ctx.signal?.aborted) return null;
  await ctx.journal.record({ type: "record_judge", data: { attempt: n, ...verdict } }, "judge");
  return null;
}

/** The data of attempt `n`'s events of one type, in log order. */
export function ofAttempt<
  T extends "gate_run_finished" | "claim_recorded" | "finding_recorded" | "builder_finished",
>(ctx: RunContext, type: T, n: number): EventData<T>[] {
  return ctx.journal.events.flatMap((e) =>
    e.type === type && (e.data as { attempt: number }).attempt === n ? [e.data as EventData<T>] : [],
  );
}
