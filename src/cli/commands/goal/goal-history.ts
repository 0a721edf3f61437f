import {
  type GoalHistory,
  goalHistory,
  type HistoryEntry,
  type TurnEntry,
} from "../../../core/goal/history.js";
import { workWords } from "../../../core/goal/history-words.js";
import { type TurnInFlight, turnInFlight } from "../../../core/goal/turn-in-flight.js";
import { goalState } from "../../../runner/goal/goal-engine.js";
import { readGoal } from "../../../runner/goal/goal-store.js";
import { ownerProcessGone } from "../../../runner/stream/lease-owner.js";
import { oneLine } from "../../output/excerpt.js";
import { historyEvents } from "../../output/goal-event-lines.js";
import { hintCommand, hintsFor } from "../../output/hints.js";
import type { CommandIO } from "../../output/io.js";
import { goalStore, withStore } from "./goal.js";
import { inFlightLine, inFlightWire } from "./goal-format.js";

// `loopgate goal history GOAL`: every governed turn with its phase receipts, runs, commit, spend and ACK,
// and every other write to the goal in order with its origin (core/goal/history.ts folds them).

/** Seconds, not milliseconds: what a person reads. */
const time = (iso: string | null) => (iso ? iso.replace(/\.\d{3}Z$/, "Z") : "-");
const short = (rev: string) => rev.slice(0, 12);
const usd = (x: number) => `$${Math.round(x * 10_000) / 10_000}`;

/** A turn as `--json` prints it (snake_case, as every goal --json output). */
function turnWire(t: TurnEntry) {
  return {
    kind: "turn" as const,
    number: t.number,
    turn_id: t.turnId,
    agent_id: t.agentId,
    turn_instance_id: t.turnInstanceId,
    work: t.work,
    base_revision: t.baseRevision,
    lease: t.lease,
    started_at: t.startedAt,
    ended_at: t.endedAt,
    from_revision: t.fromRevision,
    to_revision: t.toRevision,
    end: t.end,
    phases: t.phases,
    runs: t.runs,
    commit: t.commit ? { commit: t.commit.commit, new_revision: t.commit.newRevision } : null,
    spend: t.spend ? { turns: t.spend.turns, tokens: t.spend.tokens, cost_usd: t.spend.costUsd } : null,
    hint: t.hint
      ? { action: t.hint.action, not_before: t.hint.notBefore, why: t.hint.why, terminal: t.hint.terminal }
      : null,
    ack: t.ack,
    failure: t.failure,
    released: t.released,
    facts: t.facts,
  };
}

/** An entry as `--json` prints it. */
export function entryWire(e: HistoryEntry) {
  return e.kind === "turn" ? turnWire(e) : e;
}

function turnLines(t: TurnEntry): string[] {
  const by = t.lease ? ` · by ${t.lease.holder} (process ${t.lease.pid} on ${t.lease.host})` : "";
  const lines = [
    `turn ${t.number} · ${t.turnInstanceId} · ${workWords(t.work)} · ${t.end}${by} · ${time(t.startedAt)} → ${time(t.endedAt)}`,
  ];
  // The phases and the facts of the same appends, in stream order.
  const rows = [
    ...t.phases.map((p) => ({ revision: p.revision, name: p.phase, text: p.detail })),
    ...t.facts.map((f) => ({ revision: f.revision, name: "recorded", text: f.summary })),
  ].sort((a, b) => a.revision - b.revision);
  for (const r of rows)
    lines.push(`    r${String(r.revision).padEnd(5)} ${r.name.padEnd(18)} ${oneLine(r.text)}`);
  const tail = [
    t.runs.length ? `runs ${t.runs.join(", ")}` : "no run",
    t.commit ? `commit ${short(t.commit.commit)}` : "no commit",
    t.spend
      ? `spent ${t.spend.turns} turn, ${t.spend.tokens} tokens, ${usd(t.spend.costUsd)}`
      : "nothing spent",
    t.ack
      ? `ACK ${t.ack.mode}${t.hint ? ` (${t.hint.terminal ? "the goal is closed: " : ""}${t.hint.action}: ${oneLine(t.hint.why)})` : ""}`
      : "no ACK",
  ];
  lines.push(`  ${tail.join(" · ")}`);
  if (t.failure)
    lines.push(`  failed (${t.failure.code}) at ${t.failure.phase}: ${oneLine(t.failure.detail)}`);
  if (t.released) lines.push(`  released: ${oneLine(t.released)}`);
  return lines;
}

/** The readable history. */
export function formatHistory(
  goalId: string,
  h: GoalHistory,
  streamRevision: number,
  inFlight: TurnInFlight | null,
): string {
  const lines = [
    `goal ${goalId} · ${h.turns} turn(s) · ${h.operatorWrites} write(s) by a person · stream revision ${streamRevision}`,
  ];
  for (const e of h.entries) {
    if (e.kind === "turn") lines.push(...turnLines(e));
    else
      lines.push(
        `r${String(e.revision).padEnd(5)} ${time(e.at)}  ${e.origin.padEnd(8)} ${oneLine(e.summary)}${e.by ? ` · by ${oneLine(e.by)}` : ""}`,
      );
  }
  if (h.idleLeases)
    lines.push(`(${h.idleLeases} tick(s) took the turn lease and found no work to bind; not listed)`);
  lines.push(inFlight ? `in flight: ${inFlightLine(inFlight)}` : "in flight: nothing");
  return `${lines.join("\n")}\n`;
}

/** `loopgate goal history GOAL`. */
export async function goalHistoryCommand(
  io: CommandIO,
  goalId: string,
  flags: { store?: string; json?: boolean },
): Promise<number> {
  const where = goalStore(flags);
  return withStore(where, "read", async (store) => {
    const log = await readGoal(store, where.dir, goalId);
    const events = historyEvents(log.events);
    const h = goalHistory(events);
    const lease = goalState(log.events).lease;
    const inFlight = turnInFlight(h, lease, new Date(), lease ? ownerProcessGone(lease.owner) : null);
    if (flags.json)
      io.out(
        `${JSON.stringify(
          {
            goal: goalId,
            stream_revision: log.revision,
            turns: h.turns,
            operator_writes: h.operatorWrites,
            idle_leases: h.idleLeases,
            in_flight: inFlightWire(inFlight),
            entries: h.entries.map(entryWire),
          },
          null,
          2,
        )}\n`,
      );
    else {
      io.out(formatHistory(goalId, h, log.revision, inFlight));
      io.out(`every event: ${hintCommand(hintsFor(where), `events ${goalId}`)}\n`);
    }
    return 0;
  });
}
