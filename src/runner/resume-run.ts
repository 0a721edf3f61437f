import { randomUUID } from "node:crypto";
import { attemptEvents, foldAgent } from "../agent/agent-state.js";
import { createModel } from "../agent/models/provider.js";
import { todoWrittenFor } from "../agent/todo/todo-tool.js";
import type { Builder } from "../builders/builder.js";
import type { Envelope } from "../core/envelope.js";
import { InputError, RunNotFoundError } from "../core/errors.js";
import type { EventData, RecordedEvent } from "../core/events.js";
import { runSecrets } from "../core/redact.js";
import { TODO_TOOL } from "../core/step-appraisal.js";
import { loadMissionCase } from "../fixtures/mission-case.js";
import type { EventStore } from "../store/event-store.js";
import { WorkspaceObserver } from "../workspace/observer.js";
import { checkUserMounts, mountGuards } from "./builder-mounts.js";
import { revisionTree } from "./goal/goal-workspace.js";
import { type LoadedTask, loadTask } from "./load-task.js";
import type { RunReporter } from "./reporter.js";
import { failRun, runPaths } from "./run-context.js";
import { currentRequiredFix, driveRun, lastObservationId } from "./run-driver.js";
import { RunJournal } from "./run-journal.js";
import { keepLease, takeLease, thisOwner } from "./run-lease-keeper.js";
import { ensureSandbox, prepareRun, runContext } from "./run-task.js";

/** What resuming a run needs beyond its log: how to rebuild its builder (the model cannot be stored). */
export interface ResumeOptions {
  runId: string;
  store: EventStore;
  storeDir: string;
  /** Rebuilds the builder from what run_started recorded; `responses` is how many model responses the log holds. */
  builder(descriptor: EventData<"run_started">["builder"], responses: number): Builder;
  allowEnv?: readonly string[];
  mounts?: readonly string[];
  reporter?: RunReporter;
  signal?: AbortSignal;
}

/**
 * Continues an interrupted run from its log. A tool call (or an external builder) whose intent was
 * recorded without a result is in doubt: it is never silently re-run with unknown effects. The
 * workspace is rolled back to the last recorded observation; a mutating agent call is then reported
 * to the model as interrupted, a read-only one is simply repeated, an external builder runs again.
 */
export async function resumeRun(o: ResumeOptions): Promise<Envelope> {
  const events = await o.store.readStream(RunJournal.stream(o.runId));
  if (events.length === 0) throw new RunNotFoundError(o.runId, o.storeDir);
  const started = events[0];
  if (started?.type !== "run_started") throw new InputError(`run ${o.runId} does not begin with run_started`);
  const recorded = loadRecordedTask(started.data.task_path, o.storeDir);
  // A goal todo's run started from a revision of the goal workspace, not from the task's own folder.
  const goal = started.data.goal;
  const loaded = goal
    ? { ...recorded, workspace: await revisionTree(o.storeDir, goal.id, goal.revision) }
    : recorded;
  if (loaded.digest !== started.data.task_digest)
    throw new InputError(
      `the task file changed since run ${o.runId} started; a resumed run must be checked by the same task`,
      started.data.task_path,
    );
  const responses = events.filter((e) => e.type === "model_responded").length;
  const builder = o.builder(started.data.builder, responses);
  const secrets = runSecrets(process.env, o.allowEnv ?? []);
  const journal = RunJournal.resume(o.store, o.runId, events, () => new Date(), randomUUID, secrets);
  if (journal.current.finished && !journal.current.interrupted)
    return continueRun(o, events, journal, loaded, builder);
  // Before anything is touched (the lease included): the recorded mounts are checked again like new
  // ones, since what a path resolves to may have changed; then a live owner keeps its run
  // (LeaseHeldError) and a dead one's is taken over.
  checkUserMounts(
    [...new Set([...(started.data.builder_mounts ?? []), ...(o.mounts ?? [])])],
    mountGuards(loaded, o.storeDir),
  );
  const owner = thisOwner();
  await journal.recordLease(takeLease(o.runId, owner, journal.lease));
  const lease = keepLease(journal, owner);
  try {
    return await continueRun(o, events, journal, loaded, builder);
  } finally {
    lease.stop();
  }
}

