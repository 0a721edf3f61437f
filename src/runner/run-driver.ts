import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { agentUsage, attemptEvents } from "../agent/agent-state.js";
import { builderRecord, claimRecord, gateRunRecord } from "../core/attempt-records.js";
import { parseDuration } from "../core/duration.js";
import type { Envelope } from "../core/envelope.js";
import type { EventData, LoopgateEvent } from "../core/events.js";
import { resolveLimits } from "../core/limits.js";
import { planGateChanges } from "../core/observation.js";
import { buildRequiredFix, type Feedback } from "../core/required-fix.js";
import { attemptPassed, gatesPassed } from "../core/run-decider.js";
import { judgeRules } from "../core/task.js";
import { judgeRequiredFix, runJudge } from "../judge/judge.js";
import { deliverablesDiff } from "../judge/judge-diff.js";
import { limitStop } from "../sandbox/process-limits.js";
import { runAgentPhase } from "./agent-phase.js";
import { runGateFresh } from "./gate-run.js";
import { observePhase } from "./observe-phase.js";
import { preflight } from "./preflight.js";
import { failRun, finishRun, type RunContext } from "./run-context.js";
import { RunStoppedError } from "./run-journal.js";
import { pristineId } from "./run-log.js";

export { lastObservationId } from "./run-log.js";

/**
 * Drives a run from wherever its log says it is to its envelope: start the next attempt, run the
 * builder, observe, run every gate. A resumed run re-enters here; every step is decided from the log.
 */
export async function driveRun(ctx: RunContext): Promise<Envelope> {
  try {
    return await drive(ctx);
  } catch (e) {
    // An event the log refused: the journal already recorded TOOL_FAILURE and the verdict.
    if (e instanceof RunStoppedError && ctx.journal.current.finished) return finishRun(ctx);
    throw e;
  }
}

async function drive(ctx: RunContext): Promise<Envelope> {
  const { journal, reporter: rep } = ctx;
  const task = ctx.loaded.task;
  const feedback: Record<string, Feedback> = Object.fromEntries(ctx.gates.map((g) => [g.id, g.feedback]));
  if (!journal.current.finished && !journal.current.infrastructure) {
    const missing = preflight(ctx);
    if (missing) return failRun(ctx, missing);
  }
  for (;;) {
    const st = journal.current;
    if (st.finished) return finishRun(ctx);
    if (st.infrastructure || st.capReached) return finishRun(ctx);
    if (ctx.signal?.aborted)
      return failRun(ctx, `interrupted (${String(ctx.signal.reason ?? "aborted")}); the run did not finish`, {
        interrupted: true,
      });
    const n = st.attempts.length;
    const open = n > 0 && !st.attempts[n - 1]?.closed;
    const events = attemptEvents(journal.events, n);
    if (!open) {
      if (n > 0 && attemptPassed(st, n)) return finishRun(ctx);
      if (n >= st.maxAttempts) return finishRun(ctx);
      let fix: string | null = null;
      if (n > 0) {
        const issued = journal.events.findLast((e) => e.type === "required_fix_issued");
        if (issued?.type === "required_fix_issued" && issued.data.attempt === n) fix = issued.data.text;
        else {
          const gateRuns = journal.events.filter(
            (e) => e.type === "gate_run_finished" && e.data.attempt === n,
          );
          const findings = journal.events.filter(
            (e) => e.type === "finding_recorded" && e.data.attempt === n,
          );
          const judged = journal.events.findLast((e) => e.type === "judge_finished" && e.data.attempt === n);
          fix =
            judged?.type === "judge_finished" && gatesPassed(st, n)
              ? judgeRequiredFix(n, judged.data, judgeRules(task), await attemptDiff(ctx, n))
              : buildRequiredFix({
                  attempt: n,
                  gates: gateRuns.map((e) => e.data as EventData<"gate_run_finished">),
                  feedback,
                  findings: findings.map((e) => e.data as EventData<"finding_recorded">),
                  deliverables: task.deliverables,
                });
          await journal.record({ type: "issue_required_fix", text: fix });
        }
      }
      await journal.record({ type: "start_attempt", requiredFix: fix });
      rep.attemptStarted?.(n + 1, st.maxAttempts);
      continue;
    }
    const builderDone = events.some((e) => e.type === "builder_finished");
    if (!builderDone && !ctx.workFrom) {
      const stop = await runBuilderPhase(ctx, n);
      if (stop) return stop;
      continue;
    }
    const observed = events.findLast(
      (e) => e.type === "workspace_observed" && e.data.phase === "after_builder",
    );
    if (!observed) {
      const stop = await observePhase(ctx, n);
      if (stop) return stop;
      continue;
    }
    const pristine = await ctx.observations.get(pristineId(journal.events));
    const after = await ctx.observations.get(
      (observed.data as EventData<"workspace_observed">).observation_id,
    );
    const plan = planGateChanges(pristine, after, {
      deliverables: task.deliverables,
      protected: task.protected,
    });
    const done = new Set(
      events
        .filter((e) => e.type === "gate_run_finished")
        .map((e) => (e.data as { gate_id: string }).gate_id),
    );
    const gate = ctx.gates.find((g) => !done.has(g.id));
    if (!gate) {
      if (st.judgeRequired && gatesPassed(st, n) && !events.some((e) => e.type === "judge_finished")) {
        const stop = await judgePhase(ctx, n, plan, events);
        if (stop) return stop;
        continue;
      }
      await journal.record({ type: "finish_attempt" });
      continue;
    }
    const i = ctx.gates.indexOf(gate);
    rep.gateStarted?.(n, gate.id);
    let result: Awaited<ReturnType<typeof gate.run>>;
    try {
      result = await runGateFresh(
        ctx,
        gate,
        n,
        `${n}-${i}-${gate.id}`,
        { pristine, after, plan },
        ctx.testFloors[gate.id],
      );
    } catch (e) {
      return failRun(
        ctx,
        `gate ${gate.id}: building or running its environment failed: ${(e as Error).message}`,
      );
    }
    if (ctx.signal?.aborted) continue;
    const { infrastructure, ...data } = result;
    await journal.record(
      { type: "record_gate", data: gateRunRecord({ attempt: n, gate_id: gate.id, ...data }) },
      "gate",
    );
    rep.gateFinished?.(n, gate.id, result);
    if (infrastructure) return failRun(ctx, infrastructure);
  }
}

