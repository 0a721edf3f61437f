import { workWords } from "../../../core/goal/history-words.js";
import type { TurnInFlight } from "../../../core/goal/turn-in-flight.js";
import type { ResumeConditionData } from "../../../runner/goal/goal-spec.js";
import type { GoalView, TodoView } from "../../../runner/goal/goal-view.js";
import { oneLine } from "../../output/excerpt.js";
import { type Hints, hintCommand } from "../../output/hints.js";
import { shellWord } from "../../output/store-location.js";

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

/** The todo the turn in flight works on, if any. */
const inFlightTodo = (v: GoalView) => {
  const w = v.inFlight?.turn?.work;
  return w?.kind === "todo" ? w.todo_id : null;
};

function detail(t: TodoView, v: GoalView): string {
  const parts: string[] = [];
  // Derived from the turn lease, never the todo's stored status (which stays open while it runs).
  if (v.inFlight?.turn && inFlightTodo(v) === t.id)
    parts.push(`${v.inFlight.state} in turn ${v.inFlight.turn.number} (${v.inFlight.turn.phase})`);
  if (t.completion) parts.push(`done on run ${t.completion.runId} at ${short(t.completion.revision)}`);
  if (t.supersededBy) parts.push(`superseded by ${t.supersededBy}`);
  if (t.noFollowup) parts.push(`no follow-up: ${cut(t.noFollowup, 60)}`);
  const gate = t.class === "user_gate";
  if (t.status === "deferred" && t.resumeWhen)
    parts.push(
      gate && t.resumeCandidate
        ? `asked again (${describeCondition(t.resumeWhen)})`
        : `${t.resumeCandidate ? "may resume (reopen it)" : "until"} ${describeCondition(t.resumeWhen)}`,
    );
  if (gate)
    parts.push(
      t.gateDecision
        ? `gate ${t.gateDecision}`
        : `gate on ${t.decisionScope}${t.status === "deferred" && !t.resumeCandidate ? ": deferred" : ": waiting on a person"}`,
    );
  if (t.requires.length) parts.push(`needs ${t.requires.join(", ")}`);
  if (t.dependsOn.length) parts.push(`after ${t.dependsOn.join(", ")}`);
  if (t.claimedBy) parts.push(`claimed by ${t.claimedBy}`);
  if (t.handoff) parts.push(`handoff ${t.handoff}`);
  return parts.length ? `  [${parts.join("; ")}]` : "";
}

/** The readable status of a goal. */
export function formatGoalStatus(v: GoalView, hints: Hints = { me: "loopgate", storeArg: "" }): string {
  const width = Math.max(...v.todos.map((t) => t.id.length));
  const children = new Map<string, TodoView[]>();
  for (const t of v.todos)
    if (t.successorOf) children.set(t.successorOf, [...(children.get(t.successorOf) ?? []), t]);
  const lines: string[] = [];
  const visit = (t: TodoView, depth: number) => {
    const pad = "  ".repeat(depth);
    lines.push(
      `  ${pad}${statusSymbol(t).padEnd(2)} ${t.id.padEnd(width + 2 - depth * 2)} ${t.class.padEnd(18)} ${cut(t.content, 50)}${detail(t, v)}`,
    );
    for (const c of children.get(t.id) ?? []) visit(c, depth + 1);
  };
  for (const t of v.todos) if (!t.successorOf || !v.todos.some((p) => p.id === t.successorOf)) visit(t, 0);
  // The gates asked now, as the contract says: the open ones and the deferred ones whose condition holds.
  const gates = v.contract.user_channel.gates;
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
              `  ${g.gate_id} (scope ${g.scope}${g.asked_again ? ", asked again" : ""}): ${hintCommand(hints, `gate approve ${v.goalId} ${g.gate_id}`)} (or reject, cancel, defer --until COND)`,
          ),
        ]
      : []),
    `runtime: ${v.runtimeState} — ${v.runtimeReason}`,
    v.inFlight ? `in flight: ${inFlightLine(v.inFlight)}` : "in flight: no turn",
    ...(limits ? [`budget: ${limits}`] : []),
    ...(v.spend.length ? [`spent by kind: ${v.spend.map(spendLine).join(", ")}`] : []),
    `acceptance: ${v.acceptance.map((a) => `${a.proved ? "✓" : "○"} ${a.id}`).join(", ")}`,
    v.closed
      ? "closure: terminal — every frontier item is proved"
      : `not closed: ${v.frontierGaps.slice(0, 4).join("; ")}${v.frontierGaps.length > 4 ? `; … ${v.frontierGaps.length} in all` : ""}`,
    `next: ${nextLine(v, hints)}`,
    "",
  ].join("\n");
}

