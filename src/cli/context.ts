import { LoopgateError, RunNotFoundError } from "../core/errors.js";
import type { RecordedEvent } from "../core/events.js";
import { RunJournal } from "../runner/run-journal.js";
import type { EventStore } from "../store/event-store.js";
import { openPostgresStore, type StoreLocation } from "../store/open-store.js";
import { PostgresStoreNotFoundError } from "../store/postgres-event-store.js";
import { SqliteEventStore } from "../store/sqlite-event-store.js";
import { inspectStoreFolder, refuseEmptyLog } from "../store/store-folder.js";
import { type LocatedStore, locateStore } from "./store-location.js";

/**
 * Where a command keeps its log, by the one rule of store-location.ts: `--store DIR|postgres://…`, else
 * the nearest `.loopgate/` walking up, else $LOOPGATE_STORE, else `./.loopgate/`. An empty value, an
 * unsupported `scheme://` or a malformed postgres URL is refused here.
 */
export function storeFrom(flag: string | undefined): LocatedStore {
  return locateStore(flag);
}

/** The local folder of `storeFrom` (the store folder, or where run files live beside a Postgres log). */
export function storeDirFrom(flag: string | undefined): string {
  return storeFrom(flag).dir;
}

/**
 * Opens the event log of a store (a Postgres URL: see store/open-store.ts). For a folder, its SQLite
 * log: `true` creates it when absent, `false` opens an existing one to write, `"read"` opens an existing one read-only (works on a read-only folder). A missing log is
 * reported with the run that was asked for (`runId`), if any; a log missing, empty or corrupted beside
 * recorded run folders is refused, never overwritten (see store/store-folder.ts).
 */
export async function openStore(
  where: StoreLocation | string,
  create: boolean | "read",
  runId?: string,
): Promise<EventStore> {
  if (typeof where !== "string" && where.kind === "postgres")
    return openPostgresStore(where, create).catch((e: unknown) => {
      if (runId && e instanceof PostgresStoreNotFoundError) throw new RunNotFoundError(runId, where.label);
      throw e;
    });
  const dir = typeof where === "string" ? where : where.dir;
  const folder = inspectStoreFolder(dir, create !== "read");
  if (create !== true && !folder.hasLog) {
    const hint =
      "pass --store DIR, or run from the folder the run was started in (a store is found walking up: the nearest .loopgate/, else $LOOPGATE_STORE, else ./.loopgate/)";
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
