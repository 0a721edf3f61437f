import { type RecordedEvent, streamOf } from "../core/events/loopgate-event.js";
import type { GoalState } from "../core/goal/goal-state-shape.js";
import { goalHistory, type WriteEntry } from "../core/goal/history.js";
import { nextTurnPhase } from "../core/goal/turn/turn-decider.js";
import type { TurnState } from "../core/goal/turn/turn-state.js";
import { goalState } from "../runner/goal/goal-engine.js";
import { openGoal } from "../runner/goal/goal-service.js";
import { listGoalIds } from "../runner/goal/goal-store.js";
import type { GoalView, TodoView } from "../runner/goal/goal-view.js";
import type { EventStore } from "../store/kernel/event-store.js";
import { clip, type Html, html, when } from "./html.js";

/** A goal as its board shows it: the CLI's view (`goal status`, `goal next`) and the folded state it comes from. */
export interface GoalBoard {
  view: GoalView;
  state: GoalState;
  events: RecordedEvent[];
}

/** Reads one goal the way `goal status` does (the view with its health), and its folded state. */
export async function readGoalBoard(store: EventStore, localDir: string, goalId: string): Promise<GoalBoard> {
  const { log, view } = await openGoal(store, localDir, goalId);
  return { view, state: goalState(log.events), events: log.events };
}

/** Every goal's line of `loopgate goals`. */
export async function readGoals(store: EventStore, localDir: string): Promise<GoalView[]> {
  const out: GoalView[] = [];
  for (const id of await listGoalIds(store)) out.push((await openGoal(store, localDir, id)).view);
  return out;
}

/** What a gate form needs from the server: whether actions are on, and the CSRF token of the session. */
export interface ActionContext {
  enabled: boolean;
  csrf: string | null;
  /** Why the buttons are absent, said once on the page. */
  offReason: string;
}

const STATUS_COLUMNS = ["open", "done", "blocked", "deferred"] as const;
const badge = (word: string, cls = word) => html`<span class="badge ${cls}">${word}</span>`;
const link = (goalId: string) => `/goals/${encodeURIComponent(goalId)}`;

/** The goals page's content: one line per goal. */
export function goalsMain(views: readonly GoalView[]): Html {
  if (views.length === 0)
    return html`<h1>Goals</h1><p class="muted">No goals in this store; create one from a goal file with <code>loopgate goal new GOAL_FILE</code>.</p>`;
  return html`<h1>Goals</h1><table><tr><th>goal</th><th>activation</th><th>runtime state</th><th>todos done</th><th>gates waiting</th><th>revision</th></tr>
${views.map(
  (
    v,
  ) => html`<tr><td><a href="${link(v.goalId)}"><b>${v.goalId}</b></a><br><span class="small muted">${clip(v.objective, 160)}</span></td>
<td>${badge(v.activation, v.activation === "active" ? "ok" : "deferred")}</td><td>${badge(v.runtimeState, "open")}${v.closed ? html` ${badge("closed", "done")}` : ""}</td>
<td>${v.todos.filter((t) => t.status === "done").length}/${v.todos.length}</td>
<td>${v.contract.user_channel.gates.length}</td><td><code>${v.revision.slice(0, 12)}</code> · stream ${v.streamRevision}</td></tr>`,
)}</table>`;
}

function gateForms(goalId: string, gateId: string, revision: number, a: ActionContext): Html {
  if (!a.enabled) return html``;
  const base = `${link(goalId)}/gates/${encodeURIComponent(gateId)}`;
  const hidden = html`<input type="hidden" name="revision" value="${revision}"><input type="hidden" name="csrf" value="${a.csrf ?? ""}">`;
  const verb = (v: string, cls: string, label: string) =>
    html`<form class="inline" method="post" action="${base}/${v}">${hidden}<input type="text" name="note" placeholder="note (optional)" aria-label="note for ${label}"><button type="submit" class="${cls}" data-action="${v}">${label}</button></form>`;
  return html`<div>${verb("approve", "primary", "Approve")}${verb("reject", "danger", "Reject")}${verb("cancel", "", "Cancel")}
<form class="inline" method="post" action="${base}/defer">${hidden}<input type="text" name="until" required placeholder="until: todo:todo_x=done · gate:todo_y=any · at:2026-12-01T12:00:00Z" size="44" aria-label="resume condition"><input type="text" name="note" placeholder="note (optional)" aria-label="note for Defer"><button type="submit" data-action="defer">Defer</button></form></div>`;
}