async function continueRun(
  o: ResumeOptions,
  stored: readonly RecordedEvent[],
  journal: RunJournal,
  loaded: LoadedTask,
  builder: Builder,
): Promise<Envelope> {
  // `from_revision` is the log as it was found, before this process took the lease.
  const events = stored;
  const started = events[0];
  if (started?.type !== "run_started") throw new InputError(`run ${o.runId} does not begin with run_started`);
  const runDir = started.data.run_dir;
  const ctx = runContext(
    {
      loaded,
      builder,
      store: o.store,
      storeDir: o.storeDir,
      sandbox: started.data.sandbox,
      allowEnv: o.allowEnv ?? [],
      // The recorded mounts are checked again like new ones: what a path resolves to may have changed.
      mounts: [...new Set([...(started.data.builder_mounts ?? []), ...(o.mounts ?? [])])],
      ...(started.data.builder.kind === "workspace" && started.data.builder.command
        ? { workFrom: started.data.builder.command }
        : {}),
      ...(o.reporter ? { reporter: o.reporter } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
      ...(started.data.judge ? { judge: createModel(started.data.judge) } : {}),
      ...(started.data.gate_environment ? { gateEnvironment: started.data.gate_environment } : {}),
      ...(started.data.test_floors ? { testFloors: started.data.test_floors } : {}),
    },
    journal,
    runDir,
  );
  if (journal.current.finished && journal.current.interrupted) {
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
  }
  if (journal.current.finished) return driveRun(ctx);
  await ensureSandbox(ctx.sandbox);
  if (!journal.events.some((e) => e.type === "workspace_observed" && e.data.phase === "pristine")) {
    // Interrupted while preparing: prepare again from scratch.
    await journal.record({
      type: "resume",
      data: { from_revision: events.length - 1, in_doubt: [], action: "preparing the run again" },
    });
    const failed = await prepareRun(ctx);
    return failed ?? driveRun(ctx);
  }
  const st = journal.current;
  const n = st.attempts.length;
  const open = n > 0 && !st.attempts[n - 1]?.closed;
  const inAttempt = open ? attemptEvents(journal.events, n) : [];
  const builderRunning = open && !ctx.workFrom && !inAttempt.some((e) => e.type === "builder_finished");
  let action = "continued from the log";
  const inDoubt: string[] = [];
  if (builderRunning) {
    const lastObs = lastObservationId(journal.events);
    if (!lastObs) return failRun(ctx, "cannot resume: the log has no workspace observation to roll back to");
    const { pristineDir } = runPaths(runDir);
    const pristineId = journal.events.find(
      (e) => e.type === "workspace_observed" && e.data.phase === "pristine",
    );
    if (pristineId?.type === "workspace_observed")
      await ctx.blobs.save(await ctx.observations.get(pristineId.data.observation_id), pristineDir);
    if (builder.agent) {
      const fix = currentRequiredFix(journal.events);
      const s = foldAgent(inAttempt, fix ?? "");
      // A crash between a todo call's result and its todo_written: the write is a pure function of the
      // call's arguments and the plan before it, so it is recorded now, exactly as it would have been.
      const lastTodo = inAttempt.findLast(
        (e) => e.type === "tool_call_finished" && e.data.name === TODO_TOOL,
      );
      if (
        lastTodo?.type === "tool_call_finished" &&
        !inAttempt.some((e) => e.type === "todo_written" && e.data.call_id === lastTodo.data.call_id)
      ) {
        const intent = inAttempt.find(
          (e) => e.type === "tool_call_started" && e.data.call_id === lastTodo.data.call_id,
        );
        const args = intent?.type === "tool_call_started" ? intent.data.args : undefined;
        const written = todoWrittenFor(
          journal.events,
          n,
          { id: lastTodo.data.call_id, name: TODO_TOOL, args },
          lastTodo.data.valid && !lastTodo.data.is_error,
        );
        if (written) await journal.record({ type: "record_agent", event: written });
      }
      // A crash between a mutating call's result and its observation must not hide the change:
      // observe now and record what that call did, so older evidence goes stale as it should.
      const lastMutating = inAttempt.findLast(
        (e) => e.type === "tool_call_finished" && e.data.name !== "read_file" && e.data.name !== "list_files",
      );
      if (s.inDoubt.length === 0 && lastMutating?.type === "tool_call_finished") {
        const now = await new WorkspaceObserver(ctx.workspace).observe();
        if (now.id !== lastObs) {
          await ctx.observations.put(now);
          await ctx.blobs.save(now, ctx.workspace);
          await journal.record({
            type: "record_agent",
            event: {
              type: "workspace_touched",
              data: { attempt: n, call_id: lastMutating.data.call_id, observation_id: now.id },
            },
          });
        }
      }
      for (const c of s.inDoubt) inDoubt.push(c.callId);
      const mutating = s.inDoubt.filter((c) => c.mutating);
      if (mutating.length) {
        await ctx.blobs.restore(await ctx.observations.get(lastObs), ctx.workspace);
        action = `rolled the workspace back to observation ${lastObs.slice(0, 12)} and told the model that ${mutating.map((c) => c.callId).join(", ")} was interrupted`;
      } else if (s.inDoubt.length)
        action = `repeating read-only call ${s.inDoubt.map((c) => c.callId).join(", ")}`;
      await journal.record({
        type: "resume",
        data: { from_revision: events.length - 1, in_doubt: inDoubt, action },
      });
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
    await ctx.blobs.restore(await ctx.observations.get(lastObs), ctx.workspace);
    action = `the builder of attempt ${n} was interrupted: rolled the workspace back to observation ${lastObs.slice(0, 12)} and re-running it`;
  }
  await journal.record({
    type: "resume",
    data: { from_revision: events.length - 1, in_doubt: inDoubt, action },
  });
  return driveRun(ctx);
}

/** The task a run recorded: a task file, or a mission fixture (`run --case`), rebuilt the same way. */
function loadRecordedTask(path: string, storeDir: string): LoadedTask {
  try {
    return loadTask(path);
  } catch (taskError) {
    try {
      return loadMissionCase(path, { storeDir });
    } catch {
      throw taskError;
    }
  }
}
