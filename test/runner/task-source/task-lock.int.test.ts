import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { InputError } from "../../../src/core/kernel/errors.js";
import type { Envelope } from "../../../src/core/run/envelope.js";
import { loadTask } from "../../../src/runner/task-source/load-task.js";
import {
  lockPathFor,
  pinIdentity,
  readTaskLock,
  writeTaskLock,
} from "../../../src/runner/task-source/task-lock-file.js";

const TASK = `id: lock-task
prompt: fix it
workspace: ./repo
gates:
  - id: visible
    run: ["python3", "-m", "unittest", "discover", "-s", "tests"]
  - id: heldout
    run: ["python3", "-m", "unittest", "discover", "-s", "hidden"]
    heldout: ./heldout
  - id: api
    static: { path: m.py, match: "def f" }
`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "lg-lock-"));
  mkdirSync(join(dir, "repo"));
  writeFileSync(join(dir, "repo", "m.py"), "def f(): return 1\n");
  mkdirSync(join(dir, "heldout", "hidden"), { recursive: true });
  writeFileSync(join(dir, "heldout", "hidden", "test_f.py"), "# held out\n");
  writeFileSync(join(dir, "task.yaml"), TASK);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** An oracle envelope as a recording run leaves it: the observations are what the lock must hold. */
function oracle(): Envelope {
  const tamper = (passed: string[], twins: { test: string; site: string; replacement: string }[]) => ({
    check: "auto" as const,
    runner: "unittest",
    channel: "summary" as const,
    canary: { auto: false, declared: false },
    tests: { passed: passed.length, failed: 0, skipped: 0 },
    floor: { min: 1, source: "default" as const },
    note: null,
    observed: { passed, twins_failed: twins, untwinned: ["hidden/test_f.py::T::test_loop: no literal"] },
  });
  const gate = (id: string, t: ReturnType<typeof tamper>) => ({
    id,
    attempt: 1,
    passed: true,
    exit_code: 1,
    timed_out: false,
    error: null,
    duration_ms: 5,
    log_excerpt: "",
    tamper: t,
  });
  return {
    run_id: "r-oracle",
    task_id: "lock-task",
    status: "SUCCESS",
    reason: "all gates passed",
    attempts: 1,
    gates: [
      gate("visible", tamper(["tests/test_a.py::A::test_b", "tests/test_a.py::A::test_a"], [])),
      gate(
        "heldout",
        tamper(
          ["hidden/test_f.py::T::test_one"],
          [
            { test: "hidden/test_f.py::T::test_one", site: "0.0", replacement: "2" },
            { test: "hidden/test_f.py::T::test_one", site: "0.0", replacement: "3" },
          ],
        ),
      ),
    ],
    findings: [],
    claims: [],
    audit: {},
  } as unknown as Envelope;
}

