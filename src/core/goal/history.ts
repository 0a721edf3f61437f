import type { TurnWork } from "../events/goal/turn-events.js";
import { spendKey } from "../events/goal/turn-events.js";
import type { StreamEvent } from "../events/loopgate-event.js";
import { leaseLive } from "../kernel/lease.js";
import type { TurnLease } from "./turn/turn-lease.js";

/**
 * A goal's history (`loopgate goal history`): every governed turn with its phase receipts, the runs it
 * read, the commit it wrote back, what it spent and the host's ACK; and every other write to the goal
 * (a person's gate decision, a todo added, closed or deferred, the goal stopped) in stream order with
 * its origin. A projection: a pure function of the stored goal stream, rebuilt on every read. The turn
 * in flight (`goal status`) is read from the turn lease here too; "running" is never stored.
 */

/** A goal-stream event as read back: its position and its stored time and origin. */
export type HistoryEvent = StreamEvent<"goal"> & { revision: number };

/** One recorded phase of a turn: its name, the fact that recorded it, where and when, in a few words. */
export interface PhaseReceipt {
  phase: string;
  type: string;
  revision: number;
  at: string;
  detail: string;
}

/** A goal fact recorded inside a turn's settlement that is not a phase (a completion, a receipt, a spend). */
export interface TurnFact {
  type: string;
  revision: number;
  at: string;
  origin: string;
  summary: string;
}

/** How a turn ended: settled (ACKed), released or failed (given back), or still open. */
export type TurnEnd = "settled" | "released" | "failed" | "in_progress";

export interface TurnEntry {
  kind: "turn";
  /** 1-based, in the order the turns were bound. */
  number: number;
  turnId: string;
  agentId: string;
  turnInstanceId: string;
  work: TurnWork;
  baseRevision: string;
  /** The process that held the goal's turn lease when the turn was bound (never its token). */
  lease: { holder: string; pid: number; host: string } | null;
  startedAt: string;
  endedAt: string | null;
  /** Stream revisions of its first and last fact. */
  fromRevision: number;
  toRevision: number;
  end: TurnEnd;
  phases: PhaseReceipt[];
  /** Every run the turn read: its host run, or one per acceptance item. */
  runs: string[];
  commit: { commit: string; newRevision: string } | null;
  spend: { turns: number; tokens: number; costUsd: number } | null;
  /** The wake-up its scheduler_apply recorded (`terminal`: it stopped because the goal is closed). */
  hint: { action: string; notBefore: string | null; why: string; terminal: boolean } | null;
  /** The host's ACK of that hint; null until it came. */
  ack: { mode: string } | null;
  failure: { code: string; phase: string; detail: string } | null;
  released: string | null;
  facts: TurnFact[];
}

/** A write to the goal outside any turn: a person's (origin operator) or loopgate's own (runtime). */
export interface WriteEntry {
  kind: "write";
  revision: number;
  at: string;
  origin: string;
  /** Who made a person's write (its meta.by); null when unknown (not named, an older log) or loopgate's own. */
  by: string | null;
  type: string;
  /** The todo or gate it is about, when it is about one. */
  subject: string | null;
  summary: string;
}

export type HistoryEntry = TurnEntry | WriteEntry;

export interface GoalHistory {
  entries: HistoryEntry[];
  /** The turn bound last and not settled, released or failed yet. */
  open: TurnEntry | null;
  /** When the turn lease was last taken (the lease itself is the fold's: GoalState.lease). */
  leaseTakenAt: string | null;
  turns: number;
  /** Writes by a person (origin operator). */
  operatorWrites: number;
  /** Ticks that took the turn lease and bound no turn (nothing to do then), not listed. */
  idleLeases: number;
}

const cut = (s: string, n: number) => {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
};
const short = (rev: string) => rev.slice(0, 12);
const usd = (x: number) => `$${Math.round(x * 10_000) / 10_000}`;

