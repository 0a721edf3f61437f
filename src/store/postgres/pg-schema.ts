import type { PoolClient } from "pg";
import { InputError } from "../../core/kernel/errors.js";

/** One schema change, applied once, in order, recorded in `<schema>.migrations`. */
interface Migration {
  version: number;
  name: string;
  sql: (s: string) => string;
}

/** The channel the events table's trigger notifies on every append (migration 9). */
export const LOG_CHANNEL = "loopgate_events";

/** The first schema version whose appends notify LOG_CHANNEL: an older schema (a board that only reads it) polls. */
export const LOG_NOTIFY_VERSION = 9;

/**
 * The migrations this code knows. Append only: a released migration is never edited.
 * Events and streams mirror the SQLite schema. `log_head` is a one-row counter of the global position:
 * an append locks and bumps it in its own transaction, so positions are handed out in commit order,
 * without gaps (see postgres-event-store.ts). JSON columns are text, so a retry is compared byte for byte.
 */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "events, streams and the position counter",
    sql: (s) => `
      CREATE TABLE ${s}.events (
        position bigint NOT NULL PRIMARY KEY CHECK (position > 0),
        stream text NOT NULL CHECK (stream <> ''),
        revision integer NOT NULL CHECK (revision >= 0),
        id text NOT NULL,
        type text NOT NULL,
        data text NOT NULL,
        meta text NOT NULL,
        recorded_at timestamptz NOT NULL,
        CONSTRAINT events_id_unique UNIQUE (id),
        CONSTRAINT events_stream_revision_unique UNIQUE (stream, revision)
      );
      CREATE TABLE ${s}.streams (
        stream text PRIMARY KEY,
        last_revision integer NOT NULL,
        last_position bigint NOT NULL,
        first_at text NOT NULL,
        last_at text NOT NULL
      );
      CREATE INDEX streams_by_last_position ON ${s}.streams (last_position);
      CREATE TABLE ${s}.log_head (
        one boolean PRIMARY KEY DEFAULT true CHECK (one),
        last_position bigint NOT NULL
      );
      INSERT INTO ${s}.log_head (one, last_position) VALUES (true, 0);`,
  },
  {
    version: 2,
    name: "content-addressed blobs and observations",
    sql: (s) => `
      CREATE TABLE ${s}.blobs (
        hash text PRIMARY KEY CHECK (hash ~ '^[0-9a-f]{64}$'),
        size bigint NOT NULL CHECK (size >= 0),
        content bytea NOT NULL,
        stored_at timestamptz NOT NULL DEFAULT now(),
        CHECK (octet_length(content) = size)
      );
      CREATE TABLE ${s}.observations (
        id text PRIMARY KEY,
        body text NOT NULL,
        stored_at timestamptz NOT NULL DEFAULT now()
      );`,
  },
  {
    version: 3,
    name: "the run queue and its workers",
    sql: (s) => `
      CREATE TABLE ${s}.run_queue (
        job_id text PRIMARY KEY,
        task_path text NOT NULL,
        task_digest text NOT NULL,
        options text NOT NULL,
        state text NOT NULL CHECK (state IN ('queued', 'claimed', 'finished')),
        claimed_by text,
        lease_token text,
        locked_until timestamptz,
        attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        run_id text,
        status text,
        submitted_at timestamptz NOT NULL DEFAULT now(),
        claimed_at timestamptz,
        finished_at timestamptz,
        CHECK ((state = 'claimed') = (lease_token IS NOT NULL AND locked_until IS NOT NULL AND claimed_by IS NOT NULL))
      );
      CREATE INDEX run_queue_claimable ON ${s}.run_queue (submitted_at, job_id) WHERE state <> 'finished';
      CREATE TABLE ${s}.workers (
        worker_id text PRIMARY KEY,
        host text NOT NULL,
        pid integer NOT NULL,
        concurrency integer NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        seen_until timestamptz NOT NULL
      );`,
  },
  {
    version: 4,
    name: "streams removed by gc",
    // A stream `loopgate gc` deleted, with how many events it held: the integrity check counts them, so
    // the positions they leave unused are accounted for, not a lost append. gc_pending: content a
    // removed run named that gc spared for its grace period, removed by a later gc unless named again.
    sql: (s) => `
      CREATE TABLE ${s}.pruned_streams (
        stream text PRIMARY KEY,
        events integer NOT NULL CHECK (events > 0),
        first_position bigint NOT NULL,
        last_position bigint NOT NULL,
        pruned_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE ${s}.gc_pending (
        hash text PRIMARY KEY CHECK (hash ~ '^[0-9a-f]{64}$'),
        noted_at timestamptz NOT NULL DEFAULT now()
      );`,
  },
  {
    version: 5,
    name: "append in one statement",
    // The whole append as one function call, so a write is one round trip instead of four (BEGIN and the
    // position lock, the checks, the inserts, COMMIT). Called as a single statement outside BEGIN, it
    // runs in that statement's own transaction: the log_head lock is held until it commits, so positions
    // stay commit-ordered and gapless. Each statement of a VOLATILE plpgsql function in READ COMMITTED
    // takes a new snapshot, so the checks after the lock see every append committed before it.
    // Outcomes: 'appended' (result_revision: the new last revision), 'conflict' (result_revision: the
    // stream's actual last revision), 'ids_stored' (some id of the batch is already stored: nothing was
    // written and the caller decides retry or duplicate on its full path), 'no_head' (no log_head row).
    sql: (s) => `
      CREATE FUNCTION ${s}.append_batch(
        p_stream text, p_expected text, p_ids text[], p_types text[], p_data text[], p_meta text[],
        p_first_at text, p_last_at text)
      RETURNS TABLE (result_kind text, result_revision integer)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        v_head bigint;
        v_actual integer;
        v_count integer := coalesce(array_length(p_ids, 1), 0);
      BEGIN
        SELECT h.last_position INTO v_head FROM ${s}.log_head h WHERE h.one FOR UPDATE;
        IF v_head IS NULL THEN
          result_kind := 'no_head'; RETURN NEXT; RETURN;
        END IF;
        IF v_count > 0 AND EXISTS (SELECT 1 FROM ${s}.events e WHERE e.id = ANY (p_ids)) THEN
          result_kind := 'ids_stored'; RETURN NEXT; RETURN;
        END IF;
        SELECT coalesce(max(e.revision), -1) INTO v_actual FROM ${s}.events e WHERE e.stream = p_stream;
        IF NOT (p_expected = 'any'
             OR (p_expected = 'no_stream' AND v_actual = -1)
             OR (p_expected = 'stream_exists' AND v_actual >= 0)
             OR p_expected = v_actual::text) THEN
          result_kind := 'conflict'; result_revision := v_actual; RETURN NEXT; RETURN;
        END IF;
        IF v_count = 0 THEN
          result_kind := 'appended'; result_revision := v_actual; RETURN NEXT; RETURN;
        END IF;
        INSERT INTO ${s}.events (position, stream, revision, id, type, data, meta, recorded_at)
          SELECT v_head + x.o, p_stream, v_actual + x.o::integer, x.i, x.t, x.d, x.m, now()
          FROM unnest(p_ids, p_types, p_data, p_meta) WITH ORDINALITY AS x(i, t, d, m, o);
        UPDATE ${s}.log_head SET last_position = v_head + v_count WHERE one;
        INSERT INTO ${s}.streams AS st (stream, last_revision, last_position, first_at, last_at)
          VALUES (p_stream, v_actual + v_count, v_head + v_count, p_first_at, p_last_at)
          ON CONFLICT (stream) DO UPDATE SET last_revision = excluded.last_revision,
            last_position = excluded.last_position, last_at = excluded.last_at;
        result_kind := 'appended'; result_revision := v_actual + v_count; RETURN NEXT;
      END
      $fn$;`,
  },
  {
    version: 6,
    name: "hand-backs and worker heartbeats",
    // A job a worker could not start for a reason of its own machine goes back to the queue with the
    // reason, the worker and how many times that happened, so a bad machine cannot eat jobs silently.
    // A worker's last heartbeat and its interval tell an overdue (stale) worker from a live one before
    // its presence runs out. IF NOT EXISTS: a schema rolled back to an earlier version re-applies cleanly.
    sql: (s) => `
      ALTER TABLE ${s}.run_queue
        ADD COLUMN IF NOT EXISTS handbacks integer NOT NULL DEFAULT 0 CHECK (handbacks >= 0),
        ADD COLUMN IF NOT EXISTS handback_reason text,
        ADD COLUMN IF NOT EXISTS handback_by text,
        ADD COLUMN IF NOT EXISTS handback_at timestamptz;
      ALTER TABLE ${s}.workers
        ADD COLUMN IF NOT EXISTS seen_at timestamptz,
        ADD COLUMN IF NOT EXISTS beat_ms integer CHECK (beat_ms > 0);`,
  },
  {
    version: 7,
    name: "wake idle workers with NOTIFY",
    // Every row that becomes claimable by a write (an enqueue, a release, a hand-back, a queued goal turn
    // moved earlier) notifies channel `loopgate_run_queue` with the schema's name as payload. A trigger,
    // so no statement can forget it; NOTIFY is delivered when the writing transaction commits, so a
    // listener never wakes before the row is visible, and PostgreSQL folds the identical notifications
    // of one transaction into one. What no write announces (a lease that runs out, a `not_before` that
    // comes due) the workers' idle poll finds (queue-listener.ts). Re-applies cleanly.
    sql: (s) => `
      CREATE OR REPLACE FUNCTION ${s}.run_queue_notify() RETURNS trigger
      LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM pg_notify('loopgate_run_queue', TG_TABLE_SCHEMA);
        RETURN NULL;
      END
      $fn$;
      DROP TRIGGER IF EXISTS run_queue_notify ON ${s}.run_queue;
      CREATE TRIGGER run_queue_notify AFTER INSERT OR UPDATE ON ${s}.run_queue
        FOR EACH ROW WHEN (NEW.state = 'queued') EXECUTE FUNCTION ${s}.run_queue_notify();`,
  },
  {
    version: 8,
    name: "a cap on lost claims",
    // How many times a claim of the job was lost (its holder's lease ran out and another claim took the
    // row over), and why a job was finished without a run's end (a dead letter: the claim that found the
    // cap reached). Existing rows start at 0 lost claims. Re-applies cleanly.
    sql: (s) => `
      ALTER TABLE ${s}.run_queue
        ADD COLUMN IF NOT EXISTS lost_claims integer NOT NULL DEFAULT 0 CHECK (lost_claims >= 0),
        ADD COLUMN IF NOT EXISTS dead_reason text;`,
  },
  {
    version: LOG_NOTIFY_VERSION,
    name: "announce appends with NOTIFY",
    // Every statement that appends events notifies channel `loopgate_events` once, whatever the number of
    // rows it inserted (a statement-level trigger over the inserted rows), with a JSON payload: the schema,
    // the last position it wrote and its stream (null when the rows name several streams or one longer than
    // 1000 bytes, so the payload stays far under NOTIFY's 8000-byte limit). NOTIFY is delivered when the
    // appending transaction commits, so a listener never wakes before the events are readable. The board
    // (src/serve/live-feed.ts) reads the log after each wake and polls as the fallback (log-listener.ts).
    // Re-applies cleanly.
    sql: (s) => `
      CREATE OR REPLACE FUNCTION ${s}.events_notify() RETURNS trigger
      LANGUAGE plpgsql AS $fn$
      DECLARE
        v_position bigint;
        v_streams bigint;
        v_stream text;
      BEGIN
        SELECT max(a.position), count(DISTINCT a.stream), min(a.stream)
          INTO v_position, v_streams, v_stream FROM appended a;
        IF v_position IS NULL THEN
          RETURN NULL;
        END IF;
        IF v_streams <> 1 OR octet_length(v_stream) > 1000 THEN
          v_stream := NULL;
        END IF;
        PERFORM pg_notify('${LOG_CHANNEL}',
          json_build_object('schema', TG_TABLE_SCHEMA, 'stream', v_stream, 'position', v_position)::text);
        RETURN NULL;
      END
      $fn$;
      DROP TRIGGER IF EXISTS events_notify ON ${s}.events;
      CREATE TRIGGER events_notify AFTER INSERT ON ${s}.events REFERENCING NEW TABLE AS appended
        FOR EACH STATEMENT EXECUTE FUNCTION ${s}.events_notify();`,
  },
];

