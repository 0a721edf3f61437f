// `loopgate doctor --store postgres://…` on a real PostgreSQL: connection, schema version and the log's
// integrity, each a check of its own; nothing is created by looking.
import { cpSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_SCHEMA_VERSION } from "../../src/store/postgres/pg-schema.js";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { exampleDir, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  removeTemps();
  await db?.drop();
});

type Check = { id: string; state: string; detail: string; remedy: string | null };
type Report = { checks: Check[]; exit: number };

async function doctor(store: string): Promise<{ code: number | null; report: Report; stdout: string }> {
  const r = await loopgate(["doctor", "--json", "--store", store]);
  return { code: r.code, report: parseStdout<Report>(r), stdout: r.stdout };
}
const check = (r: Report, id: string) => r.checks.find((c) => c.id === id);

async function tables(): Promise<number> {
  const pg = await import("pg");
  const c = new pg.default.Client({ connectionString: db.url });
  await c.connect();
  try {
    return Number(
      (await c.query("SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'loopgate'")).rows[0].n,
    );
  } finally {
    await c.end();
  }
}

describe.sequential("doctor on a Postgres store", () => {
  it("a database without loopgate's tables answers; doctor says the first write creates them, and creates nothing", async () => {
    const { report } = await doctor(db.url);
    expect(check(report, "store")?.state).toBe("ok");
    expect(check(report, "store-schema")?.detail).toContain("no loopgate tables yet");
    expect(check(report, "store-integrity")?.state).toBe("skipped");
    expect(await tables()).toBe(0);
  });

  it("after a run: the schema is current and the log is sound", async () => {
    const dir = join(tempDir(), "js-slugify");
    cpSync(exampleDir("js-slugify"), dir, { recursive: true });
    const run = await loopgate(["run", join(dir, "task.yaml"), "--oracle", "--store", db.url]);
    expect(run.code, show(run)).toBe(0);
    const { report } = await doctor(db.url);
    expect(check(report, "store-schema")?.detail).toBe(`schema version ${PG_SCHEMA_VERSION} (current)`);
    expect(check(report, "store-integrity")?.state).toBe("ok");
  });

  it("an event removed behind loopgate's back is a required problem (exit 2) naming the stream", async () => {
    const pg = await import("pg");
    const c = new pg.default.Client({ connectionString: db.url });
    await c.connect();
    const stream = String(
      (await c.query("DELETE FROM loopgate.events WHERE position = 2 RETURNING stream")).rows[0]?.stream,
    );
    await c.end();
    const { code, report } = await doctor(db.url);
    expect(code).toBe(2);
    const integrity = check(report, "store-integrity");
    expect(integrity?.state).toBe("missing");
    expect(integrity?.detail).toContain(`stream ${stream}`);
    expect(integrity?.remedy).toContain("restore it from a backup");
  });

  it("a refused connection and a missing database are required problems naming the URL, password masked", async () => {
    const refused = await doctor("postgres://ci:hunter2@127.0.0.1:1/loopgate");
    expect(refused.code).toBe(2);
    expect(check(refused.report, "store")?.state).toBe("missing");
    expect(check(refused.report, "store")?.detail).toContain("postgres://ci:***@127.0.0.1:1/loopgate");
    expect(refused.stdout).not.toContain("hunter2");
    const u = new URL(db.url);
    u.pathname = "/loopgate_no_such_db";
    const absent = await doctor(u.toString());
    expect(absent.code).toBe(2);
    expect(check(absent.report, "store")?.detail).toContain("createdb");
  });
});
