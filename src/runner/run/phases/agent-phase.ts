import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { type AgentOutcome, describeGoal, runAgentAttempt } from "../../../agent/agent-loop.js";
import { createSelfCheck, sourceGuardContext } from "../../../agent/self-check/self-check.js";
import { MAX_STEP_CHECKS } from "../../../agent/todo/step-work.js";
import { createTodoTool } from "../../../agent/todo/todo-tool.js";
import { defaultTools } from "../../../agent/tools/tool-registry.js";
import { feedbackOutcome } from "../../../core/run/required-fix.js";
import { LimitExceededError } from "../../../core/task/limits.js";
import type { GoalPredicate } from "../../../core/task/task.js";
import { WorkspaceObserver } from "../../../workspace/observer.js";
import { assertRealpathInside } from "../../../workspace/safe-path.js";
import type { RunContext } from "../context/run-context.js";
import { pristineId } from "../context/run-log.js";
import { keepObservation } from "../context/shared-content.js";
import { filesToKeep, runObserver } from "../context/workspace-layout.js";
import { gateState } from "./attempt-inputs.js";
import { runGateFresh } from "./gate-run.js";

const SYSTEM = `You are a coding agent working inside a sandboxed copy of a repository (your working directory).
Use the tools to inspect and change files and to run commands. Work until the task is really done, then
answer without calling tools. loopgate checks your work with tests you cannot see; saying that you are done,
or that tests pass, does not make it so: only what loopgate observes counts.`;

/**
 * The longest one tool call of the built-in agent may run: bash's own `timeout_seconds` goes up to 600.
 * Not the task's builder.timeout, which bounds an external builder's whole run; the agent's run is
 * bounded by its budget (turns, steps, tokens, cost, wall time).
 */
const TOOL_CALL_TIMEOUT_MS = 600_000;

/** Runs (or continues) the built-in agent's turn loop for attempt `n`, wired to the run's log and workspace. */
export async function runAgentPhase(
  ctx: RunContext,
  n: number,
  requiredFix: string | null,
): Promise<AgentOutcome> {
  const agent = ctx.builder.agent;
  if (!agent) throw new Error("runAgentPhase needs the built-in agent");
  const task = ctx.loaded.task;
  const observer = await runObserver(ctx, {
    cacheFile: join(ctx.runDir, "observer-cache.json"),
    limits: ctx.loaded.resolved.limits,
  });
  const goal = task.goal ? { condition: task.goal.condition ?? null, predicates: task.goal.all } : null;
  const prompt = [
    task.prompt,
    goal ? `\n${describeGoal(goal)}` : "",
    requiredFix ? `\n\n## Required fix\n\n${requiredFix}` : "",
  ].join("");
  const wall = ctx.loaded.resolved.wallTimeMs;
  const startedAt = Date.parse(ctx.journal.events[0]?.meta.at ?? new Date().toISOString());
  return runAgentAttempt({
    attempt: n,
    prompt,
    system: SYSTEM,
    model: agent.model,
    tools: [
      ...defaultTools,
      createTodoTool({ attempt: n, events: () => ctx.journal.events, checks: agent.stepChecks !== false }),
    ],
    toolCtx: {
      workspace: ctx.workspace,
      sandbox: ctx.sandbox,
      network: ctx.network,
      timeoutMs: TOOL_CALL_TIMEOUT_MS,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(ctx.dependencies.length
        ? { dependencies: ctx.dependencies.map(({ source, path }) => ({ source, path })) }
        : {}),
    },
    goal,
    budget: {
      turns: agent.maxTurns ?? task.budget.turns,
      stepsPerTurn: task.budget.steps_per_turn,
      ...(task.budget.tokens !== undefined ? { tokens: task.budget.tokens } : {}),
      ...((agent.maxCostUsd ?? task.budget.cost_usd) !== undefined
        ? { costUsd: agent.maxCostUsd ?? task.budget.cost_usd }
        : {}),
      ...(wall ? { wallMs: wall } : {}),
      modelRetries: 3,
    },
    record: async (event, origin, more) => {
      await ctx.journal.record({ type: "record_agent", event, ...(more?.length ? { more } : {}) }, origin);
    },
    events: () => ctx.journal.events,
    observeAfter: async () => {
      // Over a limit, the walk stopped early and nothing is kept; the observation after the attempt
      // records limit_exceeded and fails it, so the agent's turn goes on unobserved until then.
      const obs = await observer.observe().catch((e: unknown) => {
        if (e instanceof LimitExceededError) return null;
        throw e;
      });
      if (!obs) return null;
      if (obs.id === ctx.journal.current.lastObservationId) return null;
      await keepObservation(ctx, obs, ctx.workspace, filesToKeep(observer));
      return obs.id;
    },
    probe: (p) => probe(ctx, n, p),
    runStartedAt: startedAt,
    now: () => ctx.clock().getTime(),
    sleep: (ms) => abortableSleep(ms, ctx.signal),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    ...(ctx.reporter.agentStep ? { onStep: ctx.reporter.agentStep } : {}),
    stepChecks: {
      enabled: agent.stepChecks !== false,
      max: Math.min(task.budget.step_checks ?? MAX_STEP_CHECKS, MAX_STEP_CHECKS),
    },
    ...(agent.stepEscalation ? { stepEscalation: agent.stepEscalation } : {}),
    ...(task.self_check === "required"
      ? {
          selfCheck: createSelfCheck({
            attempt: n,
            cap: task.budget.repairs ?? 1,
            guard: sourceGuardContext({
              env: process.env,
              allowEnv: ctx.allowEnv,
              hidden: ctx.loaded.hidden,
              nonPublic: [ctx.runDir, ctx.loaded.dir],
            }),
            events: () => ctx.journal.events,
            observe: () => observer.observe(),
            pristine: () => ctx.observations.get(pristineId(ctx.journal.current)),
          }),
        }
      : {}),
  });
}

/** Waits `ms`, or less when `signal` aborts first; the timer never outlives the wait. */
export function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** loopgate's own check of a file or gate predicate, on the workspace as it is now. */
async function probe(
  ctx: RunContext,
  n: number,
  p: GoalPredicate,
): Promise<{ holds: boolean; detail: string }> {
  if ("file_exists" in p) {
    try {
      await assertRealpathInside(ctx.workspace, p.file_exists);
      await lstat(join(ctx.workspace, p.file_exists));
      return { holds: true, detail: `${p.file_exists} exists in the workspace` };
    } catch (e) {
      return { holds: false, detail: `${p.file_exists}: ${(e as Error).message}` };
    }
  }
  if ("gate_passed" in p) {
    const gate = ctx.gates.find((g) => g.id === p.gate_passed);
    if (!gate) return { holds: false, detail: `no gate ${p.gate_passed}` };
    const pristine = await ctx.observations.get(pristineId(ctx.journal.current));
    const now = await new WorkspaceObserver(ctx.workspace).observe();
    const r = await runGateFresh(
      ctx,
      gate,
      n,
      `goal-${n}-${gate.id}`,
      gateState(ctx.loaded.task, pristine, now),
    );
    // The detail follows the gate's feedback setting (summary: passed or not passed, no figure); it is audit only
    // and never shown to the model.
    const detail =
      gate.feedback === "log"
        ? r.log_excerpt.slice(-1500)
        : gate.feedback === "summary"
          ? feedbackOutcome(r, "summary")
          : "";
    return { holds: r.passed, detail };
  }
  return { holds: false, detail: "command predicates are judged from recorded tool calls, not probed" };
}
