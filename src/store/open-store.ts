// The one door of the store for the CLI (the import rule of scripts/import-rules.ts): where a store is, opening
// it, and what the commands use of it. The two rooms behind it, sqlite/ and postgres/, are loaded with a
// dynamic import() when a store of their kind is opened, so a run on a folder store never loads pg, and
// `--help` loads neither driver. What the door re-exports statically is small and driver-free.
import { resolve } from "node:path";
import { InputError, LoopgateError, RunNotFoundError } from "../core/kernel/errors.js";
import type { EventStore } from "./kernel/event-store.js";
import { parsePostgresUrl } from "./kernel/pg-url.js";
import { inspectStoreFolder, refuseEmptyLog } from "./kernel/store-folder.js";
import type { PostgresEventStore } from "./postgres/postgres-event-store.js";

export { ContentCorruptError, ContentMissingError } from "./kernel/content-store.js";
export { QUEUE_POLICY, type QueuePolicy, WAKE_POLICY, type WakePolicy } from "./kernel/queue-policy.js";
export { StoreError } from "./kernel/store-errors.js";
export { inspectStoreFolder } from "./kernel/store-folder.js";
export type { PgPruneReport } from "./postgres/pg-prune.js";
export type { PostgresEventStore } from "./postgres/postgres-event-store.js";
export type { PostgresRunQueue } from "./postgres/run-queue.js";
export type { Claim, JobOptions } from "./postgres/run-queue-rows.js";
export type { JobSummary } from "./postgres/run-queue-view.js";

/**
 * Where a command keeps its log, as `--store` or $LOOPGATE_STORE name it.
 * - `folder`: a SQLite log in `dir/events.db`, run folders in `dir/runs/`.
 * - `postgres`: the log in the database at `url`; run folders stay in the local `dir`.
 * `label` names the store in messages: the folder, or the URL with its password masked.
 */
export type StoreLocation =
  | { kind: "folder"; dir: string; label: string }
  | { kind: "postgres"; url: string; dir: string; label: string };

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

/**
 * Reads a `--store` value: a `postgres://` or `postgresql://` URL selects PostgreSQL, any other
 * `scheme://` is refused (it would otherwise become a folder named `scheme:`), anything else is a folder.
 * `fallbackDir` is the folder when no value is given, and the local folder for run files with a URL.
 */
export function storeLocation(value: string | undefined, fallbackDir: string): StoreLocation {
  if (value === undefined || value === "") {
    const dir = resolve(fallbackDir);
    return { kind: "folder", dir, label: dir };
  }
  const scheme = SCHEME.exec(value)?.[1]?.toLowerCase();
  if (scheme === "postgres" || scheme === "postgresql") {
    const target = parsePostgresUrl(value);
    return { kind: "postgres", url: value, dir: resolve(fallbackDir), label: target.display };
  }
  if (scheme !== undefined || /^postgres(ql)?:/i.test(value))
    throw new InputError(
      `${scheme ? `${scheme}:// is not a supported store` : `${JSON.stringify(value.split(":")[0])}: is not a URL (write postgres://HOST/DATABASE)`}; ` +
        "give a folder (a SQLite log is kept in it) or postgres://USER@HOST[:PORT]/DATABASE",
      "--store",
    );
  const dir = resolve(value);
  return { kind: "folder", dir, label: dir };
}

/** The PostgreSQL room (store/postgres/postgres-room.ts), loaded on first use. */
export type PostgresRoom = typeof import("./postgres/postgres-room.js");
/** The SQLite room (store/sqlite/sqlite-room.ts), loaded on first use. */
export type SqliteRoom = typeof import("./sqlite/sqlite-room.js");

let postgres: PostgresRoom | undefined;

/** Loads the PostgreSQL room: only a command on a `postgres://` store (or a worker) calls this. */
export async function postgresRoom(): Promise<PostgresRoom> {
  postgres ??= await import("./postgres/postgres-room.js");
  return postgres;
}

/** Loads the SQLite room: opening or checking a folder store calls this. */
export async function sqliteRoom(): Promise<SqliteRoom> {
  return import("./sqlite/sqlite-room.js");
}

/**
 * The store as a PostgreSQL store, or null. Without the room loaded no PostgreSQL store was opened through
 * this door, so the answer is null without loading pg; the CLI opens every store through the door.
 */
export function asPostgresStore(store: EventStore): PostgresEventStore | null {
  return postgres !== undefined && store instanceof postgres.PostgresEventStore ? store : null;
}

/**
 * Opens the PostgreSQL log of `where`: `true` creates loopgate's tables when absent (migrating an older
 * schema), `false` opens an existing log to write, `"read"` opens an existing one without writing.
 */
export async function openPostgresStore(
  where: Extract<StoreLocation, { kind: "postgres" }>,
  create: boolean | "read",
): Promise<PostgresEventStore> {
  const { PostgresEventStore } = await postgresRoom();
  return PostgresEventStore.open(where.url, { readonly: create === "read", create: create === true });
}

/**
 * Opens the event log of a store (a `postgres://` location: openPostgresStore). For a folder, its SQLite
 * log: `true` creates it when absent, `false` opens an existing one to write, `"read"` opens an existing one
 * read-only (works on a read-only folder). A missing log is reported with the run that was asked for
 * (`runId`), if any; a log missing, empty or corrupted beside recorded run folders is refused, never
 * overwritten (see store-folder.ts).
 */
export async function openStore(
  where: StoreLocation | string,
  create: boolean | "read",
  runId?: string,
): Promise<EventStore> {
  if (typeof where !== "string" && where.kind === "postgres") {
    const { PostgresStoreNotFoundError } = await postgresRoom();
    return openPostgresStore(where, create).catch((e: unknown) => {
      if (runId && e instanceof PostgresStoreNotFoundError) throw new RunNotFoundError(runId, where.label);
      throw e;
    });
  }
  const dir = typeof where === "string" ? where : where.dir;
  const folder = inspectStoreFolder(dir, create !== "read");
  if (create !== true && !folder.hasLog) {
    const hint =
      "pass --store DIR, or run from the folder the run was started in (a store is found walking up: the nearest .loopgate/, else $LOOPGATE_STORE, else ./.loopgate/)";
    if (runId) throw new RunNotFoundError(runId, `${dir} (no event log there; ${hint})`);
    throw new LoopgateError("store_not_found", `no event log in ${dir}; ${hint}`);
  }
  const { SqliteEventStore } = await sqliteRoom();
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
