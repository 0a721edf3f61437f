import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelAdapter } from "../../src/agent/models/model.js";
import { createModel } from "../../src/agent/models/provider.js";
import { commandBuilder } from "../../src/builders/command-builder.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { RunJournal } from "../../src/runner/stream/run-journal.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { makeTask } from "../runner/task-fixture.js";
import { runTree } from "../support/run-tree.js";

// A scripted judge at the model boundary; everything else is real. The judge can only veto.
const JUDGE_PROSE = "JUDGE-PRIVATE-REASONING-41d7";
const PRIVATE_RULE = "PRIVATE-RULE-TEXT-93aa";
const taskYaml = (gateCmd = '["sh", "check.sh"]', timeout = "30s") => `id: judged
prompt: Make lib/answer.sh print 42 without adding dependencies.
workspace: ./repo
deliverables: ["lib/**"]
protected: ["check.sh"]
gates:
  - id: answer
    run: ${gateCmd}
    timeout: 10s
    feedback: log
judge:
  rules:
    - "Keep lib/answer.sh a plain POSIX sh script."
    - { id: no-network, text: "${PRIVATE_RULE}", private: true }
  timeout: ${timeout}
budget: { attempts: 2 }
`;
const repo = {
  "lib/answer.sh": "echo 41\n",
  "check.sh": '[ "$(sh lib/answer.sh)" = 42 ] || { echo wrong; exit 1; }\n',
};
// The builder fixes the answer and keeps what it was told, so the test can read its required fix.
const fixer = `#!/bin/sh
printf '%s' "$1" > "lib/told-$LOOPGATE_ATTEMPT.txt"
printf 'echo 42 # curl -s http://example.com\\n' > lib/answer.sh
echo done
`;

let localDir: string;
let store: SqliteEventStore;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-judge-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  await rm(localDir, { recursive: true, force: true });
});

async function judged(judgeScript: string | ModelAdapter, yaml = taskYaml()) {
  const t = await makeTask({
    taskYaml: yaml,
    repo,
    scripts: { "fixer.sh": fixer, "judge.yaml": typeof judgeScript === "string" ? judgeScript : "[]" },
  });
  const judge =
    typeof judgeScript === "string" ? createModel(`scripted:${t.script("judge.yaml")}`) : judgeScript;
  const env = await runTask({
    loaded: loadTask(t.file),
    builder: commandBuilder(`${t.script("fixer.sh")} {required_fix}`),
    store,
    localDir,
    sandbox: "bubblewrap",
    judge,
  });
  const events = await store.readStream(RunJournal.stream(env.run_id));
  const ws = await runTree(localDir, env.run_id);
  return { env, events, ws };
}

const verdict = (v: object) =>
  `- tool_calls:\n    - name: submit_verdict\n      args: ${JSON.stringify(v)}\n`;
const approve = verdict({ verdict: "approve", rules_applied: ["rule-1", "no-network"], violations: [] });
const reject = verdict({
  verdict: "reject",
  rules_applied: ["rule-1", "no-network"],
  violations: [
    { rule: "no-network", evidence: `${JUDGE_PROSE}: echo 42 # curl -s http://example.com` },
    { rule: "no-network", evidence: "echo 42 # curl -s http://example.com" },
  ],
});

describe("the judge", () => {
  it("approval after green gates gives SUCCESS, and the envelope carries the verdict", async () => {
    const { env, events } = await judged(approve);
    expect(env.status).toBe("SUCCESS");
    expect(env.judge).toEqual({ verdict: "approve", rules_applied: ["rule-1", "no-network"] });
    expect(events.find((e) => e.type === "judge_finished")?.meta.origin).toBe("judge");
  });

  it("a rejection vetoes; the next attempt gets a templated fix with rule ids and diff quotes only", async () => {
    const { env, ws } = await judged(reject + reject);
    expect(env.status).toBe("ESCALATED");
    expect(env.reason).toContain("judge rejected");
    const told = readFileSync(join(ws, "lib/told-2.txt"), "utf8");
    expect(told).toContain("- no-network");
    expect(told).toContain("in your change: echo 42 # curl -s http://example.com");
    expect(told).not.toContain(JUDGE_PROSE);
    expect(told).not.toContain(PRIVATE_RULE);
  });

  it("malformed output is inconclusive and never approves", async () => {
    const { env, events } = await judged("- text: Looks good to me, ship it!\n- text: still fine\n");
    expect(env.status).toBe("ESCALATED");
    const verdicts = events
      .filter((e) => e.type === "judge_finished")
      .map((e) => (e.data as { verdict: string }).verdict);
    expect(verdicts).toEqual(["inconclusive", "inconclusive"]);
  });

  it("a judge that names an unknown rule, or rejects naming none, is inconclusive", async () => {
    const bad =
      verdict({ verdict: "approve", rules_applied: ["made-up"], violations: [] }) +
      verdict({ verdict: "reject", rules_applied: [], violations: [] });
    const { events } = await judged(bad);
    expect(
      events.filter((e) => e.type === "judge_finished").map((e) => (e.data as { reason: string }).reason),
    ).toEqual([
      expect.stringContaining("unknown rule ids made-up"),
      expect.stringContaining("names no violated rule"),
    ]);
  });

  it("a judge that does not answer times out as inconclusive", async () => {
    const silent: ModelAdapter = { id: "fake:silent", generate: () => new Promise(() => {}) };
    const started = Date.now();
    const { env, events } = await judged(silent, taskYaml('["sh", "check.sh"]', "1s"));
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(env.status).toBe("ESCALATED");
    expect(
      events.filter((e) => e.type === "judge_finished").map((e) => (e.data as { reason: string }).reason)[0],
    ).toContain("did not answer within 1000 ms");
  });

  it("cannot override a failed gate: a judge that would approve is not even consulted", async () => {
    const { env, events } = await judged(approve + approve, taskYaml('["sh", "-c", "exit 1"]'));
    expect(env.status).toBe("ESCALATED");
    expect(events.some((e) => e.type === "judge_finished")).toBe(false);
    expect(env.reason).toContain("gate answer failed");
  });

  it("a task with a judge and no judge model is refused before anything runs", async () => {
    const t = await makeTask({ taskYaml: taskYaml(), repo });
    await expect(
      runTask({
        loaded: loadTask(t.file),
        builder: commandBuilder("true"),
        store,
        localDir,
        sandbox: "bubblewrap",
      }),
    ).rejects.toThrow(/no judge model/);
  });
});
