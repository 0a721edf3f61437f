// goalTaskFile, the one resolver of a goal's task files: on a folder store (SQLite) the recorded path is
// the only copy (changed → "changed", absent → "missing"); on PostgreSQL the recorded path is used when it
// is here at the recorded digest, else the snapshot the goal's append stored, written out under the
// host's folder. Expected digests are sha256 of the file bytes, computed here.
import { createHash } from "node:crypto";
import { appendFileSync, cpSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InputError } from "../../../src/core/kernel/errors.js";
import { GoalTaskError, goalTaskFile, snapshotGoalTasks } from "../../../src/runner/goal/goal-tasks.js";
import { PostgresEventStore } from "../../../src/store/postgres/postgres-event-store.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";
import { type FreshDatabase, freshDatabase } from "../../support/postgres.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const temps: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "loopgate-goal-tasks-"));
  temps.push(d);
  return d;
};

/** A copy of the csvcol goal's tasks and their workspace; the quoted-fields task file and its digest. */
function fixture(): { dir: string; task: string; digest: string } {
  const dir = temp();
  cpSync(join(ROOT, "examples", "goal-csvcol", "tasks"), join(dir, "goal", "tasks"), { recursive: true });
  cpSync(join(ROOT, "examples", "sh-csvcol"), join(dir, "sh-csvcol"), { recursive: true });
  const task = join(dir, "goal", "tasks", "quoted-fields", "task.yaml");
  return { dir, task, digest: createHash("sha256").update(readFileSync(task)).digest("hex") };
}

const added = (path: string, digest: string) => [
  {
    type: "todo_added",
    data: { todo: { id: "t", task: { path, task_id: "x", digest } }, successor_of: null },
  },
];

let db: FreshDatabase;
let pg: PostgresEventStore;
beforeAll(async () => {
  db = await freshDatabase();
  pg = await PostgresEventStore.open(db.url, { create: true });
}, 60_000);
afterAll(async () => {
  await pg?.close();
  await db?.drop();
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

describe("goalTaskFile on a folder store", () => {
  it("uses the recorded path; a changed file is 'changed', a missing one 'missing'; nothing else is looked at", async () => {
    const store = SqliteEventStore.open(join(temp(), "events.db"));
    try {
      const { dir, task, digest } = fixture();
      await snapshotGoalTasks(store, "g", added(task, digest)); // no content store: nothing happens
      const local = temp();
      expect((await goalTaskFile(store, local, "g", task, digest)).file).toBe(task);
      appendFileSync(task, "# changed\n");
      const changed = await goalTaskFile(store, local, "g", task, digest).catch((e) => e);
      expect(changed).toBeInstanceOf(GoalTaskError);
      expect((changed as GoalTaskError).why).toBe("changed");
      expect((changed as Error).message).toContain(`the task file ${task} changed since it was recorded`);
      renameSync(dir, `${dir}-gone`);
      const missing = await goalTaskFile(store, local, "g", task, digest).catch((e) => e);
      expect((missing as GoalTaskError).why).toBe("missing");
      expect((missing as Error).message).not.toMatch(/snapshot/);
    } finally {
      await store.close();
    }
  });
});

describe("goalTaskFile on PostgreSQL", () => {
  it("after the append's snapshot: the recorded path here, else the snapshot under the host's folder, also when the file changed here", async () => {
    const { dir, task, digest } = fixture();
    const heldout = readFileSync(
      join(dir, "goal/tasks/quoted-fields/heldout/heldout-quoted/check.sh"),
      "utf8",
    );
    await snapshotGoalTasks(pg, "g1", added(task, digest));
    const host = temp();
    expect((await goalTaskFile(pg, host, "g1", task, digest)).file).toBe(task);
    // Changed here: the recorded snapshot is used, not the changed file.
    appendFileSync(task, "# changed\n");
    const fromStore = await goalTaskFile(pg, host, "g1", task, digest);
    expect(fromStore.file.startsWith(join(host, "tasks"))).toBe(true);
    expect(fromStore.digest).toBe(digest);
    expect(readFileSync(join(fromStore.dir, "heldout/heldout-quoted/check.sh"), "utf8")).toBe(heldout);
    // Gone here: the same.
    renameSync(dir, `${dir}-gone`);
    const again = await goalTaskFile(pg, temp(), "g1", task, digest);
    expect(again.digest).toBe(digest);
    // Another goal never recorded it: no snapshot of it, so it is missing, naming the store's lack.
    const other = await goalTaskFile(pg, temp(), "g2", task, digest).catch((e) => e);
    expect((other as GoalTaskError).why).toBe("missing");
    expect((other as Error).message).toContain(`the store holds no snapshot of ${task}`);
  });

  it("an append naming a file absent here, or at another digest, stores no snapshot (health names it later)", async () => {
    const { task, digest } = fixture();
    await snapshotGoalTasks(pg, "g3", added(task, "0".repeat(64)));
    await snapshotGoalTasks(pg, "g3", added(join(temp(), "nope.yaml"), digest));
    renameSync(join(task, ".."), join(task, "..", "..", "moved"));
    const r = await goalTaskFile(pg, temp(), "g3", task, "0".repeat(64)).catch((e) => e);
    expect((r as GoalTaskError).why).toBe("missing");
  });

  it("a task over the snapshot limits is refused, naming its size and the limit; no record is stored", async () => {
    const { task, digest } = fixture();
    const r = await snapshotGoalTasks(pg, "g4", added(task, digest), {
      bytes: 100 * 1024 ** 2,
      paths: 3,
    }).catch((e) => e);
    expect(r).toBeInstanceOf(InputError);
    expect((r as Error).message).toMatch(/the task holds \d+ paths, over the 3 a submitted task may hold/);
    renameSync(join(task, ".."), join(task, "..", "..", "moved"));
    const after = await goalTaskFile(pg, temp(), "g4", task, digest).catch((e) => e);
    expect((after as GoalTaskError).why).toBe("missing");
  });
});