/** The newest schema version this code writes. */
export const PG_SCHEMA_VERSION = MIGRATIONS.at(-1)?.version ?? 0;

/** A Postgres identifier safe to splice into SQL: lower-case letters, digits and '_'. */
export function checkSchemaName(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name))
    throw new InputError(
      `Postgres schema name must be lower-case letters, digits and '_' (at most 63), got ${JSON.stringify(name)}`,
      "event store",
    );
  return name;
}

/** The version recorded in the schema (0: no loopgate tables yet). */
export async function schemaVersion(client: PoolClient, s: string): Promise<number> {
  const exists = await client.query("SELECT to_regclass($1) IS NOT NULL AS ok", [`${s}.migrations`]);
  if (!exists.rows[0]?.ok) return 0;
  const r = await client.query(`SELECT coalesce(max(version), 0) AS v FROM ${s}.migrations`);
  return Number(r.rows[0]?.v ?? 0);
}

/** Refuses a schema written by a newer loopgate. */
export function checkNotNewer(version: number, where: string): void {
  if (version > PG_SCHEMA_VERSION)
    throw new InputError(
      `event store schema version ${version} is newer than this loopgate understands (${PG_SCHEMA_VERSION}); upgrade loopgate`,
      where,
    );
}

/**
 * Brings schema `s` up to PG_SCHEMA_VERSION in one transaction under a transaction-scoped advisory lock
 * keyed on the schema name, so any number of processes may open the same fresh database at once: the
 * first applies the migrations, the others wait, then find nothing left to do. DDL is transactional in
 * PostgreSQL, so a crash mid-migration leaves the previous version intact.
 */
export async function migrate(client: PoolClient, s: string, where: string): Promise<number> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`loopgate.migrate.${s}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${s}.migrations (
         version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const version = await schemaVersion(client, s);
    checkNotNewer(version, where);
    for (const m of MIGRATIONS) {
      if (m.version <= version) continue;
      await client.query(m.sql(s));
      await client.query(`INSERT INTO ${s}.migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
    }
    await client.query("COMMIT");
    return PG_SCHEMA_VERSION;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}
