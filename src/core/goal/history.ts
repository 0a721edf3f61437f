import type { TurnWork } from "../events/goal/turn-events.js";
import { spendKey } from "../events/goal/turn-events.js";
import { factWords, type HistoryEvent, phaseOf } from "./history-words.js";

/**
 * A goal's history (`loopgate goal history`): every governed turn with its phase receipts, the runs it
 * read, the commit it wrote back, what it spent and the host's ACK; and every other write to the goal
 * (a person's gate decision, a todo added, closed or deferred, the goal stopped) in stream order with
 * its origin. A projection: a pure function of the stored goal stream, rebuilt on every read. The facts
 * in words are in history-words.ts; the turn in flight (`goal status`), read from the turn lease and the
 * open turn, in turn-in-flight.ts: "running" is never stored.
 */

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
