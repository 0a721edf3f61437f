import type { EventData } from "../events/loopgate-event.js";
import {
  appraiseStep,
  type CallOutcome,
  type CheckStatus,
  renderFinding,
  type StepFinding,
} from "./step-appraisal.js";

/**
 * Plan steps of an external agent's own task list (Claude Code's TaskCreate/TaskUpdate), appraised the
 * way the built-in agent's todo steps are (step-appraisal.ts): a pure function of the tool calls its
 * runtime reported between the task going in progress and being marked completed, plus the frozen check
 * loopgate ran. The agent declares a check in the task's description, on a line `check: COMMAND`.
 */

type Fact = EventData<"agent_tool_observed">;

/** Task-list calls are bookkeeping, not work: left out of spans. */
const TASK_TOOLS = new Set(["TaskCreate", "TaskUpdate", "TaskList", "TaskGet", "TodoWrite"]);

/** What a task's description declares, on lines `check: CMD`, `expect: TEXT`, `expect_calls: N`. */
export interface TaskDeclaration {
  check: string | null;
  expect: string | null;
  expectCalls: number | null;
}

const line = (text: string, key: string) => {
  const m = new RegExp(`^[ \\t]*${key}:[ \\t]*(.+?)[ \\t]*$`, "im").exec(text);
  if (!m?.[1]) return null;
  const v = m[1].replace(/^`(.+)`$/, "$1").trim();
  return v.length > 0 ? v.slice(0, 4000) : null;
};

/** The declaration lines of a task description (absent lines are null). */
export function parseTaskDeclaration(description: string): TaskDeclaration {
  const calls = line(description, "expect_calls");
  const n = calls !== null && /^\d{1,4}$/.test(calls) ? Number(calls) : null;
  return { check: line(description, "check"), expect: line(description, "expect"), expectCalls: n };
}

/**
 * The frozen check of task `taskId`: the first check any reported declaration of it carried (TaskCreate,
 * then TaskUpdate descriptions, in order); once declared it cannot be withdrawn or changed, so a model
 * that edits the description before completing does not escape it. Else the completion's own description.
 */
export function frozenCheck(facts: readonly Fact[], taskId: string, completing: string): string | null {
  for (const f of facts)
    if (f.task?.id === taskId && f.task.description !== undefined) {
      const c = parseTaskDeclaration(f.task.description).check;
      if (c !== null) return c;
    }
  return parseTaskDeclaration(completing).check;
}

/**
 * The reported calls of task `taskId`'s span: after the latest report that put it in progress (work
 * tools only; PostToolUse succeeded, PostToolUseFailure failed). Null when it never went in progress.
 */
export function runtimeSpan(facts: readonly Fact[], taskId: string): CallOutcome[] | null {
  let start = -1;
  for (let i = facts.length - 1; i >= 0; i--)
    if (facts[i]?.task?.id === taskId && facts[i]?.task?.status === "in_progress") {
      start = i;
      break;
    }
  if (start < 0) return null;
  const calls: CallOutcome[] = [];
  for (const f of facts.slice(start + 1)) {
    if (TASK_TOOLS.has(f.tool)) continue;
    if (f.hook_event === "PostToolUse") calls.push("succeeded");
    else if (f.hook_event === "PostToolUseFailure") calls.push("failed");
  }
  return calls;
}

/** A frozen check's outcome, as the appraisal reads it. */
export interface RuntimeCheck {
  command: string;
  status: CheckStatus;
  exit_code: number | null;
  detail: string;
}

/** The appraisal of a completion and whether it is refused (a failed check, below the cap). */
export interface RuntimeAppraisal {
  finding: StepFinding | null;
  calls: number | null;
  blocked: boolean;
  rendered: string;
}

/**
 * Appraises task `taskId` at its completion. Only a failed check refuses the completion (the other
 * findings are recorded: Claude Code shows a TaskCompleted hook's output to the model only when it
 * blocks); after `maxBlocks` refusals of the same task it is let through, recorded as NOT verified.
 */
export function appraiseRuntimeTask(a: {
  facts: readonly Fact[];
  taskId: string;
  step: string;
  check: RuntimeCheck | null;
  priorBlocks: number;
  maxBlocks: number;
}): RuntimeAppraisal {
  const calls = runtimeSpan(a.facts, a.taskId);
  const found = appraiseStep({
    calls,
    siblingInFlight: false,
    batchDenial: false,
    check: a.check ? { status: a.check.status } : null,
  });
  const check = a.check ? { attempt: 1, call_id: a.taskId, step: a.step, duration_ms: 0, ...a.check } : null;
  const failed = found.finding === "check_failed";
  const blocked = failed && a.priorBlocks < a.maxBlocks;
  const lines = [renderFinding(a.step, found.finding, { repeated: a.priorBlocks > 0, check })];
  if (failed && a.check)
    lines.push(
      blocked
        ? `loopgate refused to mark task #${a.taskId} completed. Its output:\n${a.check.detail.slice(0, 1500)}\nFix the work, then mark the task completed again: the same check runs again.`
        : `loopgate let task #${a.taskId} be marked completed after ${a.priorBlocks} refusals; it is NOT verified.`,
    );
  return {
    finding: found.finding,
    calls: calls?.length ?? null,
    blocked,
    rendered: lines.filter(Boolean).join("\n").slice(0, 4000),
  };
}
