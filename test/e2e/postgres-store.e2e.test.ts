// `--store postgres://…` and $LOOPGATE_STORE select the PostgreSQL log for run, runs, status and events;
// any other scheme, a bad URL, a refused connection or a missing database is a clear error.
import { cpSync, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseUrl, type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { type Envelope, exampleDir, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  removeTemps();
  await db?.drop();
});

/** A private copy of an example, so its local run folders land in a temp folder. */
function exampleCopy(): { dir: string; task: string } {
  const dir = join(tempDir(), "js-slugify");
  cpSync(exampleDir("js-slugify"), dir, { recursive: true });
  return { dir, task: join(dir, "task.yaml") };
}

describe("a run recorded in PostgreSQL", () => {
  let env: Envelope;
  let cwd = "";

  beforeAll(async () => {
    const { task } = exampleCopy();
    cwd = tempDir();
    const r = await loopgate(["run", task, "--oracle", "--json", "--store", db.url], { cwd });
    expect(r.code, show(r)).toBe(0);
    env = parseStdout<Envelope>(r);
  });

  it("finishes SUCCESS and leaves no folder named after the URL", () => {
    expect(env.status).toBe("SUCCESS");
    // Beside a PostgreSQL log the run folders live in this machine's ./.loopgate (the one store rule),
    // which holds no SQLite log.
    expect(readdirSync(cwd)).toEqual([".loopgate"]);
    expect(readdirSync(join(cwd, ".loopgate", "runs"))).toEqual([env.run_id]);
    expect(existsSync(join(cwd, ".loopgate", "events.db"))).toBe(false);
  });

  it("is listed by `runs`, rebuilt by `status` and read back by `events` from the same URL", async () => {
    const [runs, status, events] = await Promise.all([
      loopgate(["runs", "--store", db.url, "--json"]),
      loopgate(["status", env.run_id, "--store", db.url, "--json"]),
      loopgate(["events", env.run_id, "--store", db.url, "--json"]),
    ]);
    expect(runs.code, show(runs)).toBe(0);
    expect(parseStdout<{ run_id: string; status: string }[]>(runs)).toEqual([
      expect.objectContaining({ run_id: env.run_id, status: "SUCCESS" }),
    ]);
    expect(status.code, show(status)).toBe(0);
    expect(parseStdout<Envelope>(status)).toEqual(env);
    expect(events.code, show(events)).toBe(0);
    const lines = events.stdout
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { type: string; revision: number });
    expect(lines.length).toBe(env.audit.event_count);
    expect(lines[0]?.type).toBe("run_started");
    expect(lines.at(-1)?.type).toBe("run_finished");
    expect(lines.map((e) => e.revision)).toEqual([...lines.keys()]);
  });

  it("is found through $LOOPGATE_STORE when --store is not given", async () => {
    const r = await loopgate(["runs", "--json"], { cwd: tempDir(), env: { LOOPGATE_STORE: db.url } });
    expect(r.code, show(r)).toBe(0);
    expect(parseStdout<{ run_id: string }[]>(r).map((row) => row.run_id)).toEqual([env.run_id]);
  });

  it("says a run is not there, naming the URL", async () => {
    const r = await loopgate(["status", "20000101-000000-000000", "--store", db.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no run 20000101-000000-000000");
    expect(r.stderr).toContain(db.url.replace(/\/$/, ""));
  });
});

describe("store URLs that cannot be used", () => {
  it("refuses postgres://x (no database) without creating a folder named postgres:", async () => {
    const { dir, task } = exampleCopy();
    const cwd = tempDir();
    for (const args of [
      ["runs", "--store", "postgres://x"],
      ["run", task, "--oracle", "--store", "postgres://x"],
    ]) {
      const r = await loopgate(args, { cwd });
      expect(r.code, show(r)).toBe(2);
      expect(r.stderr).toContain("store postgres://x: names no database");
    }
    expect(readdirSync(cwd)).toEqual([]);
    expect(existsSync(join(dir, "postgres:"))).toBe(false);
    expect(existsSync(join(dir, ".loopgate"))).toBe(false);
  });

  it("refuses any other scheme:// as an unsupported store, also from $LOOPGATE_STORE", async () => {
    const cwd = tempDir();
    for (const [args, env] of [
      [["runs", "--store", "mysql://h/db"], {}],
      [["runs"], { LOOPGATE_STORE: "s3://bucket/x" }],
    ] as const) {
      const r = await loopgate(args, { cwd, env });
      expect(r.code, show(r)).toBe(2);
      expect(r.stderr).toMatch(/(mysql|s3):\/\/ is not a supported store/);
    }
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("names a missing database with the password masked and says how to create it", async () => {
    const u = new URL(databaseUrl(`${db.name}_absent`));
    u.password = "hunter2";
    const r = await loopgate(["runs", "--store", u.toString()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain(`database ${db.name}_absent does not exist`);
    expect(r.stderr).toContain("createdb");
    expect(r.stderr).toContain(":***@");
    expect(r.stderr).not.toContain("hunter2");
  });

  it("names a refused connection with the password masked and says to start PostgreSQL", async () => {
    const r = await loopgate(["runs", "--store", "postgres://me:s3cret@127.0.0.1:1/db"]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain("postgres://me:***@127.0.0.1:1/db");
    expect(r.stderr).toContain("start PostgreSQL");
    expect(r.stderr).not.toContain("s3cret");
  });
});

describe("a run recorded in PostgreSQL and killed", () => {
  it("is resumed from the Postgres log to SUCCESS, from another working folder", async () => {
    const { task, dir } = exampleCopy();
    const script = `scripted:${join(dir, "agent/honest.yaml")}`;
    const killed = await loopgate(["run", task, "--model", script, "--store", db.url, "--json"], {
      cwd: tempDir(),
      env: { LOOPGATE_FAULT_KILL_AFTER_EVENTS: "8" },
    });
    expect(killed.signal, show(killed)).toBe("SIGKILL");
    const runs = parseStdout<{ run_id: string; status: string }[]>(
      await loopgate(["runs", "--store", db.url, "--json"]),
    );
    const runId = runs.find((r) => r.status !== "SUCCESS")?.run_id ?? "";
    expect(runId).not.toBe("");
    const resumed = await loopgate(["resume", runId, "--store", db.url, "--json"], { cwd: tempDir() });
    expect(resumed.code, show(resumed)).toBe(0);
    expect(parseStdout<Envelope>(resumed)).toMatchObject({ run_id: runId, status: "SUCCESS" });
    const events = await loopgate(["events", runId, "--store", db.url, "--json"]);
    const types = events.stdout
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types.filter((t) => t === "run_resumed")).toHaveLength(1);
    expect(types.at(-1)).toBe("run_finished");
  });
});
