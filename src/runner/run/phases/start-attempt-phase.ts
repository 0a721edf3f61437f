import { buildRequiredFix, type Feedback } from "../../../core/run/required-fix.js";
import type { FixSource } from "../../../core/run/run-step.js";
import { judgeRules } from "../../../core/task/judge-spec.js";
import { judgeRequiredFix } from "../../../judge/judge.js";
import { deliverablesDiff } from "../../../judge/judge-diff.js";
import type { RunContext } from "../context/run-context.js";
import type { GateState } from "./gate-run.js";
import { ofAttempt } from "./judge-phase.js";

/**
 * Starts attempt `attempt`. A required fix still to be written (from the previous attempt's gates and
 * findings, or from the judge's rejection) is recorded first, in its own append: a resume then starts
 * the attempt with the fix as issued.
 */
export async function startAttemptPhase(
  ctx: RunContext,
  attempt: number,
  fix: FixSource,
  inputs: (afterObservationId: string) => Promise<GateState>,
): Promise<void> {
  const text =
    fix.source === "none" ? null : fix.source === "issued" ? fix.text : await writeFix(ctx, fix, inputs);
  if (fix.source === "gates" || fix.source === "judge")
    await ctx.journal.record({ type: "issue_required_fix", text: text ?? "" });
  await ctx.journal.record({ type: "start_attempt", requiredFix: text });
  ctx.reporter.attemptStarted?.(attempt, ctx.journal.current.maxAttempts);
}

async function writeFix(
  ctx: RunContext,
  fix: Extract<FixSource, { source: "gates" | "judge" }>,
  inputs: (afterObservationId: string) => Promise<GateState>,
): Promise<string> {
  const task = ctx.loaded.task;
  const n = fix.attempt;
  if (fix.source === "judge") {
    const judged = ctx.journal.current.judgeVerdicts.has(n)
      ? ctx.journal.events.findLast((e) => e.type === "judge_finished" && e.data.attempt === n)
      : undefined;
    if (judged?.type === "judge_finished") {
      const after = ctx.journal.current.attempts[n - 1]?.afterObservationId ?? null;
      const diff =
        after === null
          ? ""
          : await deliverablesDiff((await inputs(after)).plan, ctx.pristineDir, ctx.workspace);
      return judgeRequiredFix(n, judged.data, judgeRules(task), diff);
    }
  }
  const feedback: Record<string, Feedback> = Object.fromEntries(ctx.gates.map((g) => [g.id, g.feedback]));
  return buildRequiredFix({
    attempt: n,
    gates: ofAttempt(ctx, "gate_run_finished", n),
    feedback,
    findings: ofAttempt(ctx, "finding_recorded", n),
    deliverables: task.deliverables,
  });
}
