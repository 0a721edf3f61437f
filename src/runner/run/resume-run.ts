import { randomUUID } from "node:crypto";
import type { EventData, RecordedEvent } from "../../core/events/loopgate-event.js";
import { InputError, RunNotFoundError } from "../../core/kernel/errors.js";
import { runSecrets } from "../../core/kernel/redact.js";
import { attemptEvents, inDoubtCalls, lastMutatingResult } from "../../core/run/agent-projections.js";
import type { Envelope } from "../../core/run/envelope.js";
import { resumeStart } from "../../core/run/run-step.js";
import type { EventStore } from "../../store/kernel/event-store.js";
import { WorkspaceObserver } from "../../workspace/observer.js";
import { thisOwner } from "../stream/lease-owner.js";
import { type AfterAppend, RunJournal } from "../stream/run-journal.js";
import { keepLease, takeLease } from "../stream/run-lease-keeper.js";
import { type LoadedTask, loadTask } from "../task-source/load-task.js";
import { loadMissionCase } from "../task-source/mission/mission-case.js";
import type { BuilderChoice } from "./context/builder-choice.js";
import { checkUserMounts, mountGuards } from "./context/builder-mounts.js";
import { recordedDependencies } from "./context/dependencies.js";
import type { GateEnvironmentPolicy } from "./context/gate-environment-policy.js";
import type { RunReporter } from "./context/reporter.js";
import { failRun, type RunContext } from "./context/run-context.js";
import { keepObservation, rebuildRunFolder, runFolderPresent } from "./context/shared-content.js";
import { attachWorkspace, rollbackWorkspace } from "./context/workspace-layout.js";
import { ensureSandbox } from "./phases/prepare-run.js";
import { driveRun } from "./run-driver.js";
import { runContext } from "./run-task.js";

/** What resuming a run needs beyond its log: how to rebuild its builder (the model cannot be stored). */
export interface ResumeOptions {
  runId: string;
  store: EventStore;
  localDir: string;
  /**
   * Rebuilds the builder from what run_started recorded; `responses` is how many model responses the log
   * holds. It may load the builder's family (the built-in agent, Codex) on demand, hence the promise.
   */
  builder(
    descriptor: EventData<"run_started">["builder"],
    responses: number,
  ): BuilderChoice | Promise<BuilderChoice>;
  allowEnv?: readonly string[];
  mounts?: readonly string[];
  reporter?: RunReporter;
  signal?: AbortSignal;
  /** Called after each of the run's events is durably appended (see RunJournal.afterAppend). */
  afterAppend?: AfterAppend;
  /** The gate-environment policy a run recorded as other than pristine must be passed in again. */
  gateEnvironment?: GateEnvironmentPolicy;
  /**
   * The run folder to drive the run in (default: the one run_started recorded). A worker on another
   * machine passes its own; a folder not on this machine is rebuilt from a shared store (rebuildRunFolder).
   */
  runDir?: string;
  /** The run lease's length (default LEASE_TTL_MS); a worker passes its queue lease's. */
  leaseTtlMs?: number;
  /**
   * The task file to check the run by (default: the path run_started recorded). A worker passes its own
   * copy of a submitted task's snapshot; its digest must still be the recorded one.
   */
  taskFile?: string;
  /**
   * The tree a run started from when it is not its task's own folder: a goal todo's run starts from a
   * revision of the goal's workspace, which only goal code can check out. Without it such a run is not
   * resumed (InputError naming the goal).
   */
  startingTree?: (goal: { id: string; revision: string }) => Promise<string>;
}

/**
 * Continues an interrupted run from its log. A tool call (or an external builder) whose intent was
 * recorded without a result is in doubt: it is never silently re-run with unknown effects. The
 * workspace is rolled back to the last recorded observation; a mutating agent call is then reported
 * to the model as interrupted, a read-only one is simply repeated, an external builder runs again.
 */
