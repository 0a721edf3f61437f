import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * The server the Postgres tests use: $LOOPGATE_TEST_PG (a URL of its maintenance database), else the
 * local server with trust auth. Tests create their own databases through it and drop them afterwards.
 */
export const ADMIN_URL = process.env.LOOPGATE_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** A database of its own for one test file: `url` to use, `drop()` to remove it (with any open sessions). */
export interface FreshDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** The URL of database `name` on the admin server. */
export function databaseUrl(name: string): string {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates `loopgate_test_<random>`; call in beforeAll and `drop` in afterAll. */
export async function freshDatabase(): Promise<FreshDatabase> {
  const name = `loopgate_test_${randomBytes(6).toString("hex")}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  return {
    name,
    url: databaseUrl(name),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}

/** A fresh schema name for one test inside a test file's database. */
export function freshSchema(): string {
  return `t_${randomBytes(6).toString("hex")}`;
}