/** The required fix the latest attempt started with (null on attempt 1). */
export function currentRequiredFix(events: readonly LoopgateEvent[]): string | null {
  const e = events.findLast((x) => x.type === "attempt_started");
  return e?.type === "attempt_started" ? e.data.required_fix : null;
}

/** Runs the builder of attempt `n` (an external command, the oracle, or the built-in agent). */
async function runBuilderPhase(ctx: RunContext, n: number): Promise<Envelope | null> {
  const { journal, reporter: rep, builder } = ctx;
  const task = ctx.loaded.task;
  const fix = currentRequiredFix(journal.events);
  if (builder.agent) {
    const outcome = await runAgentPhase(ctx, n, fix);
    // Interrupted: the driver's next step records it (TOOL_FAILURE "interrupted (SIGINT)").
    if (outcome.kind === "interrupted") return null;
    if (outcome.kind === "model_failed") return failRun(ctx, outcome.reason);
    if (outcome.kind === "capped") {
      await journal.record({ type: "finish_attempt" });
      return finishRun(ctx);
    }
    const u = agentUsage(attemptEvents(journal.events, n));
    const claim = claimRecord(n, outcome.text);
    await journal.record({
      type: "record_builder",
      data: builderRecord(n, {
        exitCode: 0,
        signal: null,
        timedOut: false,
        durationMs: 0,
        output: `${u.responses} model responses`,
      }),
      ...(claim ? { claim } : {}),
    });
    return null;
  }
  const promptDir = join(ctx.runDir, `prompt-${n}`);
  await mkdir(promptDir, { recursive: true });
  const promptFile = join(promptDir, "prompt.md");
  await writeFile(promptFile, `${task.prompt}${fix ? `\n\n## Required fix\n\n${fix}\n` : ""}`);
  rep.builderStarted?.(n, builder.descriptor.command ?? builder.descriptor.kind);
  const r = await builder.run({
    runId: journal.runId,
    attempt: n,
    runDir: ctx.runDir,
    workspace: ctx.workspace,
    prompt: task.prompt,
    promptFile,
    requiredFix: fix,
    sandbox: ctx.sandbox,
    allowEnv: ctx.allowEnv,
    mounts: ctx.mounts,
    masked: ctx.masked,
    network: ctx.network,
    timeoutMs: parseDuration(task.builder.timeout) ?? 600_000,
    limits: resolveLimits(task.limits),
    ...(rep.builderOutput ? { onOutput: rep.builderOutput } : {}),
    ...(rep.note ? { onNote: rep.note } : {}),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    onRuntimeFact: async (event) => {
      await journal.record({ type: "record_agent_runtime", event });
    },
    onFinding: async (f) => {
      const finding = { attempt: journal.current.attempts.length, ...f };
      await journal.record({ type: "record_finding", data: finding });
      rep.findings?.(finding.attempt, [finding]);
    },
  });
  // Killed by the interrupt: that is not the builder's result. Nothing is recorded, so a resume rolls the
  // workspace back and runs the builder again; the driver records the interrupt.
  if (ctx.signal?.aborted) return null;
  const claim = claimRecord(n, r.claim ?? r.output);
  await journal.record({
    type: "record_builder",
    data: builderRecord(n, r),
    ...(claim ? { claim } : {}),
  });
  rep.builderFinished?.(n, { exitCode: r.exitCode, timedOut: r.timedOut, durationMs: r.durationMs });
  if (r.infrastructure) return failRun(ctx, r.infrastructure);
  const stopped = limitStop(r.exitCode, r.signal, resolveLimits(task.limits));
  if (stopped) {
    const finding = { attempt: n, code: "limit_exceeded", severity: "blocking" as const, detail: stopped };
    await journal.record({ type: "record_finding", data: finding });
    rep.findings?.(n, [finding]);
  }
  return null;
}

/** The diff of attempt `n`'s deliverables against pristine, as the gates saw it. */
async function attemptDiff(ctx: RunContext, n: number): Promise<string> {
  const observed = attemptEvents(ctx.journal.events, n).findLast(
    (e) => e.type === "workspace_observed" && e.data.phase === "after_builder",
  );
  if (observed?.type !== "workspace_observed") return "";
  const pristine = await ctx.observations.get(pristineId(ctx.journal.events));
  const after = await ctx.observations.get(observed.data.observation_id);
  const task = ctx.loaded.task;
  const plan = planGateChanges(pristine, after, {
    deliverables: task.deliverables,
    protected: task.protected,
  });
  return deliverablesDiff(plan, ctx.pristineDir, ctx.workspace);
}

/** Consults the judge on attempt `n`, whose gates all passed: a fresh session that can only veto. */
async function judgePhase(
  ctx: RunContext,
  n: number,
  plan: ReturnType<typeof planGateChanges>,
  events: readonly LoopgateEvent[],
): Promise<Envelope | null> {
  const task = ctx.loaded.task;
  if (!ctx.judge || !task.judge)
    return failRun(ctx, "the task configures a judge but the run has no judge model");
  const claim = events.findLast((e) => e.type === "claim_recorded");
  const verdict = await runJudge(
    ctx.judge,
    {
      prompt: task.prompt,
      diff: await deliverablesDiff(plan, ctx.pristineDir, ctx.workspace),
      gateLogs: events.flatMap((e) =>
        e.type === "gate_run_finished"
          ? [{ id: e.data.gate_id, passed: e.data.passed, log: e.data.log_excerpt }]
          : [],
      ),
      finalMessage: claim?.type === "claim_recorded" ? claim.data.text : "",
      rules: judgeRules(task),
    },
    parseDuration(task.judge.timeout) ?? 120_000,
    ctx.signal,
  );
  // An interrupted judge did not decide: nothing is recorded and the driver records the interrupt.
  if (ctx.signal?.aborted) return null;
  await ctx.journal.record({ type: "record_judge", data: { attempt: n, ...verdict } }, "judge");
  return null;
}