function relations(t: TodoView, all: readonly TodoView[]): Html {
  const blocks = all.filter((o) => o.dependsOn.includes(t.id)).map((o) => o.id);
  const parts: Html[] = [];
  if (t.dependsOn.length)
    parts.push(html`<div>after ${t.dependsOn.map((d) => html`<code>${d}</code> `)}</div>`);
  if (blocks.length) parts.push(html`<div>blocks ${blocks.map((d) => html`<code>${d}</code> `)}</div>`);
  if (t.requires.length) parts.push(html`<div>needs decision ${t.requires.join(", ")}</div>`);
  if (t.supersededBy) parts.push(html`<div>superseded by <code>${t.supersededBy}</code></div>`);
  if (t.successorOf) parts.push(html`<div>successor of <code>${t.successorOf}</code></div>`);
  if (t.handoff) parts.push(html`<div>handoff ${t.handoff}</div>`);
  return html`<div class="small muted">${parts}</div>`;
}

/** Who made each gate's last decision (meta.by of its gate_decided), by gate; absent when unknown. */
function gateDeciders(events: readonly RecordedEvent[]): Map<string, string> {
  const by = new Map<string, string>();
  for (const e of events)
    if (e.type === "gate_decided") {
      if (e.meta.by !== undefined) by.set(e.data.todo_id, e.meta.by);
      else by.delete(e.data.todo_id);
    }
  return by;
}

/** The goal's writes outside its turns, newest first, as `goal history` lists them (with who made them). */
function recentWrites(events: readonly RecordedEvent[], n: number): WriteEntry[] {
  const h = goalHistory(streamOf("goal", events));
  return h.entries
    .filter((e): e is WriteEntry => e.kind === "write")
    .slice(-n)
    .reverse();
}

function todoCard(t: TodoView, all: readonly TodoView[], decidedBy: ReadonlyMap<string, string>): Html {
  const by = decidedBy.get(t.id);
  return html`<div class="todo${t.class === "user_gate" && t.status === "open" ? " waiting" : ""}" id="${t.id}" data-status="${t.status}">
<div><span class="id">${t.id}</span> <span class="small muted">${t.class}</span></div>
<div>${t.content}</div>
${t.class === "user_gate" ? html`<div class="small">scope <b>${t.decisionScope}</b>: ${t.gateDecision ? html`${badge(t.gateDecision)}${t.gateDecision !== "deferred" && by ? html` by <span class="actor">${by}</span>` : ""}` : "waiting on a person"}</div>` : ""}
${t.completion ? html`<div class="small">done on run <a href="/runs/${encodeURIComponent(t.completion.runId)}"><code>${t.completion.runId}</code></a> at <code>${t.completion.revision.slice(0, 12)}</code></div>` : ""}
${t.resumeWhen ? html`<div class="small">${t.resumeCandidate ? "may resume (reopen it)" : "deferred until"} <code>${JSON.stringify(t.resumeWhen)}</code></div>` : ""}
${t.blockReason ? html`<div class="small">blocked: ${t.blockReason}</div>` : ""}
${t.noFollowup ? html`<div class="small">closed, no follow-up: ${t.noFollowup}</div>` : ""}
${t.note ? html`<div class="small muted">note: ${t.note}</div>` : ""}
${relations(t, all)}
</div>`;
}

