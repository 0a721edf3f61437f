import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scriptedModel } from "../../../../src/agent/models/scripted-model.js";
import { commandBuilder } from "../../../../src/builders/command-builder.js";
import { staticGate } from "../../../../src/gates/static-gate.js";
import type { BuilderChoice } from "../../../../src/runner/run/context/builder-choice.js";
import { runPaths } from "../../../../src/runner/run/context/run-context.js";
import { runTask } from "../../../../src/runner/run/run-task.js";
import { RunJournal } from "../../../../src/runner/stream/run-journal.js";
import { loadMissionCase } from "../../../../src/runner/task-source/mission/mission-case.js";
import { SqliteEventStore } from "../../../../src/store/sqlite/sqlite-event-store.js";
import { runTree } from "../../../support/run-tree.js";

// The seed's example fixture, run for real: the sum of input.json must land in answer.json.
const SUM = {
  prompt: "Add the numbers in input.json and write the sum to answer.json.",
  goal: "task:sum",
  files: { "input.json": "[2,3]\n" },
  artifacts: { "answer.json": { sum: 5 } },
  preserve: ["input.json"],
};
// A unique marker inside an expected value: it must never reach the builder's side.
const MARKER = `EXPECTED-${randomBytes(8).toString("hex")}`;
const LEAKY = { ...SUM, artifacts: { "answer.json": { sum: 5, token: MARKER } } };

