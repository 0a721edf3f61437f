import { ConcurrencyError } from "../../core/kernel/errors.js";
import { gateRunRecord } from "../../core/run/attempt-records.js";
import type { Envelope } from "../../core/run/envelope.js";
import { nextRunStep, type StepTask } from "../../core/run/run-step.js";
import { gateIdentity } from "../../core/task/task-lock.js";
import { detachOverlay, overlayOf } from "../../workspace/overlay-workspace.js";
import { RunStoppedError } from "../stream/run-journal.js";
import { failRun, finishRun, type RunContext } from "./context/run-context.js";
import { attemptInputs } from "./phases/attempt-inputs.js";
import { runBuilderPhase } from "./phases/builder-phase.js";
import { runGateFresh } from "./phases/gate-run.js";
import { judgePhase } from "./phases/judge-phase.js";
import { observePhase } from "./phases/observe-phase.js";
import { preflight } from "./phases/preflight.js";
import { prepareRun } from "./phases/prepare-run.js";
import { startAttemptPhase } from "./phases/start-attempt-phase.js";

/**
 * Drives a run from wherever its log says it is to its envelope. Each step is decided in core/ by
 * `nextRunStep` from the folded log alone, so a resumed run re-enters here and carries on; the phase
 * functions do the I/O and record what happened through the decider.
 */
export async function driveRun(ctx: RunContext): Promise<Envelope> {
  try {
    return await drive(ctx);
  } catch (e) {
    // An event the log refused: the journal already recorded TOOL_FAILURE and the verdict.
    if (e instanceof RunStoppedError && ctx.journal.current.finished) return finishRun(ctx);
    if (!anotherOwner(ctx, e)) releaseWorkspace(ctx);
    throw e;
  }
}

/**
 * Whether the run may have another owner now: this process lost its lease, or the log refused an append
 * because someone else appended. That owner may be on this machine and using the run's overlay.
 */
function anotherOwner(ctx: RunContext, e: unknown): boolean {
  if (ctx.leaseLost?.aborted) return true;
  for (let c: unknown = e; c instanceof Error; c = c.cause) if (c instanceof ConcurrencyError) return true;
  return false;
}

/**
 * A run that stops on an error of its own (and still owns itself) leaves no mount behind: its changes
 * stay in its upper layer and `loopgate resume` mounts it again. Best effort: the error that stopped
 * the run is the one to report, and gc or a resume releases a mount left here.
 */
function releaseWorkspace(ctx: RunContext): void {
  try {
    const o = overlayOf(ctx.runDir);
    if (o) detachOverlay(o);
  } catch {
    // Left mounted; see above.
  }
}

async function drive(ctx: RunContext): Promise<Envelope> {
  const { journal } = ctx;
  const task: StepTask = { gates: ctx.gates.map((g) => g.id) };
  const inputs = attemptInputs(ctx);
  let checked = false;
  for (;;) {
    const st = journal.current;
    const step = nextRunStep(st, task);
    if (step.kind === "finish_run") return finishRun(ctx);
    if (step.kind === "prepare") {
      const stop = await prepareRun(ctx);
      if (stop) return stop;
      continue;
    }
    // What is known to be missing is reported before anything runs (and after the run is prepared).
    if (!checked) {
      checked = true;
      const missing = st.infrastructure === null ? preflight(ctx) : null;
      if (missing) return failRun(ctx, missing);
    }
    // A lost lease: another owner drives the run now; this process stops and records nothing more.
    if (ctx.leaseLost?.aborted) throw ctx.leaseLost.reason;
    if (ctx.signal?.aborted)
      return failRun(ctx, `interrupted (${String(ctx.signal.reason ?? "aborted")}); the run did not finish`, {
        interrupted: true,
      });
    let stop: Envelope | null = null;
    switch (step.kind) {
      case "start_attempt":
        await startAttemptPhase(ctx, step.attempt, step.fix, inputs);
        break;
      case "run_builder":
        stop = await runBuilderPhase(ctx, step.attempt, step.requiredFix);
        break;
      case "observe":
        stop = await observePhase(ctx, step.attempt);
        break;
      case "run_gate":
        stop = await gatePhase(ctx, step, await inputs(step.afterObservationId));
        break;
      case "consult_judge":
        stop = await judgePhase(ctx, step.attempt, await inputs(step.afterObservationId));
        break;
      case "finish_attempt":
        await journal.record({ type: "finish_attempt" });
        break;
      default: {
        const never: never = step;
        return never;
      }
    }
    if (stop) return stop;
  }
}

/** Runs one gate of the attempt in its fresh environment and records its result. */
async function gatePhase(
  ctx: RunContext,
  step: { attempt: number; gateId: string; index: number },
  inputs: Awaited<ReturnType<ReturnType<typeof attemptInputs>>>,
): Promise<Envelope | null> {
  const n = step.attempt;
  const gate = ctx.gates[step.index];
  if (gate?.id !== step.gateId) throw new Error(`unreachable: gate ${step.gateId} is not at ${step.index}`);
  ctx.reporter.gateStarted?.(n, gate.id);
  let result: Awaited<ReturnType<typeof gate.run>>;
  try {
    result = await runGateFresh(
      ctx,
      gate,
      n,
      `${n}-${step.index}-${gate.id}`,
      inputs,
      ctx.testFloors[gate.id],
      gateIdentity(ctx.identity, gate.id),
    );
  } catch (e) {
    return failRun(
      ctx,
      `gate ${gate.id}: building or running its environment failed: ${(e as Error).message}`,
    );
  }
  // Interrupted: nothing is recorded; the driver's next step records the interrupt.
  if (ctx.signal?.aborted) return null;
  const { infrastructure, ...data } = result;
  // A failed environment is recorded with the gate's result, in one append: no crash can drop it.
  await ctx.journal.record(
    {
      type: "record_gate",
      data: gateRunRecord({ attempt: n, gate_id: gate.id, ...data }),
      ...(infrastructure ? { infrastructure } : {}),
    },
    "gate",
  );
  ctx.reporter.gateFinished?.(n, gate.id, result);
  return infrastructure ? failRun(ctx, infrastructure) : null;
}
