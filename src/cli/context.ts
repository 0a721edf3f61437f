import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { LoopgateError, RunNotFoundError } from "../core/errors.js";
import type { RecordedEvent } from "../core/events.js";
import { RunJournal } from "../runner/run-journal.js";
import type { EventStore } from "../store/event-store.js";
import { SqliteEventStore } from "../store/sqlite-event-store.js";

/** Where a command keeps its log: `--store DIR`, else $LOOPGATE_STORE, else `fallback`. */
export function storeDirFrom(flag: string | undefined, fallback: string): string {
  return resolve(flag ?? process.env.LOOPGATE_STORE ?? fallback);
}

/**
 * Opens the SQLite event log of a store folder, creating it when `create` is set; a missing log is
 * reported with the run that was asked for (`runId`), if any.
 */
export function openStore(dir: string, create: boolean, runId?: string): EventStore {
  const db = join(dir, "events.db");
  if (!create && !existsSync(db)) {
    const hint = "pass --store DIR or set LOOPGATE_STORE; runs live in .loopgate/ beside their task file";
    if (runId) throw new RunNotFoundError(runId, `${dir} (no event log there; ${hint})`);
    throw new LoopgateError("store_not_found", `no event log in ${dir}; ${hint}`);
  }
  return SqliteEventStore.open(db);
}

/** Reads one run's events or says which run is missing and where it looked. */
export async function readRun(store: EventStore, dir: string, runId: string): Promise<RecordedEvent[]> {
  const events = await store.readStream(RunJournal.stream(runId));
  if (events.length === 0) throw new RunNotFoundError(runId, dir);
  return events;
}