let root: string;
let localDir: string;
let store: SqliteEventStore;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "loopgate-case-run-"));
  localDir = join(root, "store");
  store = SqliteEventStore.open(join(root, "events.db"));
});
afterAll(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

let n = 0;
function fixtureFile(body: object): string {
  const file = join(root, `case-${++n}.json`);
  writeFileSync(file, JSON.stringify(body, null, 2));
  return file;
}
function script(body: string): string {
  const file = join(root, `builder-${++n}.sh`);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}
async function run(fixture: string, builder: BuilderChoice, maxAttempts = 1) {
  const loaded = loadMissionCase(fixture, { localDir });
  const env = await runTask({ loaded, builder, store, localDir, sandbox: "bubblewrap", maxAttempts });
  const events = await store.readStream(RunJournal.stream(env.run_id));
  return { env, events, runDir: join(localDir, "runs", env.run_id) };
}
/** Every regular file under `dir` whose bytes contain `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    const st = statSync(p, { throwIfNoEntry: false });
    if (st?.isFile() && readFileSync(p).includes(needle)) hits.push(name);
  }
  return hits;
}

describe("a mission fixture run end to end", () => {
  it("a builder that writes the right answer (any key order, any spacing) reaches SUCCESS", async () => {
    const r = await run(fixtureFile(SUM), commandBuilder(script(`printf '{ "sum" : 5 }\\n' > answer.json`)));
    expect(r.env.status).toBe("SUCCESS");
    expect(r.env.task_id).toMatch(/^case-case-\d+$/);
    expect(r.env.gates.map((g) => `${g.id}:${g.passed}`)).toEqual([
      "artifact-answer-json:true",
      "preserve-input-json:true",
    ]);
    expect(r.env.findings).toEqual([]);
  });

  it("a wrong answer is ESCALATED, naming the artifact gate", async () => {
    const r = await run(
      fixtureFile(SUM),
      commandBuilder(script(`echo '{"sum": 6}' > answer.json; echo Done!`)),
    );
    expect(r.env.status).toBe("ESCALATED");
    expect(r.env.reason).toContain("artifact-answer-json");
    expect(r.env.gates.find((g) => g.id === "artifact-answer-json")?.passed).toBe(false);
    expect(r.env.claims.map((c) => c.text)).toEqual(["Done!"]);
  });

  it("no answer at all is ESCALATED too", async () => {
    const r = await run(fixtureFile(SUM), commandBuilder(script("true")));
    expect(r.env.status).toBe("ESCALATED");
    expect(r.env.reason).toContain("artifact-answer-json");
  });

  it("modifying a preserved input is a blocking protected finding, even with the right answer", async () => {
    const r = await run(
      fixtureFile(SUM),
      commandBuilder(script(`echo '[5]' > input.json; echo '{"sum": 5}' > answer.json`)),
    );
    expect(r.env.status).toBe("ESCALATED");
    expect(r.env.findings).toContainEqual(
      expect.objectContaining({ code: "protected_path_modified", severity: "blocking", path: "input.json" }),
    );
  });

  it("an extra file beside the answer is not carried to the gates (artifacts are the only deliverables)", async () => {
    const r = await run(
      fixtureFile(SUM),
      commandBuilder(script(`echo '{"sum": 5}' > answer.json; echo x > scratch.txt`)),
    );
    expect(r.env.status).toBe("SUCCESS");
    expect(r.env.findings).toContainEqual(
      expect.objectContaining({
        code: "change_outside_deliverables",
        severity: "warning",
        path: "scratch.txt",
      }),
    );
  });
});

describe("expected outputs never reach the builder", () => {
  it("an external builder sees no expected value in its prompt, prompt file, fix, environment or workspace", async () => {
    const fixture = fixtureFile(LEAKY);
    const spy = script(
      [
        'printf "%s" "$1" > "seen-prompt-$LOOPGATE_ATTEMPT.txt"',
        'printf "%s" "$2" > "seen-fix-$LOOPGATE_ATTEMPT.txt"',
        'cat "$LOOPGATE_PROMPT_FILE" > "seen-prompt-file-$LOOPGATE_ATTEMPT.txt"',
        'env > "seen-env-$LOOPGATE_ATTEMPT.txt"',
        `cat '${fixture}' > "seen-fixture-$LOOPGATE_ATTEMPT.txt" 2>&1 || true`,
        `echo '{"sum": 5}' > answer.json`,
      ].join("\n"),
    );
    const r = await run(fixture, commandBuilder(`${spy} {prompt} {required_fix}`), 2);
    expect(r.env.status).toBe("ESCALATED");
    const ws = await runTree(localDir, r.env.run_id, root);
    // The spy really recorded what it was given: the prompt, and on attempt 2 the failed gate's id.
    expect(readFileSync(join(ws, "seen-prompt-1.txt"), "utf8")).toBe(LEAKY.prompt);
    expect(readFileSync(join(ws, "seen-fix-2.txt"), "utf8")).toContain("artifact-answer-json");
    expect(readFileSync(join(ws, "seen-prompt-file-2.txt"), "utf8")).toContain(LEAKY.prompt);
    expect(filesContaining(ws, MARKER)).toEqual([]);
    expect(filesContaining(runPaths(r.runDir).pristineDir, MARKER)).toEqual([]);
    expect(filesContaining(loadMissionCase(fixture, { localDir }).mission.caseDir, MARKER)).toEqual([]);
    // Only the gates' own results (the owner's envelope) carry the expected value.
    const carrying = r.events.filter((e) => JSON.stringify(e).includes(MARKER)).map((e) => e.type);
    expect(carrying.length).toBeGreaterThan(0);
    expect(new Set(carrying)).toEqual(new Set(["gate_run_finished"]));
  });

  it("the built-in agent's model requests hold no expected value, across a failed attempt and its fix", async () => {
    const model = scriptedModel([
      { tool_calls: [{ name: "read_file", args: { path: "input.json" } }] },
      { tool_calls: [{ name: "write_file", args: { path: "answer.json", content: '{"sum": 5}\n' } }] },
      { text: "The sum is written; done." },
      { text: "I checked again; done." },
    ]);
    const builder: BuilderChoice = {
      descriptor: { kind: "agent", command: "scripted:test" },
      agent: { model },
    };
    const r = await run(fixtureFile(LEAKY), builder, 2);
    expect(r.env.status).toBe("ESCALATED");
    expect(r.env.reason).toContain("artifact-answer-json");
    const requests = JSON.stringify(model.requests);
    expect(model.requests.length).toBe(4);
    // The requests are the real thing: the prompt, the goal, the file read and the second attempt's fix.
    expect(requests).toContain(LEAKY.prompt);
    expect(requests).toContain("task:sum");
    expect(requests).toContain("[2,3]");
    expect(JSON.stringify(model.requests[3])).toContain("artifact-answer-json");
    expect(requests).not.toContain(MARKER);
    expect(filesContaining(await runTree(localDir, r.env.run_id, root), MARKER)).toEqual([]);
    const builderSide = r.events.filter((e) => e.type !== "gate_run_finished");
    expect(JSON.stringify(builderSide)).not.toContain(MARKER);
  });
});

describe("the artifact gate compares whole JSON documents", () => {
  const gate = staticGate({
    id: "artifact-out-json",
    static: { path: "out.json", json_pointer: "", equals: { a: 1, b: [1, { c: null }] } },
    feedback: "summary",
  });
  const check = async (text: string) => {
    const dir = mkdtempSync(join(root, "env-"));
    writeFileSync(join(dir, "out.json"), text);
    const ctx = {
      gateEnv: dir,
      runId: "r",
      attempt: 1,
      taskId: "t",
      sandbox: "none" as const,
      readOnly: false,
    };
    return (await gate.run(ctx)).passed;
  };
  it("ignores key order and whitespace, not array order, extra keys or types", async () => {
    expect(await check('{"b":[1,{"c":null}],"a":1}')).toBe(true);
    expect(await check('{\n  "a": 1,\n  "b": [1, {"c": null}]\n}\n')).toBe(true);
    expect(await check('{"a":1,"b":[{"c":null},1]}')).toBe(false);
    expect(await check('{"a":1,"b":[1,{"c":null}],"d":0}')).toBe(false);
    expect(await check('{"a":"1","b":[1,{"c":null}]}')).toBe(false);
    expect(await check("not json")).toBe(false);
  });
});
