// A builder past the task's limits fails its attempt with a blocking `limit_exceeded` finding naming
// the limit: the run ends ESCALATED (the builder's failure), never TOOL_FAILURE (real bubblewrap, SQLite).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder } from "../../src/builders/command-builder.js";
import { InputError } from "../../src/core/kernel/errors.js";
import { parseTask } from "../../src/core/task/task.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { RunJournal } from "../../src/runner/stream/run-journal.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { makeTask } from "./task-fixture.js";

const taskYaml = (limits: string, attempts = 1) => `id: limits
prompt: Make answer.txt say 42.
workspace: ./repo
gates:
  - id: answer
    run: ["sh", "-c", "grep -qx 42 answer.txt"]
    timeout: 30s
budget: { attempts: ${attempts} }
limits: ${limits}
`;

let localDir: string;
let store: SqliteEventStore;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-limits-run-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  await rm(localDir, { recursive: true, force: true });
});

async function runWith(limits: string, script: string, attempts = 1) {
  const t = await makeTask({
    taskYaml: taskYaml(limits, attempts),
    repo: { "answer.txt": "41\n" },
    scripts: { "build.sh": script },
  });
  const env = await runTask({
    loaded: loadTask(t.file),
    builder: commandBuilder(`sh ${t.script("build.sh")}`),
    store,
    localDir,
    sandbox: "bubblewrap",
  });
  const events = await store.readStream(RunJournal.stream(env.run_id));
  await rm(t.dir, { recursive: true, force: true });
  return { env, events };
}

describe("limits in a run", () => {
  it("a builder that leaves more paths than limits.files gets limit_exceeded and ESCALATED", async () => {
    // The fix is right, but 300 files come with it: the attempt fails on the limit, not on the gate.
    const { env, events } = await runWith(
      "{ files: 100 }",
      "echo 42 > answer.txt\nmkdir junk\ni=0; while [ $i -lt 300 ]; do : > junk/f$i; i=$((i+1)); done\n",
    );
    expect(env.status, env.reason).toBe("ESCALATED");
    const finding = env.findings.find((f) => f.code === "limit_exceeded");
    expect(finding?.severity).toBe("blocking");
    expect(finding?.detail).toContain("limits.files is 100");
    expect(env.reason).toContain("limit_exceeded");
    // Observation stopped early: no observation was recorded for the gates, and no gate ran.
    expect(events.some((e) => e.type === "workspace_observed" && e.data.phase === "after_builder")).toBe(
      false,
    );
    expect(env.gates).toHaveLength(0);
  });

  it("the same builder within the limits succeeds (the limit, not the work, failed it)", async () => {
    const { env } = await runWith(
      "{ files: 400 }",
      "echo 42 > answer.txt\nmkdir junk\ni=0; while [ $i -lt 300 ]; do : > junk/f$i; i=$((i+1)); done\n",
    );
    expect(env.status, env.reason).toBe("SUCCESS");
  });

  it("a next attempt is told which limit, and can succeed by cleaning up", async () => {
    const { env } = await runWith(
      "{ total_bytes: 64K }",
      "if [ -e big.bin ]; then rm big.bin; echo 42 > answer.txt; else head -c 200000 /dev/zero > big.bin; fi\n",
      2,
    );
    expect(env.status, env.reason).toBe("SUCCESS");
    expect(env.attempts).toBe(2);
    const limitFindings = env.findings.filter((f) => f.code === "limit_exceeded");
    expect(limitFindings.map((f) => f.attempt)).toEqual([1]);
    expect(limitFindings[0]?.detail).toContain("limits.total_bytes is 65536");
  });

  it("a builder stopped by limits.file_size (SIGXFSZ) gets limit_exceeded", async () => {
    const { env } = await runWith(
      "{ file_size: 1M }",
      "echo 42 > answer.txt\nexec head -c 5000000 /dev/zero > big.bin\n",
    );
    expect(env.status, env.reason).toBe("ESCALATED");
    const finding = env.findings.find((f) => f.code === "limit_exceeded");
    expect(finding?.detail).toContain("limits.file_size");
  });

  it("a malformed limit is a task-file error naming the field", () => {
    expect(() => parseTask(taskYaml("{ total_bytes: lots }"), "task.yaml")).toThrow(InputError);
    expect(() => parseTask(taskYaml("{ total_bytes: lots }"), "task.yaml")).toThrow(
      /limits\.total_bytes: expected a size/,
    );
    expect(() => parseTask(taskYaml("{ filez: 3 }"), "task.yaml")).toThrow(/limits/);
  });
});
