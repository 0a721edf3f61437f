import { randomBytes, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Builder } from "../builders/builder.js";
import { parseDuration } from "../core/duration.js";
import { type Envelope, projectEnvelope } from "../core/envelope.js";
import { InfrastructureError } from "../core/errors.js";
import type { EventData, PathList } from "../core/events.js";
import { isHedgedClaim } from "../core/hedge.js";
import { diffObservations, type Observation, planGateChanges } from "../core/observation.js";
import { buildRequiredFix, type Feedback } from "../core/required-fix.js";
import { buildGateRegistry } from "../gates/registry.js";
import { type SandboxMode, sandboxSelfTest } from "../sandbox/bubblewrap.js";
import type { EventStore } from "../store/event-store.js";
import { copyTree } from "../workspace/copy-tree.js";
import { buildGateEnvironment } from "../workspace/gate-environment.js";
import { ObservationStore } from "../workspace/observation-store.js";
import { WorkspaceObserver } from "../workspace/observer.js";
import type { LoadedTask } from "./load-task.js";
import type { RunReporter } from "./reporter.js";
import { RunJournal } from "./run-journal.js";

/** Everything one run needs; effects (clock, ids) are injectable for tests. */
export interface RunTaskOptions {
  loaded: LoadedTask;
  builder: Builder;
  store: EventStore;
  /** The folder that holds the event log; runs live in `<storeDir>/runs/<run id>/`. */
  storeDir: string;
  sandbox: SandboxMode;
  allowEnv?: readonly string[];
  mounts?: readonly string[];
  network?: boolean;
  /** Use this folder's contents as the work instead of running a builder (`loopgate verify`). */
  workFrom?: string;
  maxAttempts?: number;
  reporter?: RunReporter;
  clock?: () => Date;
  runId?: string;
  /** Aborting stops the run at once: running processes are killed and the run ends in TOOL_FAILURE. */
  signal?: AbortSignal;
}

