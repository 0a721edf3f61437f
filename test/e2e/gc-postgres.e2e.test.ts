// `loopgate gc --store postgres://…` on a real PostgreSQL: finished runs past the age go from the database
// (events, finished jobs), then the observations and blobs nothing left names; a run without a verdict,
// a queued job's task snapshot and content inside the grace period stay; the log stays sound.
import { createHash } from "node:crypto";
import { chmodSync, cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { integrityProblems, PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { exampleDir, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

let db: FreshDatabase;
let store: PostgresEventStore;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  removeTemps();
  await store?.close();
  await db?.drop();
});

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

async function q(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  store ??= await PostgresEventStore.open(db.url);
  return store.withClient(async (c) => (await c.query(sql, params)).rows);
}
const hasBlob = async (h: string) =>
  (await q("SELECT 1 FROM loopgate.blobs WHERE hash = $1", [h])).length === 1;
const backdate = () =>
  q(
    "UPDATE loopgate.blobs SET stored_at = now() - interval '1 hour'; UPDATE loopgate.observations SET stored_at = now() - interval '1 hour'",
  );

type GcJson = {
  dry_run: boolean;
  database: {
    streams: { stream: string; events: number }[];
    jobs: number;
    blobs: number;
    observations: number;
  };
};

describe.sequential("gc on a Postgres store", () => {
  it("removes old finished runs and what only they named; keeps unfinished runs, queued snapshots and fresh content", async () => {
    const dir = join(tempDir(), "js-slugify");
    cpSync(exampleDir("js-slugify"), dir, { recursive: true });
    const task = join(dir, "task.yaml");
    const note = "gc-unique-content-42\n";
    const builder = join(tempDir(), "note.sh");
    writeFileSync(builder, `#!/bin/sh\nprintf '${note.trim()}\\n' > src/note.txt\n`);
    chmodSync(builder, 0o755);

    // A finished run whose workspace holds a file no other run has.
    const done = await loopgate(["run", task, "--builder", builder, "--store", db.url, "--json"], {
      cwd: dir,
    });
    expect(done.code, show(done)).toBe(1);
    const doneId = parseStdout<{ run_id: string }>(done).run_id;
    expect(await hasBlob(sha(note))).toBe(true);
    // A run killed before its verdict: resumable, so gc must keep it and everything it names.
    const killed = await loopgate(["run", task, "--oracle", "--store", db.url], {
      cwd: dir,
      env: { LOOPGATE_FAULT_KILL_AFTER_EVENTS: "6" },
    });
    expect(killed.signal, show(killed)).toBe("SIGKILL");
    const killedId = String(
      (
        await q("SELECT stream FROM loopgate.streams WHERE stream <> $1 AND stream LIKE 'run-%'", [
          `run-${doneId}`,
        ])
      )[0]?.stream,
    ).slice(4);
    // A queued job: its task snapshot must survive.
    const sub = await loopgate(["submit", task, "--oracle", "--store", db.url, "--json"]);
    const manifest = parseStdout<{ task_snapshot: { manifest: string } }>(sub).task_snapshot.manifest;

    const dry = await loopgate(["gc", "--store", db.url, "--older-than", "0s", "--dry-run", "--json"], {
      cwd: dir,
    });
    expect(dry.code, show(dry)).toBe(0);
    const planned = parseStdout<GcJson>(dry);
    expect(planned.dry_run).toBe(true);
    expect(planned.database.streams.map((s) => s.stream)).toEqual([`run-${doneId}`]);
    expect(
      (await q("SELECT 1 FROM loopgate.events WHERE stream = $1", [`run-${doneId}`])).length,
    ).toBeGreaterThan(0);

    // Within the grace period the run goes, its content stays.
    const first = await loopgate(["gc", "--store", db.url, "--older-than", "0s", "--json"], { cwd: dir });
    expect(first.code, show(first)).toBe(0);
    const events = planned.database.streams[0]?.events ?? 0;
    expect(parseStdout<GcJson>(first).database.streams).toEqual([{ stream: `run-${doneId}`, events }]);
    expect((await q("SELECT 1 FROM loopgate.events WHERE stream = $1", [`run-${doneId}`])).length).toBe(0);
    const gone = await loopgate(["status", doneId, "--store", db.url]);
    expect(gone.code).toBe(2);
    expect(await hasBlob(sha(note))).toBe(true);
    expect(await integrityProblems(store)).toEqual([]);

    // Past the grace period: what only the removed run named goes; the rest stays.
    await backdate();
    const second = await loopgate(["gc", "--store", db.url, "--older-than", "0s"], { cwd: dir });
    expect(second.code, show(second)).toBe(0);
    expect(second.stdout).toMatch(
      /removed from postgres:\/\/[^ ]+: 0 run\(s\), 0 finished job\(s\), \d+ observation\(s\), [1-9]\d* blob\(s\)/,
    );
    expect(await hasBlob(sha(note))).toBe(false);
    expect(await hasBlob(manifest)).toBe(true);
    const original = await import("node:fs").then((fs) =>
      fs.readFileSync(join(dir, "repo", "src", "slugify.js"), "utf8"),
    );
    expect(await hasBlob(sha(original))).toBe(true);
    expect(await integrityProblems(store)).toEqual([]);

    // The killed run still resumes, from a folder of its own rebuilt from the store, to its verdict.
    const resumed = await loopgate(["resume", killedId, "--store", db.url, "--json"], { cwd: tempDir() });
    expect(resumed.code, show(resumed)).toBe(0);
    expect(parseStdout<{ status: string }>(resumed).status).toBe("SUCCESS");
  });
});
