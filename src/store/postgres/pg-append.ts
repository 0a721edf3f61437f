import pg from "pg";
import { ConcurrencyError, LoopgateError } from "../../core/kernel/errors.js";
import type { EncodedEvent, StoredRow } from "../kernel/event-codec.js";
import type { AppendResult, ExpectedRevision } from "../kernel/event-store.js";
import { matchesExpected } from "../kernel/expected-revision.js";
import { asRetry } from "../kernel/retry-check.js";
import { DuplicateEventIdError } from "../kernel/store-errors.js";

// The append path of the Postgres log: one statement for a new batch, the locked full path for a batch
// some of whose ids are stored (a retry or a duplicate), and the constraint errors as the interface's.

/** The columns of an events row as the store reads them back. */
export const COLUMNS = "position, stream, revision, id, type, data, meta";

/** Which log an append writes: its schema, and how errors name the store (password masked). */
export interface LogAt {
  pgSchema: string;
  display: string;
}

/** Appends `events` to `stream` at `expected`, on `client`; the errors are the EventStore contract's. */
export async function appendToLog(
  client: pg.PoolClient,
  at: LogAt,
  stream: string,
  events: EncodedEvent[],
  expected: ExpectedRevision,
): Promise<AppendResult> {
  const fast = await appendInOneStatement(client, at, stream, events, expected);
  if (fast) return fast;
  try {
    // BEGIN and the lock in one round trip (a simple query may hold several statements).
    const opened = (await client.query(
      `BEGIN; SELECT last_position FROM ${at.pgSchema}.log_head WHERE one FOR UPDATE`,
    )) as unknown as pg.QueryResult[];
    const lastPosition = Number(opened[1]?.rows[0]?.last_position ?? Number.NaN);
    const result = await appendLocked(client, at, lastPosition, stream, events, expected);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw translate(stream, error);
  }
}

/**
 * The common append as one round trip: `append_batch` (migration 5) takes the position lock, checks
 * that no id of the batch is stored and that the expected revision holds, and writes, all in the
 * call's own transaction. Returns undefined when some id is already stored: the caller then takes the
 * full path, which tells an idempotent retry from a duplicate (nothing was written here). A stale
 * revision is a ConcurrencyError, as on the full path. A named statement is parsed once per connection.
 */
async function appendInOneStatement(
  client: pg.PoolClient,
  at: LogAt,
  stream: string,
  events: EncodedEvent[],
  expected: ExpectedRevision,
): Promise<AppendResult | undefined> {
  const s = at.pgSchema;
  let result: pg.QueryResult;
  try {
    result = await client.query({
      name: `loopgate.append.${s}`,
      text: `SELECT result_kind, result_revision FROM ${s}.append_batch($1, $2, $3, $4, $5, $6, $7, $8)`,
      values: [
        stream,
        String(expected),
        events.map((e) => e.id),
        events.map((e) => e.type),
        events.map((e) => e.data),
        events.map((e) => e.meta),
        events[0]?.at ?? null,
        events.at(-1)?.at ?? null,
      ],
    });
  } catch (error) {
    throw translate(stream, error);
  }
  const row = result.rows[0] as { result_kind?: string; result_revision?: number | null } | undefined;
  const revision = Number(row?.result_revision ?? Number.NaN);
  switch (row?.result_kind) {
    case "appended":
      return { lastRevision: revision, appended: events.length };
    case "conflict":
      throw new ConcurrencyError(stream, String(expected), revision);
    case "ids_stored":
      return undefined;
    case "no_head":
      throw new LoopgateError("store_corrupt", `store ${at.display}: ${s}.log_head holds no position row`);
    default:
      throw new LoopgateError(
        "store_corrupt",
        `store ${at.display}: ${s}.append_batch answered ${JSON.stringify(row ?? null)}`,
      );
  }
}

/**
 * The full path, for a batch some of whose ids are stored. Runs with the position lock held: one statement reads what the checks need (the stored rows of the
 * batch's ids and the stream's last revision, in a snapshot taken after the lock was granted), one
 * writes events, the position counter and the stream summary.
 */
async function appendLocked(
  client: pg.PoolClient,
  at: LogAt,
  lastPosition: number,
  stream: string,
  events: EncodedEvent[],
  expected: ExpectedRevision,
): Promise<AppendResult> {
  const s = at.pgSchema;
  if (!Number.isSafeInteger(lastPosition))
    throw new LoopgateError("store_corrupt", `store ${at.display}: ${s}.log_head holds no position row`);
  // events stays the only source of revisions; streams is an index kept in the same transaction.
  const found = await client.query(
    `SELECT false AS is_head, ${COLUMNS} FROM ${s}.events WHERE id = ANY($1::text[])
     UNION ALL
     SELECT true, NULL, NULL, max(revision), NULL, NULL, NULL, NULL FROM ${s}.events WHERE stream = $2`,
    [events.map((e) => e.id), stream],
  );
  const stored = new Map<string, StoredRow>();
  let actual = -1;
  for (const r of found.rows) {
    if (r.is_head) actual = r.revision === null ? -1 : Number(r.revision);
    else stored.set(r.id, { ...r, position: Number(r.position), revision: Number(r.revision) });
  }
  // A retry is recognised before the revision check: its expected revision is the pre-append one.
  const retry = asRetry(stream, events, (id) => stored.get(id));
  if (retry) return retry;
  if (!matchesExpected(expected, actual)) throw new ConcurrencyError(stream, String(expected), actual);
  const first = events[0];
  const last = events.at(-1);
  if (!first || !last) return { lastRevision: actual, appended: 0 };
  for (const event of events) {
    const row = stored.get(event.id);
    if (row)
      throw new DuplicateEventIdError(
        stream,
        event.id,
        `is already stored in stream ${row.stream} at revision ${row.revision}`,
      );
  }
  const lastRevision = actual + events.length;
  const newLast = lastPosition + events.length;
  // Data-modifying CTEs all run to completion, whether or not the outer SELECT reads them.
  await client.query(
    `WITH ins AS (
       INSERT INTO ${s}.events (position, stream, revision, id, type, data, meta, recorded_at)
       SELECT p, $1, r, i, t, d, m, now()
       FROM unnest($2::bigint[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[]) AS x(p, r, i, t, d, m)
       RETURNING 1
     ), head AS (
       UPDATE ${s}.log_head SET last_position = $8 WHERE one RETURNING 1
     ), summary AS (
       INSERT INTO ${s}.streams (stream, last_revision, last_position, first_at, last_at)
       VALUES ($1, $9, $8, $10, $11)
       ON CONFLICT (stream) DO UPDATE SET last_revision = excluded.last_revision,
         last_position = excluded.last_position, last_at = excluded.last_at
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM ins) AS inserted`,
    [
      stream,
      events.map((_, i) => lastPosition + 1 + i),
      events.map((_, i) => actual + 1 + i),
      events.map((e) => e.id),
      events.map((e) => e.type),
      events.map((e) => e.data),
      events.map((e) => e.meta),
      newLast,
      lastRevision,
      first.at,
      last.at,
    ],
  );
  return { lastRevision, appended: events.length };
}

/** A constraint violation that slipped past the checks above, as the error the interface promises. */
function translate(stream: string, error: unknown): unknown {
  if (!(error instanceof pg.DatabaseError) || error.code !== "23505") return error;
  if (error.constraint === "events_id_unique")
    return new DuplicateEventIdError(stream, "(in this batch)", `is already stored (${error.detail ?? ""})`, {
      cause: error,
    });
  if (error.constraint === "events_stream_revision_unique")
    return new ConcurrencyError(stream, "(checked under lock)", -1);
  return error;
}
