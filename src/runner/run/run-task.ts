import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import type { ModelAdapter } from "../../agent/models/model.js";
import { InputError } from "../../core/kernel/errors.js";
import { runSecrets } from "../../core/kernel/redact.js";
import type { Envelope } from "../../core/run/envelope.js";
import type { PinnedIdentity } from "../../core/task/task-lock.js";
import { buildGateRegistry } from "../../gates/gate-registry.js";
import type { TestFloor } from "../../gates/tamper/test-report.js";
import type { SandboxMode } from "../../sandbox/bubblewrap.js";
import type { EventStore } from "../../store/kernel/event-store.js";
import { thisOwner } from "../stream/lease-owner.js";
import { type AfterAppend, RunJournal } from "../stream/run-journal.js";
import { keepLease, takeLease } from "../stream/run-lease-keeper.js";
import type { LoadedTask } from "../task-source/load-task.js";
import { pinIdentity } from "../task-source/task-lock-file.js";
import { testFloorsFor } from "../task-source/test-floors.js";
import type { BuilderChoice } from "./context/builder-choice.js";
import { mountGuards, planBuilderMounts } from "./context/builder-mounts.js";
import { checkDependencySandbox, type SharedDependency, shareDependencies } from "./context/dependencies.js";
import { type GateEnvironmentPolicy, pristineGateEnvironment } from "./context/gate-environment-policy.js";
import type { RunReporter } from "./context/reporter.js";
import { type RunContext, runPaths } from "./context/run-context.js";
import { driveRun } from "./run-driver.js";

/** Everything one run needs; effects (clock, ids) are injectable for tests. */
export interface RunTaskOptions {
  loaded: LoadedTask;
  builder: BuilderChoice;
  store: EventStore;
  /** The folder that holds the event log; runs live in `<localDir>/runs/<run id>/`. */
  localDir: string;
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
  /** How gate environments are built (default: loopgate's pristine policy); benchmarks pass baselines in. */
  gateEnvironment?: GateEnvironmentPolicy;
  /** Called after each of the run's events is durably appended (see RunJournal.afterAppend). */
  afterAppend?: AfterAppend;
  /** The judge's model; required when the task configures a judge. */
  judge?: ModelAdapter;
  /** Test floors recorded by `loopgate task check` apply (default); task check's own oracle run ignores them. */
  useTaskCheckFloors?: boolean;
  /** Set on resume: the floors the run started with. */
  testFloors?: Readonly<Record<string, TestFloor>>;
  /**
   * How gates are judged by identity: `lock` (default) enforces the lock beside the task file when there is
   * a valid one; `record` is `loopgate task check`'s oracle run, which records one.
   */
  identityMode?: "lock" | "record";
  /** Set on resume: the identity rules the run started with. */
  identity?: PinnedIdentity | null;
  /** A missing, stale or invalid lock is an error rather than a note (`--strict`). */
  strictLock?: boolean;
  /** A goal todo's run: recorded in run_started (the workspace is then that revision's tree). */
  goal?: { id: string; revision: string };
  /** The run lease's length (default LEASE_TTL_MS); a worker passes its queue lease's. */
  leaseTtlMs?: number;
  /** Set on resume: the shared dependency copies run_started recorded (a new run makes or finds them). */
  dependencies?: readonly SharedDependency[];
}

/** A sortable, readable run id: `20261129-221530-3fa9c1`. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

/**
 * Builds the driver's context for a run. The builder's mounts are planned here, for a new and a
 * resumed run alike: a mount that would expose the task folder, held-out material or a log is an InputError.
 */
export function runContext(
  o: Omit<RunTaskOptions, "runId" | "maxAttempts" | "leaseTtlMs">,
  journal: RunJournal,
  runDir: string,
  leaseLost: AbortSignal | null = null,
): RunContext {
  const plan = o.workFrom
    ? { mounts: [], user: [], masked: [], notes: [] }
    : planBuilderMounts(o.builder, o.mounts ?? [], mountGuards(o.loaded, o.localDir));
  for (const note of plan.notes) o.reporter?.note?.(note);
  return {
    loaded: o.loaded,
    builder: o.builder,
    journal,
    runDir,
    ...runPaths(runDir),
    shared: o.store.content?.() ?? null,
    gates: buildGateRegistry(o.loaded.task, o.loaded.dir),
    sandbox: o.sandbox,
    allowEnv: o.allowEnv ?? [],
    mounts: plan.mounts,
    userMounts: plan.user,
    masked: plan.masked,
    dependencies: o.dependencies ?? [],
    network: o.network ?? o.loaded.task.builder.network,
    workFrom: o.workFrom ?? null,
    reporter: o.reporter ?? {},
    signal: leaseLost && o.signal ? AbortSignal.any([o.signal, leaseLost]) : (leaseLost ?? o.signal),
    leaseLost,
    clock: o.clock ?? (() => new Date()),
    gateEnvironment: o.gateEnvironment ?? pristineGateEnvironment,
    judge: o.judge ?? null,
    testFloors: o.testFloors ?? {},
    identity: o.identity ?? null,
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
    o.afterAppend,
  );
  const runDir = join(o.localDir, "runs", runId);
  const testFloors = await testFloorsFor(o.store, loaded, { useTaskCheck: o.useTaskCheckFloors ?? true });
  const pinned = pinIdentity(loaded, o.identityMode ?? "lock", {
    strict: o.strictLock ?? false,
    reporter: o.reporter,
  });
  checkDependencySandbox(task.dependencies, o.sandbox, `${loaded.file}: dependencies`);
  const dependencies = await shareDependencies(loaded.workspace, task.dependencies, o.localDir);
  const leaseLost = new AbortController();
  const ctx = runContext(
    { ...o, testFloors, identity: pinned, dependencies },
    journal,
    runDir,
    leaseLost.signal,
  );
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
        ...(pinned ? { identity: pinned } : {}),
        ...(ctx.gateEnvironment.name === "as-built" ? { gate_environment: "as-built" as const } : {}),
        ...(o.goal ? { goal: o.goal } : {}),
        ...(dependencies.length
          ? { dependencies: dependencies.map(({ path, digest, files }) => ({ path, digest, files })) }
          : {}),
      },
    },
    "runtime",
    takeLease(runId, owner, null, o.leaseTtlMs),
  );
  const lease = keepLease(journal, owner, (why) => leaseLost.abort(why), o.leaseTtlMs);
  try {
    ctx.reporter.runStarted?.({ runId, taskId: task.id, maxAttempts, gates: ctx.gates.map((g) => g.id) });
    return await driveRun(ctx);
  } finally {
    lease.stop();
  }
}