/** A sortable, readable run id: `20261129-221530-3fa9c1`. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

const bounded = (paths: string[]): PathList => ({ paths: paths.slice(0, 200), total: paths.length });
let selfTestPassed = false;

/** Runs a task to its envelope: attempts of builder → observation → gates, each fact appended first. */
export async function runTask(o: RunTaskOptions): Promise<Envelope> {
  const { loaded, builder, reporter: rep = {} } = o;
  const { task } = loaded;
  const runId = o.runId ?? newRunId();
  const journal = new RunJournal(o.store, runId, o.clock ?? (() => new Date()), randomUUID);
  const runDir = join(o.storeDir, "runs", runId);
  const maxAttempts = o.workFrom ? 1 : (o.maxAttempts ?? task.budget.attempts);
  const gates = buildGateRegistry(task, loaded.dir);
  await journal.record({
    type: "start_run",
    data: {
      task_id: task.id,
      task_path: loaded.file,
      task_digest: loaded.digest,
      builder: o.workFrom ? { kind: "workspace", command: o.workFrom } : builder.descriptor,
      max_attempts: maxAttempts,
      gates: gates.map((g) => ({ id: g.id, kind: g.kind })),
      sandbox: o.sandbox,
      run_dir: runDir,
    },
  });
  rep.runStarted?.({ runId, taskId: task.id, maxAttempts, gates: gates.map((g) => g.id) });
  const finish = async () => {
    await journal.record({ type: "finish_run" });
    const envelope = projectEnvelope(runId, journal.events);
    if (!envelope) throw new Error("unreachable: a finished run has an envelope");
    rep.runFinished?.(envelope);
    return envelope;
  };
  const infra = async (reason: string) => {
    await journal.record({ type: "fail_infrastructure", reason });
    return finish();
  };

  const pristineDir = join(runDir, "pristine");
  const workspace = join(runDir, "workspace");
  const observations = new ObservationStore(join(runDir, "observations"));
  let pristine: Observation;
  try {
    if (o.sandbox === "bubblewrap" && !selfTestPassed) {
      await sandboxSelfTest();
      selfTestPassed = true;
    }
    if (!existsSync(loaded.workspace))
      throw new InfrastructureError(`the task workspace ${loaded.workspace} is missing`);
    if (o.workFrom && !existsSync(o.workFrom))
      throw new InfrastructureError(`the workspace ${o.workFrom} is missing`);
    await mkdir(runDir, { recursive: true });
    await copyTree(loaded.workspace, pristineDir);
    await copyTree(o.workFrom ?? loaded.workspace, workspace);
    const t0 = performance.now();
    pristine = await new WorkspaceObserver(pristineDir).observe();
    await observations.put(pristine);
    await journal.record({
      type: "record_observation",
      data: {
        attempt: 0,
        phase: "pristine",
        observation_id: pristine.id,
        entries: pristine.entries.length,
        duration_ms: Math.round(performance.now() - t0),
      },
    });
  } catch (e) {
    return infra(e instanceof InfrastructureError ? e.message : `preparing the run failed: ${String(e)}`);
  }
  const observer = new WorkspaceObserver(workspace, { cacheFile: join(runDir, "observer-cache.json") });
  const feedback: Record<string, Feedback> = Object.fromEntries(gates.map((g) => [g.id, g.feedback]));
  let requiredFix: string | null = null;

  const interrupted = () =>
    o.signal?.aborted
      ? infra(`interrupted (${String(o.signal.reason ?? "aborted")}); the run did not finish`)
      : null;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const stop = interrupted();
    if (stop) return stop;
    await journal.record({ type: "start_attempt", requiredFix });
    rep.attemptStarted?.(attempt, maxAttempts);
    if (!o.workFrom) {
      const promptDir = join(runDir, `prompt-${attempt}`);
      await mkdir(promptDir, { recursive: true });
      const promptFile = join(promptDir, "prompt.md");
      const fixText = requiredFix ? `\n\n## Required fix\n\n${requiredFix}\n` : "";
      await writeFile(promptFile, `${task.prompt}${fixText}`);
      rep.builderStarted?.(attempt, builder.descriptor.command ?? builder.descriptor.kind);
      const r = await builder.run({
        runId,
        attempt,
        workspace,
        prompt: task.prompt,
        promptFile,
        requiredFix,
        sandbox: o.sandbox,
        allowEnv: o.allowEnv ?? [],
        mounts: o.mounts ?? [],
        network: o.network ?? task.builder.network,
        timeoutMs: parseDuration(task.builder.timeout) ?? 600_000,
        ...(rep.builderOutput ? { onOutput: rep.builderOutput } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
      });
      await journal.record({
        type: "record_builder",
        data: {
          attempt,
          exit_code: r.exitCode,
          signal: r.signal,
          timed_out: r.timedOut,
          duration_ms: r.durationMs,
          output_excerpt: r.output.slice(-16_000),
        },
      });
      rep.builderFinished?.(attempt, {
        exitCode: r.exitCode,
        timedOut: r.timedOut,
        durationMs: r.durationMs,
      });
      if (r.infrastructure) return infra(r.infrastructure);
      const stopped = interrupted();
      if (stopped) return stopped;
      const claim = r.output.trim().slice(-2000);
      if (claim)
        await journal.record(
          {
            type: "record_claim",
            data: { attempt, origin: "model", text: claim, hedged: isHedgedClaim(claim) },
          },
          "model",
        );
    }
    let after: Observation;
    try {
      if (!existsSync(workspace)) throw new InfrastructureError(`the run workspace ${workspace} disappeared`);
      const t0 = performance.now();
      after = await observer.observe();
      await observations.put(after);
      await journal.record({
        type: "record_observation",
        data: {
          attempt,
          phase: "after_builder",
          observation_id: after.id,
          entries: after.entries.length,
          duration_ms: Math.round(performance.now() - t0),
        },
      });
    } catch (e) {
      return infra(`observing the workspace failed: ${(e as Error).message}`);
    }
    const diff = diffObservations(pristine, after);
    await journal.record({
      type: "record_changes",
      data: {
        attempt,
        added: bounded(diff.added),
        modified: bounded(diff.modified),
        removed: bounded(diff.removed),
        type_changed: bounded(diff.typeChanged),
      },
    });
    const plan = planGateChanges(pristine, after, {
      deliverables: task.deliverables,
      protected: task.protected,
    });
    const findings: EventData<"finding_recorded">[] = plan.findings.map((f) => ({
      attempt,
      code: f.code,
      severity: f.severity,
      path: f.path,
      detail: f.detail,
    }));
    for (const f of findings) await journal.record({ type: "record_finding", data: f }, "runtime");
    if (findings.length) rep.findings?.(attempt, findings);

    const results: EventData<"gate_run_finished">[] = [];
    for (const [i, gate] of gates.entries()) {
      rep.gateStarted?.(attempt, gate.id);
      const linked = o.sandbox === "bubblewrap" && !gate.writable;
      const envDir = join(runDir, "gate-env", `${attempt}-${i}-${gate.id}`);
      let result: Awaited<ReturnType<typeof gate.run>>;
      try {
        await mkdir(join(runDir, "gate-env"), { recursive: true });
        await buildGateEnvironment({
          pristineDir,
          pristine,
          workspaceDir: workspace,
          workspace: after,
          plan,
          ...(gate.heldout ? { heldoutDir: gate.heldout } : {}),
          destDir: envDir,
          mode: linked ? "link" : "copy",
        });
        result = await gate.run({
          gateEnv: envDir,
          runId,
          attempt,
          taskId: task.id,
          sandbox: o.sandbox,
          readOnly: linked,
          ...(o.signal ? { signal: o.signal } : {}),
        });
      } catch (e) {
        return infra(`gate ${gate.id}: building or running its environment failed: ${(e as Error).message}`);
      } finally {
        await rm(envDir, { recursive: true, force: true });
      }
      const halted = interrupted();
      if (halted) return halted;
      const { infrastructure, ...data } = result;
      const event = { attempt, gate_id: gate.id, ...data, log_excerpt: data.log_excerpt.slice(-16_000) };
      await journal.record({ type: "record_gate", data: event }, "gate");
      results.push(event);
      rep.gateFinished?.(attempt, gate.id, result);
      if (infrastructure) return infra(infrastructure);
    }
    const [done] = await journal.record({ type: "finish_attempt" });
    if (done?.type === "attempt_finished" && done.data.passed) break;
    if (attempt < maxAttempts) {
      requiredFix = buildRequiredFix({
        attempt,
        gates: results,
        feedback,
        findings,
        deliverables: task.deliverables,
      });
      await journal.record({ type: "issue_required_fix", text: requiredFix });
    }
  }
  return finish();
}
