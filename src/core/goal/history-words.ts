import type { TurnWork } from "../events/goal/turn-events.js";
import type { StreamEvent } from "../events/loopgate-event.js";

/**
 * Goal-stream facts in a few words, for `goal history`, `events GOAL` and the board: which phase a turn
 * fact records, what a turn worked on, and every other goal fact with the todo it is about.
 */

/** A goal-stream event as read back: its position and its stored time and origin. */
export type HistoryEvent = StreamEvent<"goal"> & { revision: number };

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