describe("the task lock", () => {
  test("is named after the task file, beside it", () => {
    expect(lockPathFor("/a/b/task.yaml")).toBe("/a/b/task.lock.json");
    expect(lockPathFor("/a/b/other.yml")).toBe("/a/b/other.lock.json");
    expect(lockPathFor("/a/b/t.json")).toBe("/a/b/t.lock.json");
  });

  test("written from the oracle's recording, it reads back with every identity sorted and the twins per test", () => {
    const loaded = loadTask(join(dir, "task.yaml"));
    expect(readTaskLock(loaded).status).toBe("missing");
    const { path } = writeTaskLock(loaded, oracle(), new Date("2026-12-03T00:00:00Z"));
    expect(path).toBe(join(dir, "task.lock.json"));
    const r = readTaskLock(loaded);
    if (r.status !== "ok") throw new Error(r.why);
    expect(r.lock.gates.visible?.tests).toEqual(["tests/test_a.py::A::test_a", "tests/test_a.py::A::test_b"]);
    expect(r.lock.gates.heldout?.twins).toEqual({
      "hidden/test_f.py::T::test_one": [
        { site: "0.0", replacement: "2" },
        { site: "0.0", replacement: "3" },
      ],
    });
    expect(r.lock.gates.api).toBeUndefined();
    const pinned = pinIdentity(loaded, "lock", { strict: true });
    expect(pinned?.mode).toBe("lock");
  });

  test("is stale when the task file or a held-out file changes, and says which", () => {
    writeTaskLock(loadTask(join(dir, "task.yaml")), oracle(), new Date());
    writeFileSync(join(dir, "heldout", "hidden", "test_f.py"), "# held out, changed\n");
    const held = readTaskLock(loadTask(join(dir, "task.yaml")));
    expect(held).toMatchObject({ status: "stale" });
    expect(held.status !== "ok" && held.why).toContain("held-out");
    writeTaskLock(loadTask(join(dir, "task.yaml")), oracle(), new Date());
    writeFileSync(join(dir, "task.yaml"), `${TASK}# a comment\n`);
    const task = readTaskLock(loadTask(join(dir, "task.yaml")));
    expect(task.status !== "ok" && task.why).toContain("another version of task.yaml");
  });

  test("stays valid when the task and the held-out folders it names (inside or beside it) move elsewhere together", () => {
    // A held-out folder beside the task folder, as the benchmark's task variants share an example's.
    const root = mkdtempSync(join(tmpdir(), "lg-lock-move-"));
    try {
      const a = join(root, "a");
      mkdirSync(join(a, "common-heldout", "hidden"), { recursive: true });
      writeFileSync(join(a, "common-heldout", "hidden", "test_g.py"), "# held out beside the task\n");
      cpSync(dir, join(a, "task"), { recursive: true });
      writeFileSync(
        join(a, "task", "task.yaml"),
        TASK.replace("heldout: ./heldout", "heldout: ../common-heldout"),
      );
      writeTaskLock(loadTask(join(a, "task", "task.yaml")), oracle(), new Date());
      cpSync(a, join(root, "b", "deeper"), { recursive: true });
      expect(readTaskLock(loadTask(join(root, "b", "deeper", "task", "task.yaml"))).status).toBe("ok");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("a lock that is not JSON, or not a lock, is named invalid with the field", () => {
    const loaded = loadTask(join(dir, "task.yaml"));
    writeFileSync(lockPathFor(loaded.file), "{ not json");
    expect(readTaskLock(loaded)).toMatchObject({ status: "invalid" });
    writeFileSync(lockPathFor(loaded.file), JSON.stringify({ loopgate_lock: 1, task_id: "x" }));
    const r = readTaskLock(loaded);
    expect(r.status).toBe("invalid");
    expect(r.status !== "ok" && r.why).toMatch(/task_digest/);
  });

  test("without a valid lock a run says so once; with --strict it is an error naming the lock", () => {
    const loaded = loadTask(join(dir, "task.yaml"));
    const notes: string[] = [];
    expect(
      pinIdentity(loaded, "lock", { strict: false, reporter: { note: (t) => notes.push(t) } }),
    ).toBeNull();
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain("loopgate task check");
    expect(() => pinIdentity(loaded, "lock", { strict: true })).toThrow(InputError);
  });

  test("the written lock is pretty JSON a reviewer can diff", () => {
    const loaded = loadTask(join(dir, "task.yaml"));
    writeTaskLock(loaded, oracle(), new Date());
    const text = readFileSync(lockPathFor(loaded.file), "utf8");
    expect(text.split("\n").length).toBeGreaterThan(10);
    expect(text.endsWith("\n")).toBe(true);
  });
});

describe("the committed locks", () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), "../../..");
  const tasks = [
    ...readdirSync(join(root, "examples")).map((d) => join(root, "examples", d, "task.yaml")),
    ...readdirSync(join(root, "bench/forgery/tasks")).map((d) =>
      join(root, "bench/forgery/tasks", d, "task.yaml"),
    ),
  ].filter((t) => existsSync(lockPathFor(t)));

  test("every example and benchmark task with a lock has one that matches its task file and held-out files", () => {
    expect(tasks.length).toBeGreaterThanOrEqual(8);
    for (const t of tasks) {
      const r = readTaskLock(loadTask(t));
      expect(r.status === "ok" ? "ok" : r.why, t).toBe("ok");
    }
  });
});
