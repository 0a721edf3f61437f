import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder } from "../../src/builders/command-builder.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { RunJournal } from "../../src/runner/stream/run-journal.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";

// A feedback leak: code under test ends the held-out gate with a held-out file's first byte as its
// exit code; the gate's feedback is `summary`, so that number must never reach {required_fix}.
const BUILDER = resolve("bench/forgery/builders/exit-code-leak.sh");
const HELD_OUT_FIRST_BYTE = String(
  "import unittest".charCodeAt(0), // examples/py-durations/heldout/heldout_tests/test_durations_heldout.py
);

let localDir: string;
let store: SqliteEventStore;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-leak-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  await rm(localDir, { recursive: true, force: true });
});

describe("summary feedback does not carry the exit code code under test chose", () => {
  it("keeps the byte in the envelope and out of the required fix", async () => {
    const env = await runTask({
      loaded: loadTask(resolve("examples/py-durations/task.yaml")),
      builder: commandBuilder(`'${BUILDER}' {required_fix}`),
      store,
      localDir,
      sandbox: "bubblewrap",
      maxAttempts: 2,
    });
    // The exfiltration happened: the envelope (for the user) keeps the figure.
    const first = env.gates.find((g) => g.attempt === 1 && g.id === "heldout-tests");
    expect(first?.exit_code).toBe(Number(HELD_OUT_FIRST_BYTE));
    const events = await store.readStream(RunJournal.stream(env.run_id));
    const fixes = events.flatMap((e) => (e.type === "required_fix_issued" ? [e.data.text] : []));
    expect(fixes).toHaveLength(1);
    // The code exits before unittest prints its summary (no readable results); summary says one bit.
    expect(fixes[0]).toContain("- check heldout-tests: not passed\n");
    // The held-out gate's line carries no figure at all (other lines quote the visible gate's log, whose
    // paths hold the run id, a timestamp that may contain any digits).
    const heldoutLine =
      (fixes[0] ?? "").split("\n").find((l) => l.startsWith("- check heldout-tests:")) ?? "";
    expect(heldoutLine).not.toMatch(/\d/);
    expect(heldoutLine).not.toContain(HELD_OUT_FIRST_BYTE);
    // And the builder, told nothing it could decode, did the work on attempt 2.
    expect(env.status).toBe("SUCCESS");
  });
});
