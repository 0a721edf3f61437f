import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { agentBuilder } from "../../../src/agent/agent-builder.js";
import type { ScriptedResponseInput } from "../../../src/agent/models/script-file.js";
import type { EventData, EventType, LoopgateEvent } from "../../../src/core/events/loopgate-event.js";
import type { Envelope } from "../../../src/core/run/envelope.js";
import { runTask } from "../../../src/runner/run/run-task.js";
import { RunJournal } from "../../../src/runner/stream/run-journal.js";
import { loadTask } from "../../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";
import { makeTask } from "../../runner/task-fixture.js";

// Scripted models against heavy mode (`self_check: required`): the self-check is checked against
// loopgate's records, guarded before it is recorded, and earns at most one repair turn.

const HELDOUT_MARKER = `HELDOUT-${randomBytes(8).toString("hex")}`;
const SECRET_NAME = "LOOPGATE_SELF_CHECK_TEST_TOKEN";
const SECRET = `s3cr3t-${randomBytes(12).toString("hex")}`;

const taskYaml = (selfCheck = "required", extra = "") => `id: self-check-answer
prompt: Make lib/answer.js export 42.
workspace: ./repo
deliverables: ["lib/**"]
protected: ["test/**"]
self_check: ${selfCheck}
gates:
  - id: hidden
    run: ["node", "hidden/check.mjs"]
    heldout: ./heldout
    timeout: 20s
    feedback: none
budget: { attempts: 1, turns: ${extra ? 2 : 6} }
${extra}`;
const repo = {
  "lib/answer.js": "export const answer = 41;\n",
  "test/answer.test.js":
    'import { test } from "node:test";\nimport assert from "node:assert";\nimport { answer } from "../lib/answer.js";\n' +
    'test("answer is a number", () => assert.equal(typeof answer, "number"));\n',
  "package.json": '{ "type": "module" }\n',
};
const heldout = {
  "hidden/check.mjs": `// ${HELDOUT_MARKER}\nimport { answer } from "../lib/answer.js";\nif (answer !== 42) process.exit(1);\n`,
};

let localDir: string;
let store: SqliteEventStore;
const dirs: string[] = [];
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-self-check-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
  process.env[SECRET_NAME] = SECRET;
});
afterAll(async () => {
  delete process.env[SECRET_NAME];
  await store.close();
  for (const d of [localDir, ...dirs]) await rm(d, { recursive: true, force: true });
});

interface Ran {
  env: Envelope;
  of<T extends EventType>(type: T): EventData<T>[];
}
let n = 0;
async function run(
  script: readonly ScriptedResponseInput[],
  selfCheck = "required",
  extra = "",
): Promise<Ran> {
  const t = await makeTask({ taskYaml: taskYaml(selfCheck, extra), repo, heldout });
  dirs.push(t.dir);
  const file = join(t.dir, `script-${++n}.yaml`);
  await writeFile(file, stringify(script));
  const env = await runTask({
    loaded: loadTask(t.file),
    builder: agentBuilder(`scripted:${file}`),
    store,
    localDir,
    sandbox: "bubblewrap",
    maxAttempts: 1,
  });
  const events: LoopgateEvent[] = await store.readStream(RunJournal.stream(env.run_id));
  return { env, of: (type) => events.filter((e) => e.type === type).map((e) => e.data as never) };
}

const call = (id: string, name: string, args: unknown): ScriptedResponseInput => ({
  text: "",
  tool_calls: [{ id, name, args }],
});
const say = (text: string): ScriptedResponseInput => ({ text });
const write42 = call("w1", "write_file", { path: "lib/answer.js", content: "export const answer = 42;\n" });
const test = call("t1", "bash", { command: "node --test test/" });
const plan = (finals = ["lib/answer.js"]) =>
  call("p1", "self_check_plan_submit", {
    finalArtifacts: finals.map((path) => ({
      path,
      purpose: "the answer",
      publicReason: "the task asks for it",
    })),
    selfCheckScratch: { paths: ["/tmp/loopgate-self-check"], cleanup: true },
    workspaceGuardPlan: { commands: [], expectedAdditions: [] },
  });
const hygiene = {
  sandboxRoot: "/tmp/loopgate-self-check",
  strategy: "scratch_dir",
  outputPolicy: "scratch_only",
  scratchUsed: false,
  cleanupRan: true,
  workspaceSideEffects: "none",
};
const check = (id: string, over: Record<string, unknown> = {}) =>
  call(id, "self_check_submit", {
    status: "pass",
    publicReason: "the visible tests pass and the answer is 42",
    commandEvidence: [{ toolCallId: "t1", command: "node --test test/", exitCode: 0 }],
    artifactEvidence: [{ path: "lib/answer.js", kind: "final", exists: true }],
    executionHygiene: hygiene,
    ...over,
  });
const blockerCodes = (r: Ran) =>
  r.of("repair_decided").map((d) => [d.decision, [...new Set(d.blockers.map((b) => b.code))]]);

