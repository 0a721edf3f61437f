import { streamOf } from "../../core/events/loopgate-event.js";
import { factWords, type HistoryEvent, phaseOf } from "../../core/goal/history-words.js";
import { oneLine } from "./excerpt.js";

// How `loopgate events goal-ID` prints a goal's stream: one line per event, the turn phases and goal facts
// in the words `goal history` uses (core/goal/history.ts).

/** The goal's stored events as the history fold reads them (every one of a goal's kind, or refused). */
export function historyEvents(events: readonly { type: string }[]): HistoryEvent[] {
  return streamOf("goal", events as HistoryEvent[]);
}

/** One goal-stream event as `loopgate events goal-ID` prints it. */
export function goalEventLine(e: HistoryEvent): string {
  const head = `${String(e.revision).padStart(4)} ${e.meta.at.slice(11, 23)} ${e.meta.origin.padEnd(8)} ${e.type.padEnd(26)}`;
  switch (e.type) {
    case "turn_lease_acquired":
      return `${head} ${e.data.holder} (process ${e.data.owner.pid} on ${e.data.owner.host}) until ${e.data.expires_at}${e.data.previous ? `, taken over (${e.data.previous.reason}) from ${e.data.previous.holder}` : ""}`;
    case "turn_lease_heartbeat":
      return `${head} until ${e.data.expires_at}`;
    case "turn_lease_released":
      return `${head} ${oneLine(e.data.reason)}`;
    default: {
      const id = (e.data as { identity?: { turn_instance_id: string } }).identity;
      const p = phaseOf(e);
      const words = p ? `${p.phase}: ${p.detail}` : factWords(e).summary;
      return `${head} ${id ? `${id.turn_instance_id} · ` : ""}${oneLine(words)}${e.meta.by ? ` · by ${oneLine(e.meta.by)}` : ""}`;
    }
  }
}
