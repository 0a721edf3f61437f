import { randomBytes, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { ModelAdapter } from "../agent/model.js";
import type { Builder } from "../builders/builder.js";
import type { Envelope } from "../core/envelope.js";
import { InfrastructureError, InputError } from "../core/errors.js";
import { describeUncovered, uncoveredProtected } from "../core/glob-coverage.js";
import { runSecrets } from "../core/redact.js";
import { buildGateRegistry } from "../gates/registry.js";
import type { TestFloor } from "../gates/tamper/test-report.js";
import { type SandboxMode, sandboxSelfTest } from "../sandbox/bubblewrap.js";
import type { EventStore } from "../store/event-store.js";
import { copyTree } from "../workspace/copy-tree.js";
import { WorkspaceObserver } from "../workspace/observer.js";
import { mkdirPrivate } from "../workspace/private-modes.js";
import { mountGuards, planBuilderMounts } from "./builder-mounts.js";
import type { LoadedTask } from "./load-task.js";
import type { RunReporter } from "./reporter.js";
import { failRun, type RunContext, runPaths } from "./run-context.js";
import { driveRun } from "./run-driver.js";
import { RunJournal } from "./run-journal.js";
import { keepLease, takeLease, thisOwner } from "./run-lease-keeper.js";
import { testFloorsFor } from "./test-floors.js";

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
  /** See RunContext.gateEnvironment; benchmarks only. */
  gateEnvironment?: "pristine" | "as-built";
  /** The judge's model; required when the task configures a judge. */
  judge?: ModelAdapter;
  /** Test floors recorded by `loopgate task check` apply (default); task check's own oracle run ignores them. */
  useTaskCheckFloors?: boolean;
  /** Set on resume: the floors the run started with. */
  testFloors?: Readonly<Record<string, TestFloor>>;
  /** A goal todo's run: recorded in run_started (the workspace is then that revision's tree). */
  goal?: { id: string; revision: string };
}

/** A sortable, readable run id: `20261129-221530-3fa9c1`. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

let selfTestPassed = false;

/** Proves the sandbox once per process before anything relies on it. */
export async function ensureSandbox(mode: SandboxMode): Promise<void> {
  if (mode === "bubblewrap" && !selfTestPassed) {
    await sandboxSelfTest();
    selfTestPassed = true;
  }
}

/**
 * Builds the driver's context for a run. The builder's mounts are planned here, for a new and a
 * resumed run alike: a mount that would expose the task folder, held-out material or a log is an InputError.
 */
export function runContext(
  o: Omit<RunTaskOptions, "runId" | "maxAttempts">,
  journal: RunJournal,
  runDir: string,
): RunContext {
  const plan = o.workFrom
    ? { mounts: [], user: [], masked: [], notes: [] }
    : planBuilderMounts(o.builder, o.mounts ?? [], mountGuards(o.loaded, o.storeDir));
  for (const note of plan.notes) o.reporter?.note?.(note);
  return {
    loaded: o.loaded,
    builder: o.builder,
    journal,
    runDir,
    ...runPaths(runDir),
    gates: buildGateRegistry(o.loaded.task, o.loaded.dir),
    sandbox: o.sandbox,
    allowEnv: o.allowEnv ?? [],
    mounts: plan.mounts,
    userMounts: plan.user,
    masked: plan.masked,
    network: o.network ?? o.loaded.task.builder.network,
    workFrom: o.workFrom ?? null,
    reporter: o.reporter ?? {},
    signal: o.signal,
    clock: o.clock ?? (() => new Date()),
    gateEnvironment: o.gateEnvironment ?? "pristine",
    judge: o.judge ?? null,
    testFloors: o.testFloors ?? {},
  };
}

/** Runs a task to its envelope: attempts of builder → observation → gates, each fact appended first. */
export async function runTask(o: RunTaskOptions): Promise<Envelope> {
  const { loaded, builder } = o;
  const { task } = loaded;
  const runId = o.runId ?? newRunId();
  const clock = o.clock ?? (() => new Date());
  const journal = new RunJournal(
    o.store,
    runId,
    clock,
    randomUUID,
    runSecrets(process.env, o.allowEnv ?? []),
  );
  const runDir = join(o.storeDir, "runs", runId);
  const testFloors = await testFloorsFor(o.store, loaded, { useTaskCheck: o.useTaskCheckFloors ?? true });
  const ctx = runContext({ ...o, testFloors }, journal, runDir);
  const maxAttempts = o.workFrom ? 1 : (o.maxAttempts ?? task.budget.attempts);
  if (task.judge && !o.judge)
    throw new InputError(
      "the task configures a judge but no judge model was given (judge.model in the task, or --judge-model); a judge that cannot run is never skipped",
      `${loaded.file}: judge`,
    );
  const owner = thisOwner();
  await journal.record(
    {
      type: "start_run",
      data: {
        task_id: task.id,
        task_path: loaded.file,
        task_digest: loaded.digest,
        builder: o.workFrom ? { kind: "workspace", command: o.workFrom } : builder.descriptor,
        max_attempts: maxAttempts,
        gates: ctx.gates.map((g) => ({ id: g.id, kind: g.kind })),
        sandbox: o.sandbox,
        run_dir: runDir,
        ...(ctx.userMounts.length ? { builder_mounts: [...ctx.userMounts] } : {}),
        ...(task.judge && o.judge ? { judge: o.judge.id } : {}),
        ...(Object.keys(testFloors).length ? { test_floors: testFloors } : {}),
        ...(o.gateEnvironment === "as-built" ? { gate_environment: "as-built" as const } : {}),
        ...(o.goal ? { goal: o.goal } : {}),
      },
    },
    "runtime",
    takeLease(runId, owner, null),
  );
  const lease = keepLease(journal, owner);
  try {
    ctx.reporter.runStarted?.({ runId, taskId: task.id, maxAttempts, gates: ctx.gates.map((g) => g.id) });
    return (await prepareRun(ctx)) ?? (await driveRun(ctx));
  } finally {
    lease.stop();
  }
}

/** Copies the pristine and the run workspace and records the pristine observation; null when all went well. */
export async function prepareRun(ctx: RunContext): Promise<Envelope | null> {
  const { loaded, journal, runDir } = ctx;
  try {
    await ensureSandbox(ctx.sandbox);
    if (!existsSync(loaded.workspace))
      throw new InfrastructureError(`the task workspace ${loaded.workspace} is missing`);
    if (ctx.workFrom && !existsSync(ctx.workFrom))
      throw new InfrastructureError(`the workspace ${ctx.workFrom} is missing`);
    // A resumed preparation starts over: nothing half-copied may count as pristine.
    await rm(runDir, { recursive: true, force: true });
    // 0700, and the store's runs/ folder too: what a builder leaves here is no other local user's to reach.
    mkdirPrivate(runDir, { parentToo: true });
    await copyTree(loaded.workspace, ctx.pristineDir);
    await copyTree(ctx.workFrom ?? loaded.workspace, ctx.workspace);
    const t0 = performance.now();
    const pristine = await new WorkspaceObserver(ctx.pristineDir).observe();
    await ctx.observations.put(pristine);
    const paths = pristine.entries.map((e) => e.path);
    for (const u of uncoveredProtected(loaded.task.protected, paths))
      ctx.reporter.warning?.(describeUncovered(u, loaded.task.workspace));
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
    return failRun(
      ctx,
      e instanceof InfrastructureError ? e.message : `preparing the run failed: ${String(e)}`,
    );
  }
  return null;
}