describe.concurrent("heavy mode: self-check and the repair turn, with scripted models", () => {
  it("a complete, matching self-check: allow, no repair turn; SUCCESS comes from the gates", async () => {
    const r = await run([write42, test, plan(), check("s1"), say("Done.")]);
    expect(r.of("self_check_plan_recorded")).toHaveLength(1);
    expect(r.of("self_check_recorded")[0]).toMatchObject({
      evidence_findings: [],
      verified_artifacts: ["lib/answer.js"],
    });
    expect(blockerCodes(r)).toEqual([["allow", []]]);
    expect(r.of("continuation_queued")).toEqual([]);
    expect(r.env.status).toBe("SUCCESS");
    expect(r.env.self_check).toEqual({
      advisory: true,
      semantic_status: "complete",
      decision: "allow",
      blockers: [],
      repairs_used: 0,
      cap: 1,
    });
  });

  it("a pass with no plan: missing_self_check_plan, one repair turn, then cap_reached", async () => {
    const r = await run([write42, test, check("s1"), say("Done."), say("Still done."), say("never read")]);
    expect(blockerCodes(r)).toEqual([
      ["repair", ["missing_self_check_plan"]],
      ["cap_reached", ["missing_self_check_plan"]],
    ]);
    const repairs = r.of("continuation_queued");
    expect(repairs).toHaveLength(1);
    expect(repairs[0]?.text).toContain("self_check_plan_submit");
    expect(r.of("model_responded")).toHaveLength(5);
    // Advisory: the held-out gate still decides.
    expect(r.env.status).toBe("SUCCESS");
    expect(r.env.self_check).toMatchObject({
      semantic_status: "incomplete",
      decision: "cap_reached",
      repairs_used: 1,
    });
  });

  it("a goal blocked at the turn budget still records the gate, as cap_reached: no turn beyond the budget", async () => {
    const goal = 'goal:\n  all:\n    - command_succeeded: "node --test test/"\n';
    const r = await run(
      [say("Done."), say("Done again."), say("never read")],
      "required",
      goal.replace("turns: 6", ""),
    );
    const evaluated = r.of("goal_evaluated").map((g) => g.outcome);
    expect(evaluated.at(-1)).toBe("blocked");
    const decided = r.of("repair_decided");
    expect(decided).toHaveLength(1);
    expect(decided[0]?.decision).toBe("cap_reached");
    expect(decided[0]?.warnings).toContain("the turn budget is spent, so no repair turn can run");
    expect(r.of("continuation_queued").filter((c) => c.text.includes("self_check"))).toEqual([]);
  });

  it("citing a call that never ran, and one that failed: findings, not a pass", async () => {
    const r = await run([
      write42,
      call("f1", "bash", { command: "node -e 'process.exit(3)'" }),
      plan(),
      check("s1", {
        commandEvidence: [
          { toolCallId: "ghost", command: "node --test test/", exitCode: 0 },
          { toolCallId: "f1", command: "node -e 'process.exit(3)'", exitCode: 0 },
        ],
      }),
      say("Done."),
      say("Done."),
    ]);
    const [first] = blockerCodes(r);
    expect(first?.[0]).toBe("repair");
    expect(first?.[1]).toEqual(
      expect.arrayContaining(["evidence_unknown_call", "evidence_mismatch", "cited_call_failed"]),
    );
  });

  it("a self-check followed by an edit is stale", async () => {
    const r = await run([
      write42,
      test,
      plan(),
      check("s1"),
      call("w2", "write_file", { path: "lib/answer.js", content: "export const answer = 42; // again\n" }),
      say("Done."),
      say("Done."),
    ]);
    expect(blockerCodes(r)[0]).toEqual(["repair", ["stale"]]);
  });

  it("two declared artifacts with one produced: the other is uncovered", async () => {
    const r = await run([
      write42,
      test,
      plan(["lib/answer.js", "lib/extra.js"]),
      check("s1"),
      say("Done."),
      say("Done."),
    ]);
    const d = r.of("repair_decided")[0];
    expect(d?.blockers).toEqual([{ code: "uncovered_artifact", detail: "lib/extra.js" }]);
  });

  it("a self-check carrying an environment secret or held-out content is rejected and appends nothing", async () => {
    const r = await run([
      write42,
      test,
      plan(),
      check("s1", { publicReason: `the token is ${SECRET}` }),
      check("s2", { publicReason: `the hidden check says ${HELDOUT_MARKER}` }),
      check("s3", { publicReason: Buffer.from(SECRET).toString("base64") }),
      say("Done."),
      say("Done."),
    ]);
    expect(r.of("self_check_recorded")).toEqual([]);
    const results = r.of("tool_call_finished").filter((c) => c.name === "self_check_submit");
    expect(results.map((c) => c.is_error)).toEqual([true, true, true]);
    expect(results[0]?.content).toContain("known_secret");
    expect(results[1]?.content).toContain("heldout_content");
    for (const c of results) expect(c.content).not.toContain(SECRET);
    expect(blockerCodes(r)[0]).toEqual(["repair", ["missing_self_check"]]);
  });

  it("an invalid submission is a validation error and records nothing", async () => {
    const r = await run([
      write42,
      call("s1", "self_check_submit", { status: "done" }),
      say("Done."),
      say("Done."),
    ]);
    const c = r.of("tool_call_finished").find((x) => x.call_id === "s1");
    expect(c).toMatchObject({ valid: false, is_error: true });
    expect(r.of("self_check_recorded")).toEqual([]);
  });

  it("a repair that still fails: cap reached, no third turn", async () => {
    const r = await run([
      test,
      plan(),
      check("s1", { status: "fail", publicReason: "the answer is still 41" }),
      say("Done."),
      check("s2", { status: "fail", publicReason: "still 41" }),
      say("I could not fix it."),
      say("never read"),
    ]);
    expect(r.of("repair_decided").map((d) => [d.decision, d.repairs_used, d.cap])).toEqual([
      ["repair", 0, 1],
      ["cap_reached", 1, 1],
    ]);
    expect(r.of("continuation_queued")).toHaveLength(1);
    expect(r.of("model_responded")).toHaveLength(6);
    expect(r.env.status).not.toBe("SUCCESS");
  });

  it("off by default: no self-check tools, no gate", async () => {
    const r = await run([write42, say("Done.")], "off");
    expect(r.of("repair_decided")).toEqual([]);
    expect(r.env.self_check).toBeUndefined();
  });
});
