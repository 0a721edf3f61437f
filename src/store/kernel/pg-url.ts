import { InputError } from "../../core/kernel/errors.js";
import { StoreError } from "./store-errors.js";

/** A parsed `postgres://` store location. `display` is the URL with its password masked. */
export interface PostgresUrl {
  url: string;
  display: string;
  database: string;
  host: string;
  port: number;
}

/** The URL schemes that name a PostgreSQL store. */
export const POSTGRES_SCHEMES = ["postgres:", "postgresql:"] as const;

/** `user:secret@` becomes `user:***@`, so a URL can be shown in errors and logs. */
export function maskUrl(raw: string): string {
  try {
    const u = new URL(raw);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    // Not parseable: mask whatever sits between the first ':' after '//' and the last '@'.
    return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@]*@/i, "$1***@");
  }
}

/** Parses a `postgres://user:pass@host:port/database` URL; throws InputError naming the masked URL. */
export function parsePostgresUrl(raw: string): PostgresUrl {
  const display = maskUrl(raw);
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new InputError(
      "is not a valid URL; write it as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE",
      `store ${display}`,
    );
  }
  if (!(POSTGRES_SCHEMES as readonly string[]).includes(u.protocol))
    throw new InputError(`is not a postgres:// URL`, `store ${display}`);
  const database = decodeURIComponent(u.pathname.replace(/^\//, ""));
  if (!u.hostname)
    throw new InputError(
      "names no host; write it as postgres://USER@HOST[:PORT]/DATABASE (for example postgres://postgres@127.0.0.1:5432/loopgate)",
      `store ${display}`,
    );
  if (!database || database.includes("/"))
    throw new InputError(
      "names no database (or more than one path segment); write it as postgres://USER@HOST[:PORT]/DATABASE",
      `store ${display}`,
    );
  const port = u.port ? Number(u.port) : 5432;
  return { url: raw, display, database, host: u.hostname, port };
}

/**
 * The connection string the pool is given for `url`. pg 8 reads `sslmode=prefer`, `require` and
 * `verify-ca` as `verify-full` (TLS, certificate and host name verified) and says so in a multi-line
 * warning on stderr; the same mode is asked for by its own name here, so the meaning is unchanged and a
 * failure stays one line. With `uselibpqcompat=true` pg follows libpq instead and nothing is rewritten.
 */
export function pgConnectionString(url: string): string {
  if (/[?&]uselibpqcompat=/i.test(url)) return url;
  return url.replace(/([?&]sslmode=)(prefer|require|verify-ca)(?=&|#|$)/g, "$1verify-full");
}

/** A TLS failure while connecting (no TLS on the server, a certificate refused), or undefined. */
function tlsError(
  target: PostgresUrl,
  code: string,
  message: string,
  error: unknown,
): StoreError | undefined {
  if (/does not support SSL/i.test(message))
    return new StoreError(
      target.display,
      `the server at ${target.host}:${target.port} does not accept TLS, which the URL asks for (sslmode)`,
      "nothing was written; enable ssl on the server, or drop sslmode from the URL (sslmode=disable) to connect without TLS",
      { cause: error },
    );
  if (/CERT|TLS|SSL/.test(code) || /certificate|altnames/i.test(message))
    return new StoreError(
      target.display,
      `the TLS connection to ${target.host}:${target.port} was refused (${code ? `${code}: ` : ""}${message})`,
      "nothing was written; give the server's CA with sslrootcert=FILE in the URL, or correct the host name so it matches the certificate",
      { cause: error },
    );
  return undefined;
}

/**
 * Any failure to open a connection to `target` as one StoreError naming it: the known causes with their
 * remedy (see storeErrorFromPg), anything else with pg's own message.
 */
export function connectErrorFromPg(target: PostgresUrl, error: unknown): StoreError {
  return (
    storeErrorFromPg(target, error) ??
    new StoreError(
      target.display,
      `cannot connect (${error instanceof Error ? error.message : String(error)})`,
      "nothing was written; check the URL in --store / LOOPGATE_STORE and that the server accepts connections from this machine",
      { cause: error },
    )
  );
}

/**
 * A connection or authentication failure as one StoreError: the masked URL, what went wrong, what to do.
 * Returns undefined for errors that are not about reaching the database.
 */
export function storeErrorFromPg(target: PostgresUrl, error: unknown): StoreError | undefined {
  const code = error instanceof Error && "code" in error ? String(error.code) : "";
  const message = error instanceof Error ? error.message : String(error);
  const where = target.display;
  const hostPort = `${target.host}:${target.port}`;
  const tls = tlsError(target, code, message, error);
  if (tls) return tls;
  if (code === "ECONNREFUSED" || code === "ECONNRESET" || code === "57P03")
    return new StoreError(
      where,
      `PostgreSQL refused the connection at ${hostPort} (${code || message})`,
      "nothing was written; start PostgreSQL (check with pg_isready -h HOST -p PORT) or correct the host and port in --store / LOOPGATE_STORE",
      { cause: error },
    );
  if (code === "ENOTFOUND" || code === "EAI_AGAIN")
    return new StoreError(
      where,
      `the host ${target.host} cannot be resolved (${code})`,
      "nothing was written; correct the host in --store / LOOPGATE_STORE",
      { cause: error },
    );
  if (code === "ETIMEDOUT" || /timeout/i.test(message))
    return new StoreError(
      where,
      `no answer from PostgreSQL at ${hostPort} (${code || message})`,
      "nothing was written; check that the server is up and reachable from this machine",
      { cause: error },
    );
  if (code === "3D000")
    return new StoreError(
      where,
      `the database ${target.database} does not exist`,
      `nothing was written; create it (createdb -h ${target.host} -p ${target.port} ${target.database}, or CREATE DATABASE "${target.database}") and run the command again`,
      { cause: error },
    );
  if (code === "28P01" || code === "28000")
    return new StoreError(
      where,
      `PostgreSQL refused the credentials (${code}: ${message})`,
      "nothing was written; correct the user or password in the URL, or the server's pg_hba.conf",
      { cause: error },
    );
  if (code === "57P01" || code === "08006" || code === "08003" || /Connection terminated/i.test(message))
    return new StoreError(
      where,
      `the connection to PostgreSQL was lost (${code || message})`,
      "an append in flight was either committed whole or not at all; run the command again (appends are idempotent by event id)",
      { cause: error },
    );
  return undefined;
}
