// The contract invariants the campaign checks over a whole event log after every kill. Pure functions over
// what the store returned, so a test can hand them a corrupted log and see each one fail.
import type { RecordedEvent } from "../../src/core/events/loopgate-event.js";

/** The shape the checks read: any recorded event (the store's, or a test's hand-made one). */
export type LoggedEvent = Pick<RecordedEvent, "stream" | "revision" | "position" | "id"> & {
  type: string;
  data: unknown;
};

/** Every stream's revisions are exactly 0..n-1 in log order, positions strictly increase, ids are unique. */
export function logProblems(events: readonly LoggedEvent[]): string[] {
  const problems: string[] = [];
  const next = new Map<string, number>();
  const ids = new Set<string>();
  let lastPosition = 0;
  for (const e of events) {
    if (e.position <= lastPosition)
      problems.push(`position ${e.position} after ${lastPosition}: positions must increase`);
    lastPosition = e.position;
    const expected = next.get(e.stream) ?? 0;
    if (e.revision < expected)
      problems.push(`stream ${e.stream}: revision ${e.revision} again (duplicate; expected ${expected})`);
    else if (e.revision > expected)
      problems.push(`stream ${e.stream}: revision ${e.revision} after ${expected - 1} (gap)`);
    next.set(e.stream, Math.max(expected, e.revision + 1));
    if (ids.has(e.id)) problems.push(`event id ${e.id} stored twice`);
    ids.add(e.id);
  }
  return problems;
}

/**
 * Every acknowledged event (one a reader saw committed, or the process was told was appended) is still in
 * the log: same stream, same revision, same id, type and data. One line per event missing or changed.
 */
export function lostAcknowledged(
  acknowledged: readonly LoggedEvent[],
  events: readonly LoggedEvent[],
): string[] {
  const byId = new Map(events.map((e) => [e.id, e]));
  const lost: string[] = [];
  for (const a of acknowledged) {
    const e = byId.get(a.id);
    if (!e) lost.push(`${a.stream}@${a.revision} ${a.type} (${a.id}) is gone`);
    else if (
      e.stream !== a.stream ||
      e.revision !== a.revision ||
      e.type !== a.type ||
      JSON.stringify(e.data) !== JSON.stringify(a.data)
    )
      lost.push(
        `${a.stream}@${a.revision} ${a.type} (${a.id}) changed to ${e.stream}@${e.revision} ${e.type}`,
      );
  }
  return lost;
}

/**
 * Events of one run stream at least `count` long, counting only the run's own events (the lease's are
 * not counted by the fault hook): the process was told these `count` appends succeeded before it died.
 */
export function shortOfCount(events: readonly LoggedEvent[], stream: string, count: number): string[] {
  const own = events.filter((e) => e.stream === stream && !e.type.startsWith("run_lease_")).length;
  return own >= count ? [] : [`${stream}: ${own} events, but ${count} appends had been acknowledged`];
}

interface ToolCallData {
  call_id?: string;
  name?: string;
  mutating?: boolean;
}

/**
 * Mutating tool calls that were in doubt (intent recorded, no result) when a resume began and were then
 * executed again (the same call id starting or finishing after the resume: loopgate has no readback that
 * could finish such a call), or left unresolved (the resume must record `tool_call_abandoned`: rolled
 * back and reported to the model); and any mutating call finished twice. One line per offence, over
 * every stream of the log.
 */
export function blindReruns(events: readonly LoggedEvent[]): string[] {
  const problems: string[] = [];
  const streams = new Map<string, LoggedEvent[]>();
  for (const e of events) streams.set(e.stream, [...(streams.get(e.stream) ?? []), e]);
  for (const [stream, log] of streams) {
    const mutating = new Map<string, string>();
    const open = new Set<string>();
    const inDoubt = new Set<string>();
    const resolved = new Set<string>();
    const finished = new Set<string>();
    for (const e of log) {
      const d = e.data as ToolCallData;
      const id = d.call_id ?? "";
      const what = () => `${stream}: mutating call ${id} (${mutating.get(id)})`;
      if (e.type === "tool_call_started") {
        if (d.mutating) mutating.set(id, d.name ?? "?");
        if (inDoubt.has(id)) problems.push(`${what()} in doubt, then started again`);
        open.add(id);
      } else if (e.type === "tool_call_finished") {
        if (mutating.has(id) && finished.has(id)) problems.push(`${what()} finished twice`);
        else if (inDoubt.has(id)) problems.push(`${what()} in doubt, then run again without readback`);
        finished.add(id);
        open.delete(id);
      } else if (e.type === "tool_call_abandoned") {
        // Abandoned: whatever runs under this id from now on runs blind.
        if (mutating.has(id)) inDoubt.add(id);
        resolved.add(id);
        open.delete(id);
      } else if (e.type === "run_resumed") {
        for (const c of open) if (mutating.has(c)) inDoubt.add(c);
        open.clear();
      }
    }
    for (const c of inDoubt)
      if (!resolved.has(c) && !finished.has(c))
        problems.push(`${stream}: mutating call ${c} (${mutating.get(c)}) in doubt and never resolved`);
  }
  return problems;
}

/** Mutating tool calls with an intent and no result in `events` (what a kill left in doubt). */
export function openMutatingCalls(events: readonly LoggedEvent[]): string[] {
  const open = new Map<string, string>();
  for (const e of events) {
    const d = e.data as ToolCallData;
    if (e.type === "tool_call_started" && d.mutating) open.set(d.call_id ?? "", `${e.stream}:${d.call_id}`);
    else if (e.type === "tool_call_finished" || e.type === "tool_call_abandoned")
      open.delete(d.call_id ?? "");
  }
  return [...open.values()];
}
