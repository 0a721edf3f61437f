import pg from "pg";

import { type EventSchema, LoopgateEvent, type RecordedEvent } from "../../core/events/loopgate-event.js";
import { LoopgateError } from "../../core/kernel/errors.js";
import { decodeRow, encodeEvents, type StoredRow } from "../kernel/event-codec.js";
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  ListStreamsOptions,
  ReadAllOptions,
  ReadStreamOptions,
  StreamInfo,
} from "../kernel/event-store.js";
import { checkCount, checkExpected, checkStream } from "../kernel/expected-revision.js";
import {
  connectErrorFromPg,
  type PostgresUrl,
  parsePostgresUrl,
  pgConnectionString,
  storeErrorFromPg,
} from "../kernel/pg-url.js";
import { appendToLog, COLUMNS } from "./pg-append.js";
import { checkNotNewer, checkSchemaName, migrate, PG_SCHEMA_VERSION, schemaVersion } from "./pg-schema.js";
import { PostgresContentStore } from "./postgres-content-store.js";
import { PostgresRunQueue } from "./run-queue.js";

/** Options for `PostgresEventStore.open`. */
export interface PostgresEventStoreOptions {
  /** Schema every event is validated against on write and on read (default: `LoopgateEvent`). */
  schema?: EventSchema;
  /** The Postgres schema (namespace) holding loopgate's tables (default `loopgate`). */
  pgSchema?: string;
  /** Open an existing log without migrating or writing it. */
  readonly?: boolean;
  /** With false, a database without loopgate's tables is refused instead of migrated (default true). */
  create?: boolean;
  /** Connections in the pool (default 4). */
  maxConnections?: number;
  /** How long to wait for a connection before a clear error (default 10000 ms). */
  connectTimeoutMs?: number;
}

/** No loopgate log in this database (a read, resume or report against a store that was never written). */
export class PostgresStoreNotFoundError extends LoopgateError {
  constructor(display: string, schema: string) {
    super(
      "store_not_found",
      `no event log in ${display} (schema ${schema} holds no loopgate tables); pass --store the URL the runs were recorded in, or run a task there first`,
    );
  }
}

/**
 * The shared event store: the SQLite store's schema in PostgreSQL.
 *
 * Ordering: every append locks the one row of `log_head` first (`SELECT … FOR UPDATE`), takes the next
 * positions from it and keeps the lock until it commits. Appends therefore commit one at a time in
 * position order, and positions have no gaps: a reader of `readAll` can never see position p+1 before
 * p, which a plain sequence cannot promise (its values are taken at insert time and may commit out of
 * order, so a reader following positions would skip a late-committing lower one for ever). The price is
 * that appends to different streams serialize, as they do in SQLite with BEGIN IMMEDIATE; reads never
 * wait. With the lock held the revision check, the retry check and the inserts run in one READ
 * COMMITTED transaction that sees every earlier append; UNIQUE (stream, revision) and UNIQUE (id) stay as
 * the last line of defence.
 *
 * Round trips: a batch none of whose ids is stored is one statement, a call of `append_batch`
 * (migration 5) that does the lock, the checks and the writes in its own transaction. Only a batch with a
 * stored id (a retry, or a reuse to refuse) takes the full BEGIN … COMMIT path below, which compares the
 * stored rows.
 */
export class PostgresEventStore implements EventStore {
  readonly target: PostgresUrl;
  readonly pgSchema: string;
  private readonly pool: pg.Pool;
  private readonly schema: EventSchema;
  private readonly readonly: boolean;
  /** The last error an idle pooled connection reported (the pool would otherwise crash the process). */
  lastIdleError: Error | undefined;

  private constructor(
    target: PostgresUrl,
    pool: pg.Pool,
    options: PostgresEventStoreOptions,
    pgSchema: string,
  ) {
    this.target = target;
    this.pool = pool;
    this.pgSchema = pgSchema;
    this.schema = options.schema ?? LoopgateEvent;
    this.readonly = options.readonly ?? false;
  }

