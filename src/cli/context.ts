import { resolve } from "node:path";
import { LoopgateError, RunNotFoundError } from "../core/errors.js";
import type { RecordedEvent } from "../core/events.js";
import { RunJournal } from "../runner/run-journal.js";
import type { EventStore } from "../store/event-store.js";
import { SqliteEventStore } from "../store/sqlite-event-store.js";
import { inspectStoreFolder, refuseEmptyLog } from "../store/store-folder.js";

/** Where a command keeps its log: `--store DIR`, else $LOOPGATE_STORE, else `fallback`. */
export function storeDirFrom(flag: string | undefined, fallback: string): string {
  return resolve(flag ?? process.env.LOOPGATE_STORE ?? fallback);
}

/**
 * Opens the SQLite event log of a store folder: `true` creates it when absent, `false` opens an existing
 * one to write, `"read"` opens an existing one read-only (works on a read-only folder). A missing log is
 * reported with the run that was asked for (`runId`), if any; a log missing, empty or corrupted beside
 * recorded run folders is refused, never overwritten (see store/store-folder.ts).
 */
export async function openStore(dir: string, create: boolean | "read", runId?: string): Promise<EventStore> {
  const folder = inspectStoreFolder(dir, create !== "read");
  if (create !== true && !folder.hasLog) {
    const hint = "pass --store DIR or set LOOPGATE_STORE; runs live in .loopgate/ beside their task file";
    if (runId) throw new RunNotFoundError(runId, `${dir} (no event log there; ${hint})`);
    throw new LoopgateError("store_not_found", `no event log in ${dir}; ${hint}`);
  }
  const store = SqliteEventStore.open(folder.log, { readonly: create === "read" });
  try {
    if (folder.runFolders.length > 0)
      refuseEmptyLog(folder, (await store.listStreams({ prefix: "run-", limit: 1 })).length);
  } catch (e) {
    await store.close();
    throw e;
  }
  return store;
}

/** Reads one run's events or says which run is missing and where it looked. */
export async function readRun(store: EventStore, dir: string, runId: string): Promise<RecordedEvent[]> {
  const events = await store.readStream(RunJournal.stream(runId));
  if (events.length === 0) throw new RunNotFoundError(runId, dir);
  return events;
}
