import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { agentUsage, attemptEvents } from "../../../core/run/agent-projections.js";
import { builderRecord, claimRecord } from "../../../core/run/attempt-records.js";
import type { Envelope } from "../../../core/run/envelope.js";
import { limitStop } from "../../../sandbox/process-limits.js";
import { dependencyMounts } from "../context/dependencies.js";
import { failRun, finishRun, type RunContext } from "../context/run-context.js";

/** Runs the builder of attempt `n` (an external command, the oracle, or the built-in agent). */
export async function runBuilderPhase(
  ctx: RunContext,
  n: number,
  fix: string | null,
): Promise<Envelope | null> {
  const { journal, reporter: rep, builder } = ctx;
  const task = ctx.loaded.task;
  const resolved = ctx.loaded.resolved;
  if (builder.agent) {
    // The built-in agent's turn loop (agent/, the AI SDK) is loaded only by a run that chose it.
    const { runAgentPhase } = await import("./agent-phase.js");
    const outcome = await runAgentPhase(ctx, n, fix);
    // Interrupted: the driver's next step records it (TOOL_FAILURE "interrupted (SIGINT)").
    if (outcome.kind === "interrupted") return null;
    if (outcome.kind === "model_failed" || outcome.kind === "tool_failure")
      return failRun(ctx, outcome.reason);
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
    ...(ctx.dependencies.length ? { dependencies: dependencyMounts(ctx.dependencies, ctx.workspace) } : {}),
    network: ctx.network,
    timeoutMs: resolved.builder.timeoutMs,
    limits: resolved.limits,
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
  // Killed at a process limit: the blocking finding goes into the builder's own append, so no crash
  // can separate the two (a resume would otherwise gate work that broke a limit).
  const stopped = r.infrastructure ? null : limitStop(r.exitCode, r.signal, resolved.limits);
  const findings = stopped
    ? [{ attempt: n, code: "limit_exceeded", severity: "blocking" as const, detail: stopped }]
    : [];
  await journal.record({
    type: "record_builder",
    data: builderRecord(n, r),
    ...(claim ? { claim } : {}),
    ...(findings.length ? { findings } : {}),
    ...(r.infrastructure ? { infrastructure: r.infrastructure } : {}),
  });
  rep.builderFinished?.(n, { exitCode: r.exitCode, timedOut: r.timedOut, durationMs: r.durationMs });
  if (r.infrastructure) return failRun(ctx, r.infrastructure);
  if (findings.length) rep.findings?.(n, findings);
  return null;
}