function turnLine(key: string, t: TurnState): Html {
  const next = nextTurnPhase(t);
  const work = t.work
    ? t.work.kind === "todo"
      ? t.work.todo_id
      : t.work.kind === "replan"
        ? `replan ${t.work.obligation_id}`
        : `acceptance ${t.work.acceptance_ids.join(", ")}`
    : "?";
  const result = t.result
    ? t.result.kind === "envelope"
      ? html`run <a href="/runs/${encodeURIComponent(t.result.run_id)}"><code>${t.result.run_id}</code></a> ${badge(t.result.status)}`
      : html`${t.result.kind}`
    : "";
  const state =
    next.kind === "done"
      ? badge("settled", "done")
      : next.kind === "released"
        ? badge(`released: ${next.reason}`, "deferred")
        : badge(`in flight: ${next.kind}`, "running");
  return html`<tr data-turn="${t.identity?.turn_instance_id ?? key}"><td><code>${t.identity?.turn_instance_id ?? key}</code></td><td>${work}</td><td>${state}</td><td>${result}</td>
<td>${t.receipt ? (t.receipt.kind === "run" ? `receipt: ${t.receipt.receipt.status} on ${t.receipt.receipt.goal_revision.slice(0, 12)}` : "typed receipt") : ""}</td>
<td>${t.writeback ? html`commit <code>${t.writeback.commit.slice(0, 12)}</code>` : ""}</td>
<td>${t.acked ? `${t.acked.hint.action}${t.acked.hint.not_before ? ` at ${when(t.acked.hint.not_before)}` : ""}` : ""}${t.failure ? html` ${badge(t.failure.code, "failed")}` : ""}</td></tr>`;
}

