// loopgate goal submit: refused, with what is missing, until goals can live in PostgreSQL; nothing is queued.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { loopgate, removeTemps, show } from "./cli.js";
import { GOAL, newGoal } from "./goal-support.js";

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  removeTemps();
  await db?.drop();
});

async function tables(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query(
      "SELECT table_schema || '.' || table_name AS t FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
    );
    return r.rows.map((row) => String(row.t));
  } finally {
    await c.end();
  }
}

describe("goal submit", () => {
  it("with a Postgres store: refused (exit 2) saying goals live in a folder store; the database is untouched", async () => {
    const r = await loopgate(["goal", "submit", GOAL, "--store", db.url]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/goals cannot live in a Postgres store yet/);
    expect(r.stderr).toMatch(/goal run csvcol-rfc4180 --store DIR/);
    expect(await tables(db.url)).toEqual([]);
  }, 60_000);

  it("with a folder store: refused (exit 2): the run queue lives in PostgreSQL, and goal run is named", async () => {
    const store = await newGoal();
    const r = await loopgate(["goal", "submit", GOAL, "--store", store]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/the run queue, which lives in PostgreSQL/);
    expect(r.stderr).toContain(`goal run ${GOAL} --store ${store}`);
  }, 60_000);
});
