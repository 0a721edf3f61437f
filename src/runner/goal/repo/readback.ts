import type { Readback } from "../../../core/goal/turn/turn-commands.js";
import { projectEnvelope } from "../../../core/run/envelope.js";
import type { EventStore } from "../../../store/kernel/event-store.js";
import { RunJournal } from "../../stream/run-journal.js";
import { git } from "./goal-workspace.js";
import { TURN_TRAILER } from "./writeback.js";

/**
 * Readback of a writeback (crash recovery): the commit on the workspace's branch whose
 * `Loopgate-Turn` trailer is exactly this turn's key. None → absent (execute); one, on the turn's base
 * → committed (reuse it); two, one on another base, or a lookup that fails → unknown (fail closed).
 */
export async function readbackWriteback(ws: string, turnKey: string, base: string): Promise<Readback> {
  let out: string;
  try {
    out = await git(ws, [
      "log",
      "HEAD",
      "--fixed-strings",
      `--grep=${TURN_TRAILER}: ${turnKey}`,
      `--format=%H %P%x09%(trailers:key=${TURN_TRAILER},valueonly,separator=%x1f)%x1e`,
    ]);
  } catch (e) {
    return { found: "unknown", reason: `git log in ${ws} failed: ${String(e).split("\n")[0]}` };
  }
  const hits = out
    .split("\x1e")
    .map((r) => r.trim())
    .filter(Boolean)
    .map((r) => {
      const [ids = "", trailers = ""] = r.split("\t");
      const [commit = "", ...parents] = ids.trim().split(" ");
      return { commit, parents, values: trailers.split("\x1f").map((v) => v.trim()) };
    })
    .filter((h) => h.values.includes(turnKey));
  if (hits.length === 0) return { found: "absent" };
  if (hits.length > 1)
    return {
      found: "unknown",
      reason: `${hits.length} commits carry ${TURN_TRAILER}: ${turnKey} (${hits.map((h) => h.commit.slice(0, 12)).join(", ")}); which one is the turn's writeback cannot be told`,
    };
  const hit = hits[0] as (typeof hits)[number];
  if (hit.parents.length !== 1 || hit.parents[0] !== base)
    return {
      found: "unknown",
      reason: `commit ${hit.commit.slice(0, 12)} carries the turn's trailer but its parent is ${hit.parents.join(",") || "none"}, not the turn's base ${base.slice(0, 12)}`,
    };
  return {
    found: "committed",
    payload: { phase: "durable_writeback", commit: hit.commit, newRevision: hit.commit },
  };
}

/** What the store says of a turn's run: finished (its envelope), started and unfinished, or absent. */
export type RunLookup =
  | { found: "finished" }
  | { found: "started" }
  | { found: "absent" }
  | { found: "unknown"; reason: string };

export async function readbackRun(store: EventStore, runId: string): Promise<RunLookup> {
  try {
    const events = await store.readStream(RunJournal.stream(runId));
    if (events.length === 0) return { found: "absent" };
    return projectEnvelope(runId, events) ? { found: "finished" } : { found: "started" };
  } catch (e) {
    return { found: "unknown", reason: `reading run ${runId} failed: ${String(e).split("\n")[0]}` };
  }
}
