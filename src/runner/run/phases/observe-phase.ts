import { existsSync } from "node:fs";
import { join } from "node:path";
import type { EventData } from "../../../core/events/loopgate-event.js";
import { InfrastructureError } from "../../../core/kernel/errors.js";
import { planGateChanges } from "../../../core/observation/gate-change-plan.js";
import { describeUncovered, uncoveredProtected } from "../../../core/observation/glob-coverage.js";
import { diffObservations, type Observation } from "../../../core/observation/observation.js";
import { findingRecord, pathList } from "../../../core/run/attempt-records.js";
import type { Envelope } from "../../../core/run/envelope.js";
import { LimitExceededError } from "../../../core/task/limits.js";
import { gateChangeRules } from "../../../core/task/task.js";
import { clearPrivilegedBits } from "../../../workspace/private-modes.js";
import { failRun, type RunContext } from "../context/run-context.js";
import { keepObservation } from "../context/shared-content.js";
import { filesToKeep, pristineObservation, runObserver } from "../context/workspace-layout.js";
import { ofAttempt } from "./judge-phase.js";

/** Observes the workspace after the builder, records the diff against pristine and the findings. */
export async function observePhase(ctx: RunContext, n: number): Promise<Envelope | null> {
  const { journal, reporter: rep } = ctx;
  const task = ctx.loaded.task;
  let after: Observation;
  let findings: EventData<"finding_recorded">[] = [];
  let why: string | null = null;
  const before = journal.current.lastObservationId;
  try {
    if (!existsSync(ctx.workspace))
      throw new InfrastructureError(`the run workspace ${ctx.workspace} disappeared`);
    const t0 = performance.now();
    const observer = await runObserver(ctx, {
      cacheFile: join(ctx.runDir, "observer-cache.json"),
      limits: ctx.loaded.resolved.limits,
    });
    after = await observer.observe();
    await keepObservation(ctx, after, ctx.workspace, filesToKeep(observer));
    // Recorded as observed (the privileged_mode_bit finding below says so), then cleared on disk.
    clearPrivilegedBits(ctx.workspace, after);
    const duration = Math.round(performance.now() - t0);
    const pristine = await pristineObservation(ctx);
    const diff = diffObservations(pristine, after);
    const plan = planGateChanges(pristine, after, gateChangeRules(task));
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
    why = after.id === before ? cannotStart(ctx, n) : null;
    // The reason the run stops goes into the observation's own append: no crash can separate them.
    await journal.record({
      type: "record_observation",
      ...(why ? { infrastructure: why } : {}),
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
  return why ? failRun(ctx, why) : null;
}

/**
 * A builder that changed nothing and failed the way a program that never started fails: another
 * attempt would fail the same way, so the run stops here instead of blaming the work.
 */
function cannotStart(ctx: RunContext, n: number): string | null {
  const ran = ofAttempt(ctx, "builder_finished", n).at(-1);
  if (!ran || !ctx.builder.cannotStart) return null;
  return ctx.builder.cannotStart({
    exitCode: ran.exit_code,
    signal: ran.signal,
    timedOut: ran.timed_out,
    durationMs: ran.duration_ms,
    output: ran.output_excerpt,
    infrastructure: null,
  });
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
  // One append: no crash can leave the attempt open without an observation to gate.
  await ctx.journal.record({ type: "finish_attempt", findings: [finding] });
  ctx.reporter.findings?.(n, [finding]);
  return null;
}
