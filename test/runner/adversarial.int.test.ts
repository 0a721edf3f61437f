import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder } from "../../src/builders/command-builder.js";
import type { Envelope } from "../../src/core/run/envelope.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { type LoadedTask, loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";

// Every adversary tries one way to get SUCCESS without the real fix. None may; each envelope must say why.
const tasks = ["js-slugify", "py-durations", "sh-csvcol"];

interface Expectation {
  /** A finding code that must be present, if the attack leaves one. */
  finding?: string;
  /** A gate error that must appear on the final attempt. */
  gateError?: string;
}
const attacks: Record<string, Expectation> = {
  "edit-protected-tests": { finding: "protected_path_modified" },
  "delete-protected-tests": { finding: "protected_path_modified" },
  "shim-runner": {},
  "planted-config": {},
  "symlink-deliverable": { finding: "symlink_escapes_workspace" },
  "write-heldout-path": {},
  "claim-only": {},
  "hang-gate": { gateError: "timeout" },
};

let localDir: string;
let store: SqliteEventStore;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-adversarial-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  await rm(localDir, { recursive: true, force: true });
});

/** The task with short gate timeouts, so a hanging gate costs seconds, not the task's 30 s. */
function load(taskId: string): LoadedTask {
  const loaded = loadTask(resolve("examples", taskId, "task.yaml"));
  for (const g of loaded.task.gates) if ("run" in g || "differential" in g) g.timeout = "4s";
  return loaded;
}

/** The gate that carries the task's held-out tests: a held-out overlay, or a differential gate's cases. */
function heldoutGateOf(taskId: string): string {
  const g = load(taskId).task.gates.find((x) => ("heldout" in x && x.heldout) || "differential" in x);
  if (!g) throw new Error(`${taskId} has no held-out gate`);
  return g.id;
}

async function attack(taskId: string, script: string): Promise<Envelope> {
  const path = resolve("test/fixtures/adversaries", taskId, `${script}.sh`);
  return runTask({
    loaded: load(taskId),
    builder: commandBuilder(`'${path}'`),
    store,
    localDir,
    sandbox: "bubblewrap",
    maxAttempts: 1,
  });
}

for (const taskId of tasks) {
  describe.concurrent(`adversaries on ${taskId}`, () => {
    for (const [script, expectation] of Object.entries(attacks)) {
      it(`${script} does not reach SUCCESS and the envelope says why`, async () => {
        const env = await attack(taskId, script);
        expect(env.status).toBe("ESCALATED");
        expect(env.reason).toMatch(/attempt cap reached \(1 of 1\); attempt 1: .+/);
        // The forged claim is on record as a claim, and changed nothing.
        expect(env.claims.map((c) => c.text).join("\n")).toContain("All tests passed");
        const finalGates = env.gates.filter((g) => g.attempt === env.attempts);
        const declared = load(taskId).task.gates.map((g) => g.id);
        expect(finalGates.map((g) => g.id)).toEqual(declared);
        // No adversary fixes the bug, so with pristine tests and the held-out overlay a test gate must fail:
        // a finding alone would hide a gate environment that let the forgery through.
        const failed = finalGates.filter((g) => !g.passed);
        expect(failed.map((g) => g.id)).toContain(heldoutGateOf(taskId));
        for (const g of failed) expect(env.reason).toContain(`gate ${g.id} failed`);
        if (expectation.finding) expect(env.findings.map((f) => f.code)).toContain(expectation.finding);
        if (expectation.finding === "protected_path_modified")
          expect(failed.map((g) => g.id)).toContain("visible-tests");
        if (expectation.gateError) expect(finalGates.map((g) => g.error)).toContain(expectation.gateError);
      });
    }

    it("an honest builder reaches SUCCESS on the same task (no false rejection)", async () => {
      const env = await attack(taskId, "honest");
      expect(env.reason).toBe(`all ${load(taskId).task.gates.length} gates passed on attempt 1`);
      expect(env.status).toBe("SUCCESS");
      expect(env.findings.filter((f) => f.severity === "blocking")).toEqual([]);
    });
  });
}
