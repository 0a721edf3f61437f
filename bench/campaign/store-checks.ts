// The campaign's view of a store: read the whole log, and ask the store itself whether it is sound.
import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import type { RecordedEvent } from "../../src/core/events/loopgate-event.js";
import { integrityProblems, PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";

/** A store under test: what loopgate's --store gets, and how the campaign reads and checks it. */
export interface CampaignStore {
  kind: "sqlite" | "postgres";
  /** The --store value. */
  flag: string;
  /** Every event, in position order. */
  readAll(fromPosition?: number): Promise<RecordedEvent[]>;
  /** The store's own integrity check; [] when sound. */
  integrity(): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * SQLite's own check of a log file: `PRAGMA integrity_check` (b-trees, pages, UNIQUE indexes agree with
 * the table) and the same bookkeeping the Postgres check does (stream index agrees with the events).
 * A file SQLite cannot even open or read counts as corrupt, with the reason.
 */
export function sqliteIntegrity(file: string): string[] {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const rows = db.pragma("integrity_check") as { integrity_check: string }[];
    const problems = rows.map((r) => r.integrity_check).filter((r) => r !== "ok");
    const index = db
      .prepare(
        `SELECT s.stream AS stream, s.last_revision AS indexed, max(e.revision) AS actual FROM streams s
         LEFT JOIN events e ON e.stream = s.stream GROUP BY s.stream
         HAVING actual IS NULL OR actual <> indexed OR s.last_position <> max(e.position)`,
      )
      .all() as { stream: string; indexed: number; actual: number | null }[];
    for (const r of index)
      problems.push(
        `stream ${r.stream}: index says last revision ${r.indexed}, events say ${r.actual ?? "none"}`,
      );
    const unindexed = db
      .prepare("SELECT DISTINCT stream FROM events WHERE stream NOT IN (SELECT stream FROM streams)")
      .pluck()
      .all() as string[];
    for (const s of unindexed) problems.push(`stream ${s}: events but no index row`);
    return problems;
  } catch (e) {
    return [`${file}: ${(e as Error).message}`];
  } finally {
    db?.close();
  }
}

/**
 * Postgres's own checks: the constraints that forbid a duplicate (stream, revision) or event id exist and
 * are validated, no duplicate slipped in anyway, and loopgate's SQL integrity check (revisions 0..n-1 per
 * stream, stream index, gapless positions) finds nothing.
 */
export async function postgresIntegrity(store: PostgresEventStore): Promise<string[]> {
  const s = store.pgSchema;
  const problems: string[] = [];
  const constraints = await store.withClient((c) =>
    c.query(
      `SELECT conname, convalidated FROM pg_constraint
        WHERE conrelid = $1::regclass AND conname IN ('events_stream_revision_unique', 'events_id_unique')`,
      [`${s}.events`],
    ),
  );
  const found = new Map(constraints.rows.map((r) => [String(r.conname), Boolean(r.convalidated)]));
  for (const name of ["events_stream_revision_unique", "events_id_unique"])
    if (!found.has(name)) problems.push(`constraint ${name} is missing`);
    else if (!found.get(name)) problems.push(`constraint ${name} is not validated`);
  const dups = await store.withClient((c) =>
    c.query(
      `SELECT 'stream ' || stream || ' revision ' || revision || ' stored ' || count(*) || ' times' AS problem
         FROM ${s}.events GROUP BY stream, revision HAVING count(*) > 1
       UNION ALL
       SELECT 'event id ' || id || ' stored ' || count(*) || ' times' FROM ${s}.events GROUP BY id HAVING count(*) > 1`,
    ),
  );
  problems.push(...dups.rows.map((r) => String(r.problem)));
  problems.push(...(await integrityProblems(store)));
  return problems;
}

/** A SQLite store folder: the log is `events.db` inside it (read read-only, never migrated by the campaign). */
export function sqliteStore(dir: string): CampaignStore {
  const file = `${dir}/events.db`;
  let reader: SqliteEventStore | undefined;
  const open = () => {
    reader ??= SqliteEventStore.open(file, { readonly: true });
    return reader;
  };
  return {
    kind: "sqlite",
    flag: dir,
    readAll: async (fromPosition = 1) => (existsSync(file) ? open().readAll({ fromPosition }) : []),
    integrity: async () => (existsSync(file) ? sqliteIntegrity(file) : []),
    close: async () => {
      await reader?.close();
      reader = undefined;
    },
  };
}

/** A Postgres database (the campaign's own): one reader pool for the whole campaign. */
export async function postgresStore(url: string): Promise<CampaignStore> {
  const store = await PostgresEventStore.open(url, { maxConnections: 2 });
  return {
    kind: "postgres",
    flag: url,
    readAll: (fromPosition = 1) => store.readAll({ fromPosition }),
    integrity: () => postgresIntegrity(store),
    close: () => store.close(),
  };
}