/** The phase a turn fact records, and its receipt in a few words; null for any other fact. */
export function phaseOf(e: HistoryEvent): { phase: string; detail: string } | null {
  switch (e.type) {
    case "turn_bound":
      return { phase: "bind", detail: `${workWords(e.data.work)} on ${short(e.data.base_revision)}` };
    case "turn_effect_prepared":
      return { phase: e.data.phase, detail: `prepared ${e.data.effect_ref}` };
    case "turn_effect_readback":
      return { phase: e.data.phase, detail: `readback: ${e.data.found}` };
    case "turn_host_executed":
      // An acceptance turn's host effect is the file naming its runs (its receipts name each run).
      return {
        phase: "host_execute",
        detail: e.data.run_ref.startsWith("effect:") ? `effect ${e.data.run_ref}` : `run ${e.data.run_ref}`,
      };
    case "turn_typed_result": {
      const r = e.data.result;
      return {
        phase: "typed_result",
        detail:
          r.kind === "envelope"
            ? `${r.status} (run ${r.run_id}, task ${r.task_id})`
            : r.kind === "observation"
              ? `observation ${r.result_hash.slice(0, 19)}`
              : `plan ${r.delta_digest.slice(0, 19)}`,
      };
    }
    case "turn_validated": {
      const r = e.data.receipt;
      return {
        phase: "validation",
        detail:
          r.kind === "run"
            ? `receipt ${r.receipt.status} of run ${r.receipt.run_id} on ${short(r.receipt.goal_revision)}`
            : `receipt ${r.digest.slice(0, 19)}`,
      };
    }
    case "turn_writeback_accepted":
      return {
        phase: "durable_writeback",
        detail:
          e.data.commit === e.data.new_revision
            ? `commit ${short(e.data.commit)}`
            : `commit ${short(e.data.commit)}, revision ${short(e.data.new_revision)}`,
      };
    case "turn_quota_spent": {
      const u = e.data.usage;
      return { phase: "quota_spend", detail: `${u.turns} turn, ${u.tokens} tokens, ${usd(u.cost_usd)}` };
    }
    case "turn_scheduler_applied": {
      const h = e.data.hint;
      return {
        phase: "scheduler_apply",
        detail: `${h.action}${h.not_before ? ` at ${h.not_before}` : ""}: ${cut(h.why, 120)}${h.terminal ? " (terminal)" : ""}`,
      };
    }
    case "turn_scheduler_acked":
      return { phase: "scheduler_ack", detail: e.data.mode };
    case "turn_scheduler_apply_failed":
      return { phase: "scheduler_apply", detail: `failed: ${cut(e.data.reason, 160)}` };
    case "turn_rebased":
      return { phase: "rebase", detail: `${short(e.data.from_revision)} → ${short(e.data.to_revision)}` };
    case "turn_released":
      return { phase: "release", detail: cut(e.data.reason, 200) };
    case "turn_failed":
      return {
        phase: e.data.failure.phase,
        detail: `failed (${e.data.failure.code}): ${cut(e.data.failure.detail, 200)}`,
      };
    default:
      return null;
  }
}

/** What a turn worked on, in words. */
export function workWords(w: TurnWork): string {
  if (w.kind === "todo") return `todo ${w.todo_id}`;
  if (w.kind === "replan") return `replan ${w.obligation_id}`;
  return `acceptance ${w.acceptance_ids.join(", ")}`;
}