export async function resumeRun(o: ResumeOptions): Promise<Envelope> {
  const events = await o.store.readStream(RunJournal.stream(o.runId));
  if (events.length === 0) throw new RunNotFoundError(o.runId, o.localDir);
  const started = events[0];
  if (started?.type !== "run_started") throw new InputError(`run ${o.runId} does not begin with run_started`);
  const recorded = loadRecordedTask(o.taskFile ?? started.data.task_path, o.localDir);
  // A goal todo's run started from a revision of the goal workspace, not from the task's own folder.
  const goal = started.data.goal;
  const loaded = goal ? { ...recorded, workspace: await goalTree(o, goal) } : recorded;
  if (loaded.digest !== started.data.task_digest)
    throw new InputError(
      `the task file changed since run ${o.runId} started; a resumed run must be checked by the same task`,
      started.data.task_path,
    );
  const responses = events.filter((e) => e.type === "model_responded").length;
  const builder = await o.builder(started.data.builder, responses);
  const secrets = runSecrets(process.env, o.allowEnv ?? []);
  const recordedPolicy = started.data.gate_environment ?? "pristine";
  if ((o.gateEnvironment?.name ?? "pristine") !== recordedPolicy)
    throw new InputError(
      `run ${o.runId} was started with the ${recordedPolicy} gate environment (a baseline of the forgery benchmark); only the experiment that started it can resume it`,
    );
  const journal = RunJournal.resume(
    o.store,
    o.runId,
    events,
    () => new Date(),
    randomUUID,
    secrets,
    o.afterAppend,
  );
  if (journal.current.finished && !journal.current.interrupted)
    return continueRun(o, events, journal, loaded, builder);
  // Before anything is touched (the lease included): the recorded mounts are checked again like new
  // ones, since what a path resolves to may have changed; then a live owner keeps its run
  // (LeaseHeldError) and a dead one's is taken over.
  checkUserMounts(
    [...new Set([...(started.data.builder_mounts ?? []), ...(o.mounts ?? [])])],
    mountGuards(loaded, o.localDir),
  );
  const owner = thisOwner();
  await journal.recordLease(takeLease(o.runId, owner, journal.lease, o.leaseTtlMs));
  const leaseLost = new AbortController();
  const lease = keepLease(journal, owner, (why) => leaseLost.abort(why), o.leaseTtlMs);
  try {
    return await continueRun(o, events, journal, loaded, builder, leaseLost.signal);
  } finally {
    lease.stop();
  }
}