/** One kind's lifetime spend: `monitor 2 turns (3 failed polls, 0 turns)`, tokens and cost when any. */
function spendLine(k: GoalView["spend"][number]): string {
  const extra = [
    ...(k.tokens ? [`${k.tokens} tokens`] : []),
    ...(k.costUsd ? [`$${k.costUsd.toFixed(4)}`] : []),
    ...(k.uncharged
      ? [`${k.uncharged} uncharged: ${k.kind === "monitor" ? "failed polls" : "delivered nothing"}`]
      : []),
  ];
  return `${k.kind} ${k.turns} turn${k.turns === 1 ? "" : "s"}${extra.length ? ` (${extra.join(", ")})` : ""}`;
}

/** The interaction contract, readably. */
export function formatContract(v: GoalView, hints: Hints = { me: "loopgate", storeArg: "" }): string {
  return [
    `goal ${v.goalId}: runtime ${v.runtimeState} — ${v.runtimeReason}`,
    JSON.stringify(v.contract, null, 2),
    `next: ${nextLine(v, hints)}`,
    "",
  ].join("\n");
}

/** Seconds, not milliseconds: what a person reads. */
const time = (iso: string | null) => (iso ? iso.replace(/\.\d{3}Z$/, "Z") : "-");

/** The turn in flight as `--json` prints it (also in `goal status --json`). */
export function inFlightWire(f: TurnInFlight | null) {
  if (!f) return null;
  return {
    state: f.state,
    why: f.why,
    holder: f.holder,
    pid: f.pid,
    host: f.host,
    since: f.since,
    until: f.until,
    turn: f.turn
      ? {
          number: f.turn.number,
          turn_id: f.turn.turnId,
          work: f.turn.work,
          phase: f.turn.phase,
          phase_at: f.turn.phaseAt,
        }
      : null,
  };
}

/** The turn in flight in one line. */
export function inFlightLine(f: TurnInFlight): string {
  const who = f.holder ? `${f.holder} (process ${f.pid} on ${f.host})` : "nobody";
  const what = f.turn
    ? `turn ${f.turn.number} · ${workWords(f.turn.work)} · last phase ${f.turn.phase} at ${time(f.turn.phaseAt)}`
    : "no turn bound yet";
  return `${f.state}: ${what} · by ${who} since ${time(f.since)} — ${oneLine(f.why)}`;
}

/**
 * What a person types for the words of a contract action only they can supply (the contract carries none
 * of their words): a quoted sentence to rewrite, so the line still runs when pasted as it is.
 */
const TEXT_WORDS: Record<string, string> = {
  "--rationale": "why nothing follows",
  "--content": "what the new todo does",
  "--reason": "why",
  "--note": "a note",
};

/**
 * The contract's next action as a command that runs when pasted in the same folder: the loopgate the user
 * started, the --store the command needed, the goal's real ids. A word only a person can supply is a
 * quoted sentence they rewrite (said at the end); a new todo's id is one the goal does not hold yet.
 */
export function nextLine(v: GoalView, hints: Hints): string {
  if (v.closed) return "nothing: the goal is closed, every frontier item is proved";
  const first = v.contract.next_cli_actions[0];
  if (!first) return v.nextAction;
  const [head, ...rest] = first.argv;
  let prose = false;
  const words = rest.map((w, i) => {
    if (w === "TODO_ID") return freshTodoId(v);
    if (w === "TEXT") {
      prose = true;
      return shellWord(TEXT_WORDS[rest[i - 1] ?? ""] ?? "your words");
    }
    return shellWord(w);
  });
  // A todo is added with its class (the contract's action leaves it to the person).
  if (rest[0] === "todo" && rest[1] === "add" && !rest.includes("--class"))
    words.push("--class", "advancement_task");
  const line = head === "loopgate" ? hintCommand(hints, words.join(" ")) : first.argv.join(" ");
  return `${line}  (${first.why}${prose ? "; put your own words in the quoted text" : ""})`;
}

/** A todo id the goal does not hold yet, for a hint that adds one. */
function freshTodoId(v: GoalView): string {
  const ids = new Set(v.todos.map((t) => t.id));
  for (let n = 1; ; n++) if (!ids.has(`todo_next_${n}`)) return `todo_next_${n}`;
}
