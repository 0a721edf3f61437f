import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { agentUsage, attemptEvents } from "../agent/agent-state.js";
import {
  builderRecord,
  claimRecord,
  findingRecord,
  gateRunRecord,
  pathList,
} from "../core/attempt-records.js";
import { parseDuration } from "../core/duration.js";
import type { Envelope } from "../core/envelope.js";
import { InfrastructureError } from "../core/errors.js";
import type { EventData, LoopgateEvent } from "../core/events.js";
import { describeUncovered, uncoveredProtected } from "../core/glob-coverage.js";
import { LimitExceededError, resolveLimits } from "../core/limits.js";
import { diffObservations, type Observation, planGateChanges } from "../core/observation.js";
import { buildRequiredFix, type Feedback } from "../core/required-fix.js";
import { attemptPassed, gatesPassed } from "../core/run-decider.js";
import { judgeRules } from "../core/task.js";
import { judgeRequiredFix, runJudge } from "../judge/judge.js";
import { deliverablesDiff } from "../judge/judge-diff.js";
import { limitStop } from "../sandbox/process-limits.js";
import { WorkspaceObserver } from "../workspace/observer.js";
import { clearPrivilegedBits } from "../workspace/private-modes.js";
import { runAgentPhase } from "./agent-phase.js";
import { runGateFresh } from "./gate-run.js";
import { preflight } from "./preflight.js";
import { failRun, finishRun, type RunContext } from "./run-context.js";
import { RunStoppedError } from "./run-journal.js";

/** The id of the last observation recorded of `phase` (or by the agent), scanning backwards. */
export function lastObservationId(events: readonly LoopgateEvent[]): string | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.type === "workspace_touched") return e.data.observation_id;
    if (e?.type === "workspace_observed") return e.data.observation_id;
  }
  return null;
}

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

function pristineId(events: readonly LoopgateEvent[]): string {
  const e = events.find((x) => x.type === "workspace_observed" && x.data.phase === "pristine");
  if (e?.type !== "workspace_observed")
    throw new InfrastructureError("the run's log has no pristine observation");
  return e.data.observation_id;
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
  });
  // Killed by the interrupt: that is not the builder's result. Nothing is recorded, so a resume rolls the
  // workspace back and runs the builder again; the driver records the interrupt.
  if (ctx.signal?.aborted) return null;
  const claim = claimRecord(n, r.output);
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

/** Observes the workspace after the builder, records the diff against pristine and the findings. */
async function observePhase(ctx: RunContext, n: number): Promise<Envelope | null> {
  const { journal, reporter: rep } = ctx;
  const task = ctx.loaded.task;
  let after: Observation;
  let findings: EventData<"finding_recorded">[] = [];
  const before = lastObservationId(journal.events);
  try {
    if (!existsSync(ctx.workspace))
      throw new InfrastructureError(`the run workspace ${ctx.workspace} disappeared`);
    const t0 = performance.now();
    after = await new WorkspaceObserver(ctx.workspace, {
      cacheFile: join(ctx.runDir, "observer-cache.json"),
      limits: resolveLimits(task.limits),
    }).observe();
    await ctx.observations.put(after);
    await ctx.blobs.save(after, ctx.workspace);
    // Recorded as observed (the privileged_mode_bit finding below says so), then cleared on disk.
    clearPrivilegedBits(ctx.workspace, after);
    const duration = Math.round(performance.now() - t0);
    const pristine = await ctx.observations.get(pristineId(journal.events));
    const diff = diffObservations(pristine, after);
    const plan = planGateChanges(pristine, after, {
      deliverables: task.deliverables,
      protected: task.protected,
    });
    findings = plan.findings.map((f) =>
      findingRecord({ attempt: n, code: f.code, severity: f.severity, path: f.path, detail: f.detail }),
    );
    // Repeated on every attempt, so the final attempt's envelope still shows it.
    const paths = pristine.entries.map((e) => e.path);
    for (const u of uncoveredProtected(task.protected, paths))
      findings.push(
        findingRecord({
          attempt: n,
          code: "protected_glob_matches_nothing",
          severity: "warning",
          detail: describeUncovered(u, task.workspace),
        }),
      );
    await journal.record({
      type: "record_observation",
      data: {
        attempt: n,
        phase: "after_builder",
        observation_id: after.id,
        entries: after.entries.length,
        duration_ms: duration,
      },
      changes: {
        attempt: n,
        added: pathList(diff.added),
        modified: pathList(diff.modified),
        removed: pathList(diff.removed),
        type_changed: pathList(diff.typeChanged),
      },
      findings,
    });
  } catch (e) {
    if (e instanceof LimitExceededError) return limitExceeded(ctx, n, e);
    return failRun(ctx, `observing the workspace failed: ${(e as Error).message}`);
  }
  if (findings.length) rep.findings?.(n, findings);
  // A builder that changed nothing and failed the way a program that never started fails: another
  // attempt would fail the same way, so the run stops here instead of blaming the work.
  if (after.id === before && ctx.builder.cannotStart) {
    const ran = attemptEvents(journal.events, n).findLast((e) => e.type === "builder_finished");
    if (ran?.type === "builder_finished") {
      const why = ctx.builder.cannotStart({
        exitCode: ran.data.exit_code,
        signal: ran.data.signal,
        timedOut: ran.data.timed_out,
        durationMs: ran.data.duration_ms,
        output: ran.data.output_excerpt,
        infrastructure: null,
      });
      if (why) return failRun(ctx, why);
    }
  }
  return null;
}

/**
 * The builder left more than the task's limits allow: observation stopped early, so the attempt has
 * no observation for the gates; it fails with a blocking finding naming the limit (the builder's
 * failure, never loopgate's), and a next attempt gets it as its required fix.
 */
async function limitExceeded(ctx: RunContext, n: number, e: LimitExceededError): Promise<null> {
  const finding: EventData<"finding_recorded"> = {
    attempt: n,
    code: "limit_exceeded",
    severity: "blocking",
    ...(e.path ? { path: e.path.slice(0, 1000) } : {}),
    detail: `${e.message.slice(0, 1500)}; the gates did not run. Remove what is not part of the change, or raise limits.${e.limit} in the task file`,
  };
  await ctx.journal.record({ type: "record_finding", data: finding });
  ctx.reporter.findings?.(n, [finding]);
  await ctx.journal.record({ type: "finish_attempt" });
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
