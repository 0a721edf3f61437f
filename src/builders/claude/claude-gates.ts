import { existsSync } from "node:fs";
import { isAbsolute, join, normalize } from "node:path";
import { appraiseRuntimeTask, frozenCheck, type RuntimeCheck } from "../../core/agent/runtime-steps.js";
import type { CheckStatus } from "../../core/agent/step-appraisal.js";
import { continuationPrompt, evaluateGoal } from "../../core/agent/stop-condition.js";
import type { EventData, LoopgateEvent } from "../../core/events/loopgate-event.js";
import { boundText } from "../../core/kernel/bounded.js";
import type { GoalPredicate } from "../../core/task/task.js";
import { runSandboxed, type SandboxMode } from "../../sandbox/bubblewrap.js";
import { scrubbedEnv } from "../../sandbox/environment.js";
import type { HookReply } from "../stop-gate/hook-input.js";

/**
 * What loopgate decides inside a `loopgate claude` session besides the Stop's held-out gates: a task
 * of Claude's task list marked completed (TaskCompleted: appraisal and frozen check), and the task's goal
 * predicates at each Stop over the session's runtime facts. The transport (forwarder, hook server) is
 * elsewhere; these take the facts and return the reply and the facts to record.
 */

type Fact = EventData<"agent_tool_observed">;

/** A task may be refused this many times; then its completion goes through, recorded NOT verified. */
export const MAX_TASK_BLOCKS = 3;

/** The facts as log events (origin agent_runtime), for the core goal gate's window. */
export function asRuntimeEvents(facts: readonly Fact[]): LoopgateEvent[] {
  return facts.map((data, i) => ({
    id: `runtime-${i}`,
    type: "agent_tool_observed" as const,
    data,
    meta: { at: "1970-01-01T00:00:00.000Z", origin: "agent_runtime" as const },
  }));
}

/** Runs a frozen check in loopgate's sandbox on the workspace (no network, 60 s). */
export async function runFrozenCheck(
  command: string,
  o: { workspace: string; sandbox: SandboxMode; timeoutMs?: number },
): Promise<RuntimeCheck> {
  const r = await runSandboxed(
    {
      argv: ["/bin/sh", "-c", command],
      cwd: o.workspace,
      writable: [o.workspace],
      readonly: [],
      env: scrubbedEnv({ home: "/tmp" }),
      network: false,
      timeoutMs: o.timeoutMs ?? 60_000,
      maxOutputBytes: 8000,
    },
    o.sandbox,
  );
  const status: CheckStatus =
    r.exitCode === 0 && !r.timedOut
      ? "passed"
      : r.exitCode !== null || r.timedOut
        ? "failed"
        : r.spawnError
          ? "unavailable"
          : "failed";
  const detail = r.timedOut ? `timed out; ${r.output}` : r.spawnError ? r.spawnError : r.output;
  return { command, status, exit_code: r.exitCode, detail: boundText(detail, 2000) };
}

/**
 * The answer to a TaskCompleted: the task's frozen check (declared `check: CMD` in its description)
 * runs, the span is appraised, and a failed check refuses the completion (exit 2: Claude Code shows
 * stderr to the model and does not mark the task completed). Returns the reply and the fact to record.
 */
export async function taskCompleted(a: {
  facts: readonly Fact[];
  attempt: number;
  sessionId: string;
  task: { id: string; subject: string; description: string };
  priorBlocks: number;
  run: (command: string) => Promise<RuntimeCheck>;
  /** The frozen check of the same step declared through loopgate's MCP todo_write (it wins), if any. */
  declared?: string | null;
}): Promise<{ reply: HookReply; fact: EventData<"agent_step_appraised"> }> {
  const command = a.declared ?? frozenCheck(a.facts, a.task.id, a.task.description);
  const check = command === null ? null : await a.run(command);
  const step = a.task.subject || `task #${a.task.id}`;
  const r = appraiseRuntimeTask({
    facts: a.facts,
    taskId: a.task.id,
    step,
    check,
    priorBlocks: a.priorBlocks,
    maxBlocks: MAX_TASK_BLOCKS,
  });
  const fact: EventData<"agent_step_appraised"> = {
    attempt: a.attempt,
    agent: "claude-code",
    session_id: a.sessionId,
    task_id: a.task.id,
    step: step.slice(0, 4000),
    check,
    finding: r.finding,
    calls: r.calls,
    blocked: r.blocked,
    rendered: r.rendered,
  };
  const reply: HookReply = r.blocked
    ? { exit_code: 2, stdout: "", stderr: `${r.rendered}\n` }
    : { exit_code: 0, stdout: "", stderr: "" };
  return { reply, fact };
}

/** Goal predicates judged at a Stop: gates are the held-out gates' business, which run right after. */
export const stopPredicates = (all: readonly GoalPredicate[]) => all.filter((p) => !("gate_passed" in p));

/** Whether a workspace-relative file exists (a path that leaves the workspace does not). */
function fileHolds(workspace: string, rel: string): boolean {
  const p = normalize(rel);
  if (isAbsolute(p) || p === ".." || p.startsWith("../")) return false;
  return existsSync(join(workspace, p));
}

/**
 * The goal gate at Stop number `stop`: command predicates over the session's runtime facts (Claude
 * Code's PostToolUse reports), file predicates probed by loopgate in the workspace. `blocksLeft`: how
 * many Stops the goal may still block (Claude Code ends the turn itself after 8 blocks in a row).
 */
export function goalAtStop(a: {
  predicates: readonly GoalPredicate[];
  facts: readonly Fact[];
  workspace: string;
  attempt: number;
  sessionId: string;
  stop: number;
  blocksLeft: number;
}): { reply: HookReply | null; fact: EventData<"agent_goal_evaluated"> } {
  const window: LoopgateEvent[] = asRuntimeEvents(a.facts);
  for (const p of a.predicates)
    if ("file_exists" in p)
      window.push({
        id: `probe-${window.length}`,
        type: "goal_probed",
        data: {
          attempt: a.attempt,
          turn: a.stop,
          predicate: { ...p },
          holds: fileHolds(a.workspace, p.file_exists),
          detail: "",
        },
        meta: { at: "1970-01-01T00:00:00.000Z", origin: "runtime" },
      });
  // `continuing` while a block is left: evaluateGoal's turn budget is this Stop against the blocks left.
  const ev = evaluateGoal(a.predicates, window, 1, a.blocksLeft > 0 ? 2 : 1, { runtimeCommands: true });
  const reason =
    ev.outcome === "completed"
      ? ev.reason
      : ev.outcome === "continuing"
        ? `Stop ${a.stop}: unmet ${ev.unmet.join("; ")}`
        : `Stop ${a.stop}: no Stop block left for the goal; unmet ${ev.unmet.join("; ")}; the held-out gates decide`;
  const fact: EventData<"agent_goal_evaluated"> = {
    attempt: a.attempt,
    agent: "claude-code",
    session_id: a.sessionId,
    stop: a.stop,
    outcome: ev.outcome,
    unmet: ev.unmet.map((u) => u.slice(0, 600)).slice(0, 100),
    reason: reason.slice(0, 2000),
  };
  if (ev.outcome !== "continuing") return { reply: null, fact };
  const text = continuationPrompt(ev.unmet).replace("with the bash tool", "with the Bash tool");
  return { reply: { exit_code: 2, stdout: "", stderr: `${text}\n` }, fact };
}