/** A goal fact that is not a turn's phase, in a few words, and what it is about. */
export function factWords(e: HistoryEvent): { subject: string | null; summary: string } {
  switch (e.type) {
    case "goal_created":
      return {
        subject: null,
        summary: `goal ${e.data.goal_id} created: ${e.data.acceptance.length} acceptance item(s), workspace at ${short(e.data.workspace.initial_revision)}`,
      };
    case "goal_activation_changed":
      return {
        subject: null,
        summary: `goal ${e.data.activation}${e.data.note ? `: ${cut(e.data.note, 120)}` : ""}`,
      };
    case "goal_revision_recorded":
      return {
        subject: null,
        summary: `workspace ${short(e.data.previous)} → ${short(e.data.revision)}: ${cut(e.data.reason, 120)}`,
      };
    case "goal_acceptance_changed":
      return {
        subject: null,
        summary: `acceptance now ${e.data.acceptance.length} item(s): ${cut(e.data.reason, 120)}`,
      };
    case "goal_budget_changed":
      return { subject: null, summary: `budget changed: ${cut(e.data.reason, 120)}` };
    case "goal_no_followup_declared":
      return { subject: null, summary: `no_followup declared: ${cut(e.data.rationale, 160)}` };
    case "todo_added":
      return {
        subject: e.data.todo.id,
        summary: `added ${e.data.todo.id} (${e.data.todo.class})${e.data.successor_of ? `, successor of ${e.data.successor_of}` : ""}: ${cut(e.data.todo.content, 100)}`,
      };
    case "todo_claimed":
      return { subject: e.data.todo_id, summary: `${e.data.todo_id} claimed by ${e.data.agent_id}` };
    case "todo_claim_released":
      return { subject: e.data.todo_id, summary: `${e.data.todo_id} claim by ${e.data.agent_id} released` };
    case "todo_blocked":
      return { subject: e.data.todo_id, summary: `${e.data.todo_id} blocked: ${cut(e.data.reason, 140)}` };
    case "todo_deferred":
      return {
        subject: e.data.todo_id,
        summary: `${e.data.todo_id} deferred${e.data.note ? `: ${cut(e.data.note, 120)}` : ""}`,
      };
    case "todo_reopened":
      return {
        subject: e.data.todo_id,
        summary: `${e.data.todo_id} reopened${e.data.note ? `: ${cut(e.data.note, 120)}` : ""}`,
      };
    case "todo_superseded":
      return {
        subject: e.data.todo_id,
        summary: `${e.data.todo_id} superseded by ${e.data.successor_id}${e.data.reason ? `: ${cut(e.data.reason, 120)}` : ""}`,
      };
    case "todo_closed_no_followup":
      return {
        subject: e.data.todo_id,
        summary: `${e.data.todo_id} closed with no follow-up: ${cut(e.data.rationale, 140)}`,
      };
    case "todo_completed":
      return {
        subject: e.data.todo_id,
        summary: `${e.data.todo_id} done on run ${e.data.receipt.run_id} (${e.data.receipt.status} on ${short(e.data.receipt.goal_revision)})`,
      };
    case "acceptance_receipt_recorded":
      return {
        subject: e.data.acceptance_id,
        summary: `acceptance ${e.data.acceptance_id}: ${e.data.receipt.status} (run ${e.data.receipt.run_id} on ${short(e.data.receipt.goal_revision)})`,
      };
    case "gate_decided":
      return {
        subject: e.data.todo_id,
        summary: `gate ${e.data.todo_id} ${e.data.decision}${e.data.note ? `: ${cut(e.data.note, 120)}` : ""}`,
      };
    case "quota_spent":
      return {
        subject: null,
        summary: `spent ${e.data.turns} turn, ${e.data.tokens} tokens, ${usd(e.data.cost_usd)} (turn ${e.data.turn_id})`,
      };
    case "change_compensated":
      return {
        subject: e.data.successor_id,
        summary: `${short(e.data.reverted_revision)} reverted by ${short(e.data.revert_revision)}; ${e.data.successor_id} takes over: ${cut(e.data.reason, 100)}`,
      };
    default:
      return { subject: subjectOf(e.data), summary: genericWords(e.type, e.data) };
  }
}

/** The todo a fact names, for facts this file does not spell out. */
function subjectOf(data: unknown): string | null {
  if (data && typeof data === "object" && "todo_id" in data && typeof data.todo_id === "string")
    return data.todo_id;
  return null;
}

/** A fact this file does not spell out (a monitor's, a vision's, a newer one): its scalar fields, bounded. */
function genericWords(type: string, data: unknown): string {
  if (!data || typeof data !== "object") return type.replace(/_/g, " ");
  const parts = Object.entries(data)
    .filter(
      ([k, v]) =>
        k !== "identity" &&
        k !== "checkpoint" &&
        (typeof v === "string" || typeof v === "number" || typeof v === "boolean"),
    )
    .map(([k, v]) => `${k} ${cut(String(v), 60)}`);
  return cut(`${type.replace(/_/g, " ")}${parts.length ? `: ${parts.join(", ")}` : ""}`, 240);
}