  /**
   * Connects to `url`, checks the schema version and (unless `readonly` or `create: false`) applies the
   * missing migrations. Every connection problem is a StoreError naming the URL with its password masked.
   */
  static async open(url: string, options: PostgresEventStoreOptions = {}): Promise<PostgresEventStore> {
    const target = parsePostgresUrl(url);
    const pgSchema = checkSchemaName(options.pgSchema ?? "loopgate");
    const pool = new pg.Pool({
      connectionString: pgConnectionString(url),
      max: options.maxConnections ?? 4,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      application_name: "loopgate",
    });
    const store = new PostgresEventStore(target, pool, options, pgSchema);
    pool.on("error", (error) => {
      store.lastIdleError = error;
    });
    try {
      await store.withClient(async (client) => {
        const version = await schemaVersion(client, pgSchema);
        checkNotNewer(version, `store ${target.display}`);
        if (version === PG_SCHEMA_VERSION) return;
        if (options.readonly || options.create === false) {
          if (version === 0) throw new PostgresStoreNotFoundError(target.display, pgSchema);
          if (options.readonly) return; // an older schema can still be read
        }
        await migrate(client, pgSchema, `store ${target.display}`);
      });
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    return store;
  }

  /** Blobs and observations in the same database, through this store's pool (close the event store to end it). */
  content(): PostgresContentStore {
    return new PostgresContentStore({
      withClient: (work) => this.withClient(work),
      pgSchema: this.pgSchema,
      display: this.target.display,
    });
  }

  /** The run queue in the same database, through this store's pool (see run-queue.ts). */
  queue(): PostgresRunQueue {
    return new PostgresRunQueue({ withClient: (work) => this.withClient(work), pgSchema: this.pgSchema });
  }

  /** The schema version recorded in the database. */
  async version(): Promise<number> {
    return this.withClient((client) => schemaVersion(client, this.pgSchema));
  }

  async append(
    stream: string,
    events: readonly LoopgateEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> {
    checkStream(stream);
    checkExpected(expected);
    const encoded = encodeEvents(stream, events, this.schema);
    if (this.readonly)
      throw new LoopgateError("store_readonly", `store ${this.target.display} was opened read-only`);
    return this.withClient((client) =>
      appendToLog(
        client,
        { pgSchema: this.pgSchema, display: this.target.display },
        stream,
        encoded,
        expected,
      ),
    );
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    checkStream(stream);
    const from = checkCount(options.fromRevision, "fromRevision") ?? 0;
    const limit = checkCount(options.limit, "limit") ?? null;
    const rows = await this.rows(
      `SELECT ${COLUMNS} FROM ${this.pgSchema}.events WHERE stream = $1 AND revision >= $2 ORDER BY revision LIMIT $3`,
      [stream, from, limit],
    );
    return rows.map((row) => decodeRow(row, this.schema));
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const from = checkCount(options.fromPosition, "fromPosition") ?? 0;
    const limit = checkCount(options.limit, "limit") ?? null;
    const rows = await this.rows(
      `SELECT ${COLUMNS} FROM ${this.pgSchema}.events WHERE position >= $1 ORDER BY position LIMIT $2`,
      [from, limit],
    );
    return rows.map((row) => decodeRow(row, this.schema));
  }

  async listStreams(options: ListStreamsOptions = {}): Promise<StreamInfo[]> {
    const limit = checkCount(options.limit, "limit") ?? null;
    const prefix = options.prefix ?? "";
    // substr, not LIKE: % and _ in a prefix are not wildcards.
    const result = await this.withClient((client) =>
      client.query(
        `SELECT stream, last_revision, first_at, last_at FROM ${this.pgSchema}.streams
         WHERE substr(stream, 1, length($1)) = $1 ORDER BY last_position DESC LIMIT $2`,
        [prefix, limit],
      ),
    );
    return result.rows.map((r) => ({
      stream: r.stream,
      lastRevision: Number(r.last_revision),
      firstAt: r.first_at,
      lastAt: r.last_at,
    }));
  }

  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }

  /** Runs `work` on one pooled connection; connection failures become StoreErrors naming the URL. */
  async withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      // Nothing was asked of the database yet: whatever failed, it failed to connect.
      throw connectErrorFromPg(this.target, error);
    }
    let broken: unknown;
    // A checked-out client whose connection dies emits 'error'; unheard, that would crash the process.
    // The query in flight fails too, and is reported below; the dead client is then discarded.
    const onError = (error: Error) => {
      broken = error;
    };
    client.on("error", onError);
    try {
      return await work(client);
    } catch (error) {
      const reached = storeErrorFromPg(this.target, error);
      if (reached) broken = error;
      throw reached ?? error;
    } finally {
      client.off("error", onError);
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  private async rows(sql: string, params: unknown[]): Promise<StoredRow[]> {
    const result = await this.withClient((client) => client.query(sql, params));
    return result.rows.map((r) => ({ ...r, position: Number(r.position), revision: Number(r.revision) }));
  }
}

/**
 * The log's own consistency, checked in SQL over every stream (for crash campaigns and `doctor`; the
 * constraints already forbid duplicates): each stream's revisions are 0..n-1, the stream index agrees
 * with the events, and the events held plus those `gc` removed are the position counter N (positions
 * 1..N without gaps when nothing was removed); a stream gc removed holds no events.
 * Returns one line per problem; [] when the log is sound.
 */
export async function integrityProblems(store: PostgresEventStore): Promise<string[]> {
  const s = store.pgSchema;
  // Positions are unique and handed out without gaps, so the events held plus those gc removed (each
  // counted once, migration 4) are exactly the counter: a lost acknowledged append shows as a shortfall.
  const PRUNED = `(SELECT coalesce(sum(events), 0) FROM ${s}.pruned_streams)`;
  const r = await store.withClient((c) =>
    c.query(
      `SELECT 'stream ' || stream || ': ' || count(*) || ' events but revisions ' || min(revision) || '..' || max(revision) AS problem
         FROM ${s}.events GROUP BY stream HAVING min(revision) <> 0 OR max(revision) <> count(*) - 1
       UNION ALL
       SELECT 'stream ' || coalesce(e.stream, x.stream) || ': index says last revision ' || coalesce(x.last_revision::text, 'none')
              || ', events say ' || coalesce(e.last::text, 'none')
         FROM (SELECT stream, max(revision) AS last, max(position) AS pos FROM ${s}.events GROUP BY stream) e
         FULL JOIN ${s}.streams x ON x.stream = e.stream
        WHERE e.last IS DISTINCT FROM x.last_revision OR e.pos IS DISTINCT FROM x.last_position
       UNION ALL
       SELECT 'stream ' || p.stream || ': removed by gc but still holds ' || count(*) || ' events'
         FROM ${s}.pruned_streams p JOIN ${s}.events e ON e.stream = p.stream GROUP BY p.stream
       UNION ALL
       SELECT 'positions: ' || count(*) || ' events at positions ' || coalesce(min(position), 0) || '..' || coalesce(max(position), 0)
              || ', counter ' || (SELECT last_position FROM ${s}.log_head)
              || CASE WHEN ${PRUNED} > 0 THEN ', ' || ${PRUNED} || ' removed by gc' ELSE '' END
         FROM ${s}.events
       HAVING count(*) + ${PRUNED} <> (SELECT last_position FROM ${s}.log_head)
           OR coalesce(min(position), 1) < 1
           OR coalesce(max(position), 0) > (SELECT last_position FROM ${s}.log_head)`,
    ),
  );
  return r.rows.map((row) => String(row.problem));
}
