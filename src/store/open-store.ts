import { resolve } from "node:path";
import { InputError } from "../core/errors.js";
import type { EventStore } from "./event-store.js";
import { parsePostgresUrl } from "./pg-url.js";
import { PostgresEventStore } from "./postgres-event-store.js";

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

/**
 * Opens the PostgreSQL log of `where`: `true` creates loopgate's tables when absent (migrating an older
 * schema), `false` opens an existing log to write, `"read"` opens an existing one without writing.
 */
export async function openPostgresStore(
  where: Extract<StoreLocation, { kind: "postgres" }>,
  create: boolean | "read",
): Promise<EventStore> {
  return PostgresEventStore.open(where.url, { readonly: create === "read", create: create === true });
}