const LEASE_TYPES = new Set(["turn_lease_acquired", "turn_lease_heartbeat", "turn_lease_released"]);

/** The identity of a turn fact, if it is one. */
function turnKeyOf(e: HistoryEvent): string | null {
  const d = e.data as { identity?: { goal_id: string; agent_id: string; turn_instance_id: string } };
  return d.identity ? spendKey(d.identity) : null;
}

/** The history of a goal from its stored stream, oldest first. */
export function goalHistory(events: readonly HistoryEvent[]): GoalHistory {
  const entries: HistoryEntry[] = [];
  const turns = new Map<string, TurnEntry>();
  let open: TurnEntry | null = null;
  let lease: TurnEntry["lease"] = null;
  let leaseBound = false;
  let idleLeases = 0;
  let operatorWrites = 0;
  let leaseTakenAt: string | null = null;
  let previous: { turn: TurnEntry; at: string } | null = null;
  for (const e of events) {
    if (LEASE_TYPES.has(e.type)) {
      if (e.type === "turn_lease_acquired") {
        if (lease && !leaseBound) idleLeases++;
        leaseTakenAt = e.meta.at;
        lease = { holder: e.data.holder, pid: e.data.owner.pid, host: e.data.owner.host };
        leaseBound = false;
      }
      previous = null;
      continue;
    }
    const key = turnKeyOf(e);
    if (key) {
      let t = turns.get(key);
      if (!t) {
        if (e.type !== "turn_bound") continue; // a fact of a turn never bound: the fold reports it as an anomaly
        t = {
          kind: "turn",
          number: turns.size + 1,
          turnId: key,
          agentId: e.data.identity.agent_id,
          turnInstanceId: e.data.identity.turn_instance_id,
          work: e.data.work,
          baseRevision: e.data.base_revision,
          lease,
          startedAt: e.meta.at,
          endedAt: null,
          fromRevision: e.revision,
          toRevision: e.revision,
          end: "in_progress",
          phases: [],
          runs: [],
          commit: null,
          spend: null,
          hint: null,
          ack: null,
          failure: null,
          released: null,
          facts: [],
        };
        turns.set(key, t);
        entries.push(t);
      }
      leaseBound = true; // this lease did settle work (a new turn, or one it resumed)
      applyTurnFact(t, e);
      open = t.end === "in_progress" ? t : open === t ? null : open;
      previous = { turn: t, at: e.meta.at };
      continue;
    }
    // A runtime fact appended in the same batch as a turn's fact belongs to its settlement (the completion,
    // the receipts, the spend: one append, one time); a person's write never does, whenever it came.
    const batch: { turn: TurnEntry; at: string } | null = previous;
    previous = null;
    if (batch && batch.at === e.meta.at && e.meta.origin === "runtime") {
      previous = batch;
      const owner = batch.turn;
      const w = factWords(e);
      owner.facts.push({
        type: e.type,
        revision: e.revision,
        at: e.meta.at,
        origin: e.meta.origin,
        summary: w.summary,
      });
      owner.toRevision = e.revision;
      if (e.type === "acceptance_receipt_recorded") addRun(owner, e.data.receipt.run_id);
      if (e.type === "todo_completed") addRun(owner, e.data.receipt.run_id);
      continue;
    }
    if (e.meta.origin === "operator") operatorWrites++;
    const w = factWords(e);
    entries.push({
      kind: "write",
      revision: e.revision,
      at: e.meta.at,
      origin: e.meta.origin,
      by: e.meta.by ?? null,
      type: e.type,
      subject: w.subject,
      summary: w.summary,
    });
  }
  if (lease && !leaseBound && open === null) idleLeases++;
  return { entries, open, leaseTakenAt, turns: turns.size, operatorWrites, idleLeases };
}

function addRun(t: TurnEntry, runId: string): void {
  if (!t.runs.includes(runId)) t.runs.push(runId);
}