async function continueRun(
  o: ResumeOptions,
  stored: readonly RecordedEvent[],
  journal: RunJournal,
  loaded: LoadedTask,
  builder: BuilderChoice,
  leaseLost: AbortSignal | null = null,
): Promise<Envelope> {
  // `from_revision` is the log as it was found, before this process took the lease.
  const events = stored;
  const started = events[0];
  if (started?.type !== "run_started") throw new InputError(`run ${o.runId} does not begin with run_started`);
  const runDir = o.runDir ?? started.data.run_dir;
  const ctx = runContext(
    {
      loaded,
      builder,
      store: o.store,
      localDir: o.localDir,
      sandbox: started.data.sandbox,
      allowEnv: o.allowEnv ?? [],
      // The recorded mounts are checked again like new ones: what a path resolves to may have changed.
      mounts: [...new Set([...(started.data.builder_mounts ?? []), ...(o.mounts ?? [])])],
      ...(started.data.builder.kind === "workspace" && started.data.builder.command
        ? { workFrom: started.data.builder.command }
        : {}),
      ...(o.reporter ? { reporter: o.reporter } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
      // The model providers (the AI SDK) are loaded only to resume a run that has a judge.
      ...(started.data.judge
        ? { judge: (await import("../../agent/models/provider.js")).createModel(started.data.judge) }
        : {}),
      ...(o.gateEnvironment ? { gateEnvironment: o.gateEnvironment } : {}),
      ...(started.data.test_floors ? { testFloors: started.data.test_floors } : {}),
      ...(started.data.identity ? { identity: started.data.identity } : {}),
      dependencies: recordedDependencies(started.data.dependencies ?? [], o.localDir),
    },
    journal,
    runDir,
    leaseLost,
  );
  // An overlay workspace is mounted again before anything reads it (workspace-layout.ts).
  attachWorkspace(ctx);
  const task = { gates: ctx.gates.map((g) => g.id) };
  const resumed = (action: string, inDoubt: string[] = []) =>
    journal.record({
      type: "resume",
      data: { from_revision: events.length - 1, in_doubt: inDoubt, action: action.slice(0, 2000) },
    });
  let start = resumeStart(journal.current, task);
  if (start === "reopen") {
    // The user stopped it (Ctrl-C): that was no verdict, so the run is reopened and continued below.
    await journal.record({
      type: "resume",
      data: {
        from_revision: events.length - 1,
        in_doubt: [],
        action: `reopened the run interrupted by: ${journal.current.infrastructure ?? "an interrupt"}`.slice(
          0,
          2000,
        ),
        reopened: true,
      },
    });
    start = resumeStart(journal.current, task);
  }
  if (start === "finished") return driveRun(ctx);
  await ensureSandbox(ctx.sandbox);
  if (start === "prepare") {
    // Interrupted while preparing: the driver prepares again from scratch.
    await resumed("preparing the run again");
    return driveRun(ctx);
  }
  const st = journal.current;
  const lastObs = st.lastObservationId;
  // The run folder is not on this machine (another worker drove the run, or the folder was removed):
  // it is rebuilt from the shared store at the last recorded observation, before anything reads it.
  let rebuilt = "";
  if (!runFolderPresent(ctx)) {
    if (!ctx.shared || !lastObs || st.pristineObservationId === null)
      return failRun(
        ctx,
        `cannot resume: the run folder ${runDir} is not on this machine${ctx.shared ? " and the log records no observation to rebuild it from" : "; only a shared store (postgres://) keeps the observations to rebuild it from"}`,
      );
    rebuilt = `${await rebuildRunFolder(ctx, ctx.shared, events, st.pristineObservationId, lastObs)}; `;
  }
  if (start === "continue") {
    await resumed(`${rebuilt}continued from the log`);
    return driveRun(ctx);
  }
  // The open attempt's builder was running: what it did since the last observation is in doubt.
  const n = st.attempts.length;
  if (!lastObs) return failRun(ctx, "cannot resume: the log has no workspace observation to roll back to");
  const say = (action: string, inDoubt?: string[]) => resumed(`${rebuilt}${action}`, inDoubt);
  if (st.pristineObservationId !== null)
    await ctx.blobs.save(await ctx.observations.get(st.pristineObservationId), ctx.pristineDir);
  if (builder.agent) return resumeAgent(ctx, journal, n, lastObs, say);
  await rollbackWorkspace(ctx, lastObs);
  await say(
    `the builder of attempt ${n} was interrupted: rolled the workspace back to observation ${lastObs.slice(0, 12)} and re-running it`,
  );
  return driveRun(ctx);
}

/**
 * The built-in agent's attempt was running: a mutating tool call with an intent and no result is
 * rolled back and reported to the model as interrupted; a read-only one is simply repeated.
 */
async function resumeAgent(
  ctx: RunContext,
  journal: RunJournal,
  n: number,
  lastObs: string,
  resumed: (action: string, inDoubt?: string[]) => Promise<unknown>,
): Promise<Envelope> {
  const inAttempt = attemptEvents(journal.events, n);
  // A fact-producing call whose facts a crash cut off is replayed by the agent loop itself.
  const s = { inDoubt: inDoubtCalls(inAttempt) };
  // A crash between a mutating call's result and its observation must not hide the change:
  // observe now and record what that call did, so older evidence goes stale as it should.
  const lastMutating = lastMutatingResult(inAttempt);
  if (s.inDoubt.length === 0 && lastMutating) {
    const now = await new WorkspaceObserver(ctx.workspace).observe();
    if (now.id !== lastObs) {
      await keepObservation(ctx, now, ctx.workspace);
      await journal.record({
        type: "record_agent",
        event: {
          type: "workspace_touched",
          data: { attempt: n, call_id: lastMutating.callId, observation_id: now.id },
        },
      });
    }
  }
  const inDoubt = s.inDoubt.map((c) => c.callId);
  const mutating = s.inDoubt.filter((c) => c.mutating);
  let action = "continued from the log";
  if (mutating.length) {
    await rollbackWorkspace(ctx, lastObs);
    action = `rolled the workspace back to observation ${lastObs.slice(0, 12)} and told the model that ${mutating.map((c) => c.callId).join(", ")} was interrupted`;
  } else if (s.inDoubt.length)
    action = `repeating read-only call ${s.inDoubt.map((c) => c.callId).join(", ")}`;
  await resumed(action, inDoubt);
  for (const c of mutating)
    await journal.record({
      type: "record_agent",
      event: {
        type: "tool_call_abandoned",
        data: {
          attempt: n,
          call_id: c.callId,
          reason: `[loopgate] This ${c.name} call was interrupted before its result was recorded. The workspace was rolled back to the state before it. Run it again if it is still needed.`,
        },
      },
    });
  return driveRun(ctx);
}

/** The task a run recorded: a task file, or a mission fixture (`run --case`), rebuilt the same way. */
function loadRecordedTask(path: string, localDir: string): LoadedTask {
  try {
    return loadTask(path);
  } catch (taskError) {
    try {
      return loadMissionCase(path, { localDir });
    } catch {
      throw taskError;
    }
  }
}

async function goalTree(o: ResumeOptions, goal: { id: string; revision: string }): Promise<string> {
  if (!o.startingTree)
    throw new InputError(
      `run ${o.runId} started from revision ${goal.revision} of goal ${goal.id}; resume it where the goal's workspace is known (loopgate resume, goal tick or a worker)`,
      `run ${o.runId}`,
    );
  return o.startingTree(goal);
}
