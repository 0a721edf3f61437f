import type { RecordedEvent } from "../../core/events/loopgate-event.js";
import { RunNotFoundError } from "../../core/kernel/errors.js";
import { RunJournal } from "../../runner/stream/run-journal.js";
import type { EventStore } from "../../store/kernel/event-store.js";
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
export function localDirFrom(flag: string | undefined): string {
  return storeFrom(flag).dir;
}

// Opening a store is the store's door (store/open-store.ts): the commands import it from here.
export { openStore } from "../../store/open-store.js";

/** Reads one run's events or says which run is missing and where it looked. */
export async function readRun(store: EventStore, dir: string, runId: string): Promise<RecordedEvent[]> {
  const events = await store.readStream(RunJournal.stream(runId));
  if (events.length === 0) throw new RunNotFoundError(runId, dir);
  return events;
}