/** The board's content: gates waiting on a person first, the state and why, the turn in flight, the columns, the rest. */
export function goalMain(b: GoalBoard, actions: ActionContext, notice: Html | null): Html {
  const v = b.view;
  const s = b.state;
  const gates = v.contract.user_channel.gates;
  const inFlight = [...s.turnOrder].reverse().find((k) => {
    const t = s.turns[k];
    const n = t ? nextTurnPhase(t).kind : "done";
    return n !== "done" && n !== "released";
  });
  const decidedBy = gateDeciders(b.events);
  const writes = recentWrites(b.events, 20);
  const limits = Object.entries(v.budget.limits)
    .map(([k, val]) => `${k} ${String(v.budget.used[k] ?? 0)}/${String(val)}`)
    .join(" · ");
  return html`<h1>Goal <code>${v.goalId}</code> ${badge(v.activation, v.activation === "active" ? "ok" : "deferred")} ${badge(v.runtimeState, "open")}${v.closed ? html` ${badge("closed", "done")}` : ""}</h1>
<p>${v.objective}</p>
<p class="small muted" id="revision" data-revision="${v.streamRevision}">stream revision ${v.streamRevision} · workspace <code>${v.revision.slice(0, 12)}</code> · agent ${v.agent.agent_id} (${v.agent.kind})</p>
${notice ?? ""}
<section id="gates"><h2>Waiting on a person</h2>
${gates.length === 0 && v.contract.user_channel.actions.length === 0 ? html`<p class="muted">Nothing waits on a person.</p>` : ""}
${gates.map(
  (
    g,
  ) => html`<div class="card waiting" data-gate="${g.gate_id}"><b>${g.gate_id}</b> — ${g.content}<div class="small">decision scope <b>${g.scope}</b>; covers ${g.covers.join(", ") || "nothing yet"}${g.asked_again ? " · asked again (a deferral's condition holds)" : ""}</div>
${gateForms(v.goalId, g.gate_id, v.streamRevision, actions)}</div>`,
)}
${v.contract.user_channel.actions.map((a) => html`<div class="card"><b>${a.todo_id}</b> (${a.action}): ${a.detail}</div>`)}
${gates.length && !actions.enabled ? html`<p class="small muted">${actions.offReason}</p>` : ""}
</section>
<h2>Runtime state</h2><div class="card"><b>${v.runtimeState}</b> — ${v.runtimeReason}<br>next: ${v.nextAction}
${v.contract.workspace_guard.ok ? "" : html`<div class="notice error">workspace: ${v.contract.workspace_guard.issues.map((i) => i.detail).join("; ")}</div>`}
<div class="small muted">scheduler: ${v.contract.scheduler_hint.action}${v.contract.scheduler_hint.not_before ? ` not before ${when(v.contract.scheduler_hint.not_before)}` : ""}${limits ? ` · budget ${limits}` : ""}</div></div>
<h2>Turn in flight</h2>
${inFlight && s.turns[inFlight] ? html`<table>${turnLine(inFlight, s.turns[inFlight] as TurnState)}</table>` : html`<p class="muted">No turn in flight.</p>`}
${s.lease ? html`<p class="small muted">turn lease: ${s.lease.holder}, until ${when(s.lease.expiresAt)}</p>` : ""}
<h2>Todos</h2><div class="columns">
${STATUS_COLUMNS.map(
  (c) =>
    html`<div class="column" data-column="${c}"><h3>${c} (${v.todos.filter((t) => t.status === c).length})</h3>${v.todos
      .filter((t) => t.status === c)
      .map((t) => todoCard(t, v.todos, decidedBy))}</div>`,
)}</div>
<h2>Acceptance</h2><table><tr><th>item</th><th>proved</th><th>last evidence</th></tr>
${v.acceptance.map((a) => {
  const last = s.acceptanceReceipts[a.id]?.at(-1)?.receipt;
  return html`<tr><td><code>${a.id}</code></td><td>${a.proved ? badge("proved", "done") : badge("not proved", "open")}</td>
<td>${last ? html`run <a href="/runs/${encodeURIComponent(last.run_id)}"><code>${last.run_id}</code></a> ${badge(last.status)} on <code>${last.goal_revision.slice(0, 12)}</code>` : html`<span class="muted">none yet</span>`}</td></tr>`;
})}</table>
<h2>Vision checkpoints</h2>
${Object.values(s.visions).length === 0 ? html`<p class="muted">No vision recorded.</p>` : ""}
${Object.values(s.visions).map(
  (vi) =>
    html`<div class="card"><b>${vi.agentId}</b> (${vi.last}) at revision <code>${vi.checkpoint.goal_revision.slice(0, 12)}</code>, acceptance version ${vi.checkpoint.acceptance_version}<pre>${clip(vi.route, 3000)}</pre></div>`,
)}
<h2>Turns</h2>
${
  s.turnOrder.length === 0
    ? html`<p class="muted">No governed turn yet.</p>`
    : html`<table id="turns"><tr><th>turn</th><th>work</th><th>state</th><th>result</th><th>receipt</th><th>writeback</th><th>scheduler</th></tr>
${[...s.turnOrder].reverse().map((k) => (s.turns[k] ? turnLine(k, s.turns[k] as TurnState) : ""))}</table>`
}
<h2>Writes</h2>
${
  writes.length === 0
    ? html`<p class="muted">No write outside the turns.</p>`
    : html`<table id="writes"><tr><th>revision</th><th>when</th><th>origin</th><th>by</th><th>what</th></tr>
${writes.map((w) => html`<tr data-revision="${w.revision}"><td><code>${w.revision}</code></td><td>${when(w.at)}</td><td>${w.origin}</td><td>${w.by ?? html`<span class="muted">${w.origin === "operator" ? "unknown" : "loopgate"}</span>`}</td><td>${clip(w.summary, 300)}</td></tr>`)}</table>
<p class="small muted">the last ${writes.length}; every write with its turns: <code>loopgate goal history ${v.goalId}</code></p>`
}
${v.frontierGaps.length ? html`<h2>Not closed yet</h2><ul>${v.frontierGaps.slice(0, 20).map((g) => html`<li>${g}</li>`)}</ul>` : ""}`;
}
