import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import { currentPlan } from "../../../agent/todo/plan.js";
import {
  goalAtStop,
  runFrozenCheck,
  stopPredicates,
  taskCompleted,
} from "../../../builders/claude/claude-gates.js";
import { type HookReply, parseHookInput, sessionStream } from "../../../builders/stop-gate/hook-input.js";
import type { EventData } from "../../../core/events/loopgate-event.js";
import type { GoalPredicate } from "../../../core/task/task.js";
import { mcpPlanStream } from "../../../mcp/evidence.js";
import { loadTask } from "../../../runner/task-source/load-task.js";
import type { EventStore } from "../../../store/kernel/event-store.js";
import { openStore, storeFrom } from "../../output/context.js";

/** The tool calls `loopgate hook post-tool` recorded for this session, in order. */
async function sessionFacts(store: EventStore, sessionId: string) {
  const events = await store.readStream(sessionStream(sessionId));
  return {
    facts: events.flatMap((e) => (e.type === "agent_tool_observed" ? [e.data] : [])),
    appraised: events.flatMap((e) => (e.type === "agent_step_appraised" ? [e.data] : [])),
    goals: events.flatMap((e) => (e.type === "agent_goal_evaluated" ? [e.data] : [])),
  };
}

async function record(
  store: EventStore,
  sessionId: string,
  type: "agent_step_appraised" | "agent_goal_evaluated",
  data: EventData<"agent_step_appraised"> | EventData<"agent_goal_evaluated">,
): Promise<void> {
  await store.append(
    sessionStream(sessionId),
    [{ id: randomUUID(), type, data, meta: { at: new Date().toISOString(), origin: "runtime" } } as never],
    "any",
  );
}

/**
 * `loopgate hook task-completed TASK` in a user's own session: the completed task's frozen check
 * (`check: CMD` in its description) runs in loopgate's sandbox on the session's folder, its span of
 * recorded calls is appraised, and a failed check refuses the completion (exit 2, the finding on stderr).
 * Recorded in the session's stream. An error refuses the completion too.
 */
export async function localTaskCompleted(
  stdin: string,
  taskPath: string,
  storeFlag: string | undefined,
): Promise<HookReply> {
  const parsed = parseHookInput(stdin);
  if ("error" in parsed) return refuse(parsed.error);
  const input = parsed.input;
  if (input.hook_event_name !== "TaskCompleted") return { exit_code: 0, stdout: "", stderr: "" };
  const loaded = loadTask(taskPath);
  const store = await openStore(storeFrom(storeFlag), true);
  try {
    const s = await sessionFacts(store, input.session_id);
    const id = input.task_id ?? "";
    // A step of the same words declared through `loopgate mcp`'s todo_write: its frozen check wins.
    let declared: string | null = null;
    for (const sessionId of [input.session_id, undefined]) {
      const plan = currentPlan(await store.readStream(mcpPlanStream({ sessionId, taskId: loaded.task.id })));
      const step = plan.find((p) => p.content === (input.task_subject ?? "") && p.check);
      if (step?.check) {
        declared = step.check;
        break;
      }
    }
    const r = await taskCompleted({
      facts: s.facts,
      attempt: 1,
      sessionId: input.session_id,
      task: { id, subject: input.task_subject ?? "", description: input.task_description ?? "" },
      priorBlocks: s.appraised.filter((a) => a.task_id === id && a.blocked).length,
      declared,
      run: (command) =>
        runFrozenCheck(command, { workspace: resolve(input.cwd ?? process.cwd()), sandbox: "bubblewrap" }),
    });
    await record(store, input.session_id, "agent_step_appraised", r.fact);
    return r.reply;
  } finally {
    await store.close();
  }
}

/** A completion loopgate could not check is refused, with the reason. */
export const refuse = (why: string): HookReply => ({
  exit_code: 2,
  stdout: "",
  stderr: `loopgate could not check this task (${why}), so it is not marked completed.\n`,
});

/**
 * The goal gate of a user's own Stop, before the held-out gates: the task's command and file predicates
 * over the session's recorded calls. A block (the unmet predicates) while `blocksLeft` allows; null to
 * go on to the gates. Recorded in the session's stream.
 */
export async function localGoalAtStop(
  store: EventStore,
  goal: readonly GoalPredicate[],
  a: { sessionId: string; cwd: string; blocksLeft: number },
): Promise<HookReply | null> {
  const predicates = stopPredicates(goal);
  if (predicates.length === 0) return null;
  const s = await sessionFacts(store, a.sessionId);
  const g = goalAtStop({
    predicates,
    facts: s.facts,
    workspace: a.cwd,
    attempt: 1,
    sessionId: a.sessionId,
    stop: s.goals.length + 1,
    blocksLeft: a.blocksLeft,
  });
  await record(store, a.sessionId, "agent_goal_evaluated", g.fact);
  return g.reply;
}
