import { type ObservedEntry, observationId } from "../core/observation/observation.js";
import { ContentCorruptError, type ContentStore } from "../store/kernel/content-store.js";

/**
 * Copies observation `id` and every file blob it names from one ContentStore to another, sending only
 * the blobs `to` lacks. This is how a run's workspace state moves between a run folder
 * (`FolderContentStore(runDir)`: `blobs/` and `observations/`, the layout BlobStore and ObservationStore
 * use) and the shared store (`PostgresEventStore.content()`), in either direction: a worker on another
 * machine pulls the last observation into a fresh run folder and rolls a workspace to it with
 * `BlobStore.restore`. The observation is written last, so a store that holds an observation holds all
 * its blobs; an interrupted copy is simply repeated (every write is idempotent).
 *
 * The body must hash to `id` (observationId over its entries); its full schema is checked again by
 * ObservationStore.get when the workspace reads it.
 */
export async function copyObservation(
  id: string,
  from: ContentStore,
  to: ContentStore,
): Promise<{ blobsCopied: number; blobsNamed: number }> {
  const body = await from.getObservation(id);
  const entries = entriesOf(id, body);
  const hashes = [...new Set(entries.filter((e) => e.type === "file").map((e) => e.hash))];
  const missing = await to.missingBlobs(hashes);
  for (const hash of missing) await to.putBlob(hash, await from.getBlob(hash));
  await to.putObservation(id, body);
  return { blobsCopied: missing.length, blobsNamed: hashes.length };
}

function entriesOf(id: string, body: string): ObservedEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new ContentCorruptError("observation", id, "the source store", "its body is not JSON");
  }
  const entries = (parsed as { entries?: unknown } | null)?.entries;
  if (!Array.isArray(entries) || safeId(entries as ObservedEntry[]) !== id)
    throw new ContentCorruptError("observation", id, "the source store", "its entries do not hash to its id");
  return entries as ObservedEntry[];
}

/** observationId, or undefined for entries too malformed to hash (a missing mode, a non-object). */
function safeId(entries: ObservedEntry[]): string | undefined {
  try {
    return observationId(entries);
  } catch {
    return undefined;
  }
}