function applyTurnFact(t: TurnEntry, e: HistoryEvent): void {
  const p = phaseOf(e);
  if (p) t.phases.push({ ...p, type: e.type, revision: e.revision, at: e.meta.at });
  t.toRevision = e.revision;
  switch (e.type) {
    case "turn_host_executed":
      // An acceptance turn's host effect is a file of its runs; its runs are named by its receipts.
      if (!e.data.run_ref.startsWith("effect:")) addRun(t, e.data.run_ref);
      break;
    case "turn_typed_result":
      if (e.data.result.kind === "envelope") addRun(t, e.data.result.run_id);
      break;
    case "turn_writeback_accepted":
      t.commit = { commit: e.data.commit, newRevision: e.data.new_revision };
      break;
    case "turn_quota_spent":
      t.spend = { turns: e.data.usage.turns, tokens: e.data.usage.tokens, costUsd: e.data.usage.cost_usd };
      break;
    case "turn_scheduler_applied":
      t.hint = {
        action: e.data.hint.action,
        notBefore: e.data.hint.not_before,
        why: e.data.hint.why,
        terminal: e.data.hint.terminal === true,
      };
      break;
    case "turn_scheduler_acked":
      t.ack = { mode: e.data.mode };
      t.end = "settled";
      t.endedAt = e.meta.at;
      break;
    case "turn_failed":
      t.failure = { code: e.data.failure.code, phase: e.data.failure.phase, detail: e.data.failure.detail };
      break;
    case "turn_released":
      t.released = e.data.reason;
      t.end = t.failure ? "failed" : "released";
      t.endedAt = e.meta.at;
      break;
    default:
      break;
  }
}

/**
 * A turn in flight, as `goal status` shows it: `running` while the turn lease is live and its process is
 * not known to be gone; `stalled` when the lease expired or its process is gone (the next tick takes it
 * over and resumes the turn by readback); `unsettled` when a turn was left open with no lease held.
 * `turn` is null while the lease holder has bound no turn yet (it is selecting one). A projection of the
 * lease and the turn's facts: no todo's stored status says "running", ever.
 */
export interface TurnInFlight {
  state: "running" | "stalled" | "unsettled";
  why: string;
  holder: string | null;
  pid: number | null;
  host: string | null;
  /** When the lease was taken (or, with no lease, when the open turn was bound). */
  since: string | null;
  /** When the lease runs out unless its holder renews it. */
  until: string | null;
  turn: {
    number: number;
    turnId: string;
    work: TurnWork;
    /** The last phase it recorded, and when. */
    phase: string;
    phaseAt: string;
  } | null;
}

/** The turn in flight now, from the goal's turn lease and its open turn; null when nothing is in flight. */
export function turnInFlight(
  h: Pick<GoalHistory, "open" | "leaseTakenAt">,
  lease: TurnLease | null,
  now: Date,
  /** The lease owner's process seen gone on this host (null: it cannot be told from here). */
  processGone: boolean | null,
): TurnInFlight | null {
  const t = h.open;
  const last = t?.phases.at(-1);
  const turn = t
    ? {
        number: t.number,
        turnId: t.turnId,
        work: t.work,
        phase: last?.phase ?? "bind",
        phaseAt: last?.at ?? t.startedAt,
      }
    : null;
  if (lease) {
    const live = leaseLive(lease, now);
    const state = !live || processGone === true ? "stalled" : "running";
    const why = !live
      ? `its lease ran out at ${lease.expiresAt}; the next tick takes it over${turn ? " and resumes the turn by readback" : ""}`
      : processGone === true
        ? `process ${lease.owner.pid} on ${lease.owner.host} is gone; the next tick here takes the lease over${turn ? " and resumes the turn by readback" : ""}`
        : turn
          ? `${lease.holder} is settling it (lease until ${lease.expiresAt})`
          : `${lease.holder} holds the turn lease and is choosing the work (lease until ${lease.expiresAt})`;
    return {
      state,
      why,
      holder: lease.holder,
      pid: lease.owner.pid,
      host: lease.owner.host,
      since: h.leaseTakenAt,
      until: lease.expiresAt,
      turn,
    };
  }
  if (!t || !turn) return null;
  return {
    state: "unsettled",
    why: "no process holds the turn lease; the next tick resumes the turn by readback",
    holder: null,
    pid: null,
    host: null,
    since: t.startedAt,
    until: null,
    turn,
  };
}
