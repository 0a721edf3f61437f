import type { ResumeConditionData } from "../../../runner/goal/goal-spec.js";
import type { GoalView, TodoView } from "../../../runner/goal/goal-view.js";

// How a goal reads on a terminal: a small tree of todos with status symbols, the gates and whom they
// wait on, the runtime state and the single next action.

/** One symbol per status: open ○, done ✓, blocked ✗, deferred ◷ (a resume candidate: ◷!). */
export function statusSymbol(t: TodoView): string {
  if (t.status === "done") return "✓";
  if (t.status === "blocked") return "✗";
  if (t.status === "deferred") return t.resumeCandidate ? "◷!" : "◷";
  return "○";
}

/** A resume condition as words. */
export function describeCondition(c: ResumeConditionData): string {
  if (c.kind === "at") return `at ${c.at}`;
  if (c.kind === "todo_status") return `${c.todo_id} is ${c.status}`;
  return `${c.gate_id} is ${c.decision}`;
}

const short = (rev: string) => rev.slice(0, 12);
const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s).replace(/\s+/g, " ");

function detail(t: TodoView): string {
  const parts: string[] = [];
  if (t.completion) parts.push(`done on run ${t.completion.runId} at ${short(t.completion.revision)}`);
  if (t.supersededBy) parts.push(`superseded by ${t.supersededBy}`);
  if (t.noFollowup) parts.push(`no follow-up: ${cut(t.noFollowup, 60)}`);
  if (t.status === "deferred" && t.resumeWhen)
    parts.push(
      `${t.resumeCandidate ? "may resume (reopen it)" : "until"} ${describeCondition(t.resumeWhen)}`,
    );
  if (t.class === "user_gate")
    parts.push(t.gateDecision ? `gate ${t.gateDecision}` : `gate on ${t.decisionScope}: waiting on a person`);
  if (t.requires.length) parts.push(`needs ${t.requires.join(", ")}`);
  if (t.dependsOn.length) parts.push(`after ${t.dependsOn.join(", ")}`);
  if (t.claimedBy) parts.push(`claimed by ${t.claimedBy}`);
  if (t.handoff) parts.push(`handoff ${t.handoff}`);
  return parts.length ? `  [${parts.join("; ")}]` : "";
}

/** The readable status of a goal. */
export function formatGoalStatus(v: GoalView): string {
  const width = Math.max(...v.todos.map((t) => t.id.length));
  const children = new Map<string, TodoView[]>();
  for (const t of v.todos)
    if (t.successorOf) children.set(t.successorOf, [...(children.get(t.successorOf) ?? []), t]);
  const lines: string[] = [];
  const visit = (t: TodoView, depth: number) => {
    const pad = "  ".repeat(depth);
    lines.push(
      `  ${pad}${statusSymbol(t).padEnd(2)} ${t.id.padEnd(width + 2 - depth * 2)} ${t.class.padEnd(18)} ${cut(t.content, 50)}${detail(t)}`,
    );
    for (const c of children.get(t.id) ?? []) visit(c, depth + 1);
  };
  for (const t of v.todos) if (!t.successorOf || !v.todos.some((p) => p.id === t.successorOf)) visit(t, 0);
  const gates = v.todos.filter((t) => t.class === "user_gate" && t.status === "open");
  const limits = Object.entries(v.budget.limits)
    .map(([k, val]) => `${k} ${String(v.budget.used[k] ?? 0)}/${String(val)}`)
    .join(", ");
  return [
    `goal ${v.goalId} · ${v.activation} · runtime ${v.runtimeState} · stream revision ${v.streamRevision} · workspace ${short(v.revision)}`,
    `  ${cut(v.objective, 110)}`,
    "todos (○ open, ✓ done, ✗ blocked, ◷ deferred, ◷! may resume):",
    ...lines,
    ...(gates.length
      ? [
          "gates waiting on a person:",
          ...gates.map(
            (g) =>
              `  ${g.id} (scope ${g.decisionScope}): loopgate gate approve|reject|defer ${v.goalId} ${g.id}`,
          ),
        ]
      : []),
    `runtime: ${v.runtimeState} — ${v.runtimeReason}`,
    ...(limits ? [`budget: ${limits}`] : []),
    `acceptance: ${v.acceptance.map((a) => `${a.proved ? "✓" : "○"} ${a.id}`).join(", ")}`,
    v.closed
      ? "closure: terminal — every frontier item is proved"
      : `not closed: ${v.frontierGaps.slice(0, 4).join("; ")}${v.frontierGaps.length > 4 ? `; … ${v.frontierGaps.length} in all` : ""}`,
    `next: ${v.nextAction}`,
    "",
  ].join("\n");
}

/** The interaction contract, readably. */
export function formatContract(v: GoalView): string {
  return [
    `goal ${v.goalId}: runtime ${v.runtimeState} — ${v.runtimeReason}`,
    JSON.stringify(v.contract, null, 2),
    `next: ${v.nextAction}`,
    "",
  ].join("\n");
}
