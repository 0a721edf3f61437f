import type { EventData, LoopgateEvent } from "../../core/events/loopgate-event.js";

/** One plan step as loopgate keeps it (normalized, as recorded in `todo_written`). */
export type TodoItem = EventData<"todo_written">["items"][number];
export type TodoChange = EventData<"todo_written">["changes"][number];
export type TodoStatus = TodoItem["status"];

/** One step as the model writes it. `check: null` withdraws a check; an omitted field keeps what was there. */
export interface TodoInput {
  content: string;
  status: TodoStatus;
  expect?: string | undefined;
  check?: string | null | undefined;
  expect_calls?: number | undefined;
}

/** The result of one write: the new plan, what was not taken (and why), and the transitions. */
export interface TodoWrite {
  items: TodoItem[];
  changes: TodoChange[];
  /** Steps that moved to completed on this write. */
  completed: string[];
  /** Steps that were completed and moved back to pending or in progress. */
  reopened: string[];
}

/** The plan as of the run's events: the items of the last `todo_written`; the plan is derived, never stored. */
export function currentPlan(events: readonly LoopgateEvent[]): TodoItem[] {
  const last = events.findLast((e) => e.type === "todo_written");
  return last?.type === "todo_written" ? last.data.items : [];
}

/** The previous item a new one continues: the same words, else a reworded step at the same position. */
function previousOf(prev: readonly TodoItem[], next: readonly TodoInput[], i: number): TodoItem | undefined {
  const item = next[i];
  if (!item) return undefined;
  const same = prev.find((p) => p.content === item.content);
  if (same) return same;
  const at = prev[i];
  if (at && !next.some((n) => n.content === at.content)) return at;
  return undefined;
}

/**
 * Applies a write to the plan. A step's check is frozen when the step completes: a different check on that
 * write or any later one is reported as a change and not taken; a completion that omits a check declared
 * while the step was open restores and freezes it; a check withdrawn (`null`) while the step is open stays
 * withdrawn. The plan is the model's: nothing else is rewritten.
 */
export function applyTodoWrite(prev: readonly TodoItem[], next: readonly TodoInput[]): TodoWrite {
  const changes: TodoChange[] = [];
  const completed: string[] = [];
  const reopened: string[] = [];
  const items = next.map((n, i): TodoItem => {
    const p = previousOf(prev, next, i);
    const wasDone = p?.status === "completed";
    const proposed = n.check === undefined ? (p?.check ?? null) : n.check;
    let check: string | null = proposed;
    let frozen = p?.check_frozen ?? false;
    if (frozen && p?.check) {
      // Frozen since an earlier completion: anything different is reported, never taken.
      if (n.check !== undefined && n.check !== p.check)
        changes.push({ step: n.content, kind: "check_kept", proposed: n.check, kept: p.check });
      check = p.check;
    } else if (n.status === "completed" && !wasDone) {
      // The completing write freezes the check declared while the step was open.
      const declared = p?.check ?? null;
      if (declared !== null && n.check === undefined) {
        changes.push({ step: n.content, kind: "check_restored", proposed: null, kept: declared });
        check = declared;
      } else if (declared !== null && n.check !== declared) {
        changes.push({ step: n.content, kind: "check_kept", proposed: n.check ?? null, kept: declared });
        check = declared;
      }
      frozen = check !== null;
    }
    if (n.status === "completed" && !wasDone) completed.push(n.content);
    if (wasDone && n.status !== "completed") reopened.push(n.content);
    const expect = n.expect ?? p?.expect;
    const expectCalls = n.expect_calls ?? p?.expect_calls;
    return {
      content: n.content,
      status: n.status,
      ...(expect !== undefined ? { expect } : {}),
      check,
      ...(expectCalls !== undefined ? { expect_calls: expectCalls } : {}),
      check_frozen: frozen,
    };
  });
  return { items, changes, completed, reopened };
}

const MARK: Record<TodoStatus, string> = { pending: "[ ]", in_progress: "[~]", completed: "[x]" };

/** The todo result: every step with its predictions, then what was not taken. */
export function renderPlan(w: TodoWrite, checksRun: boolean): string {
  const lines = ["Plan:"];
  for (const it of w.items) {
    lines.push(`${MARK[it.status]} ${it.content}`);
    if (it.expect !== undefined) lines.push(`    expect: ${it.expect}`);
    if (it.check !== null) lines.push(`    check: ${it.check}${it.check_frozen ? " (frozen)" : ""}`);
    if (it.expect_calls !== undefined) lines.push(`    expect_calls: ${it.expect_calls}`);
  }
  if (w.items.length === 0) lines.push("(empty)");
  for (const c of w.changes)
    lines.push(
      c.kind === "check_restored"
        ? `loopgate: step ${JSON.stringify(c.step)} completed without its check; the check declared while it was open (${JSON.stringify(c.kept)}) is restored and frozen.`
        : `loopgate: the check of step ${JSON.stringify(c.step)} is frozen since it completed; ${c.proposed === null ? "withdrawing it" : `the change to ${JSON.stringify(c.proposed)}`} was not taken (kept ${JSON.stringify(c.kept)}).`,
    );
  for (const s of w.completed) {
    const it = w.items.find((x) => x.content === s);
    if (it?.check)
      lines.push(
        checksRun
          ? `loopgate: the check of step ${JSON.stringify(s)} runs after this batch of tool calls.`
          : `loopgate: step checks are disabled for this run; the check of step ${JSON.stringify(s)} will not run.`,
      );
  }
  return lines.join("\n");
}
