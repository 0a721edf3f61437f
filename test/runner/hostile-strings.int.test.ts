// Hostile strings: nothing a builder or a gate produces can break an append. Each run below
// used to wedge (an event over its schema's limit: "internal error", no envelope, RUNNING forever) or
// end in TOOL_FAILURE for the builder's own doing; each must now end with an envelope and a bounded log.
import { spawnSync } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder, noopBuilder } from "../../src/builders/command-builder.js";
import { LoopgateEvent } from "../../src/core/events/loopgate-event.js";
import { projectEnvelope } from "../../src/core/run/envelope.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { RunJournal, RunStoppedError } from "../../src/runner/stream/run-journal.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { makeTask } from "./task-fixture.js";

let localDir: string;
let store: SqliteEventStore;
const dirs: string[] = [];
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-hostile-"));
  dirs.push(localDir);
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  // rm(1) walks with openat, so it removes trees deeper than PATH_MAX that fs.rm cannot.
  for (const d of dirs) spawnSync("rm", ["-rf", d]);
});

const gate = (id: string, script: string, feedback = "log") =>
  `  - id: ${id}\n    run: ["sh", "-c", ${JSON.stringify(script)}]\n    timeout: 20s\n    feedback: ${feedback}\n`;
const taskYaml = (gates: string, attempts = 2) =>
  `id: hostile\nprompt: Make lib/answer.txt say 42.\nworkspace: ./repo\ndeliverables: ["lib/**"]\ngates:\n${gates}budget: { attempts: ${attempts} }\n`;
const passing = gate("answer", 'test "$(cat lib/answer.txt)" = 42');

/** A shell snippet that sets $n to `count` copies of the letter `c` (no brace expansion in sh). */
const word = (c: string, count: number) => `n=$(head -c ${count} /dev/zero | tr '\\0' ${c})`;

async function run(yaml: string, builderScript: string | null) {
  const t = await makeTask({
    taskYaml: yaml,
    repo: { "lib/answer.txt": "41\n" },
    scripts: builderScript ? { "builder.sh": `#!/bin/sh\n${builderScript}\n` } : {},
  });
  dirs.push(t.dir);
  const env = await runTask({
    loaded: loadTask(t.file),
    builder: builderScript ? commandBuilder(t.script("builder.sh")) : noopBuilder(),
    store,
    localDir,
    sandbox: "bubblewrap",
  });
  const events = await store.readStream(RunJournal.stream(env.run_id));
  // Every stored event is valid (the store checks on read too) and the run has its verdict.
  for (const e of events) expect(LoopgateEvent.safeParse(e).success).toBe(true);
  expect(events.at(-1)?.type).toBe("run_finished");
  return { env, events };
}

describe("strings from a builder or a gate never break an append", () => {
  it("FIFOs at paths thousands of characters long: ESCALATED with bounded findings", async () => {
    // Twelve FIFOs, each under a folder chain about 2,800 characters long.
    const script = `${word("d", 250)}
p=lib; for i in 1 2 3 4 5 6 7 8 9 10 11; do p="$p/$n"; done
mkdir -p "$p"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do mkfifo "$p/fifo-$i-$(echo "$n" | cut -c1-200)"; done
echo 42 > lib/answer.txt`;
    const { env, events } = await run(taskYaml(passing), script);
    expect(env.status).toBe("ESCALATED");
    expect(env.findings.some((f) => f.code === "unsupported_entry" && f.severity === "blocking")).toBe(true);
    for (const f of env.findings) expect(f.detail.length).toBeLessThanOrEqual(2000);
    expect(env.reason).toMatch(/blocking findings: unsupported_entry/);
    expect(env.reason.length).toBeLessThanOrEqual(4000);
    const fix = events.find((e) => e.type === "required_fix_issued");
    expect(fix?.type === "required_fix_issued" && fix.data.text.length).toBeLessThanOrEqual(8000);
  });

  it("a gate log of thousands of newlines under feedback: log", async () => {
    const log = gate("lines", "i=0; while [ $i -lt 5000 ]; do echo; i=$((i+1)); done; echo FAIL; exit 1");
    const { env, events } = await run(taskYaml(log), null);
    expect(env.status).toBe("ESCALATED");
    expect(env.attempts).toBe(2);
    const fix = events.find((e) => e.type === "required_fix_issued");
    if (fix?.type !== "required_fix_issued") throw new Error("no required fix was issued");
    expect(fix.data.text).toContain("FAIL");
    expect(fix.data.text).toMatch(/\[… \d+ earlier lines cut …\]/);
    expect(fix.data.text.length).toBeLessThanOrEqual(8000);
  });

  it("five feedback: log gates on a no-op run", async () => {
    const long = "head -c 3000 /dev/zero | tr '\\0' x; echo; echo 'gate says no'; exit 1";
    const gates = ["a", "b", "c", "d", "e"].map((id) => gate(id, long)).join("");
    const { env, events } = await run(taskYaml(gates), null);
    expect(env.status).toBe("ESCALATED");
    expect(env.attempts).toBe(2);
    const fix = events.find((e) => e.type === "required_fix_issued");
    if (fix?.type !== "required_fix_issued") throw new Error("no required fix was issued");
    expect(fix.data.text.length).toBeLessThanOrEqual(8000);
    // The cut is said, and loopgate's own closing line survives it.
    expect(fix.data.text).toMatch(/characters cut/);
    expect(fix.data.text).toMatch(/Fix the work itself/);
  });

  it("a path deeper than PATH_MAX: the builder's finding, ESCALATED, not a wedge", async () => {
    // Twenty folders of 250 characters, made one `cd` at a time: about 5,000 characters in all.
    const script = `${word("p", 250)}
(cd lib && for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do mkdir "$n" && cd "$n"; done && echo deep > file.txt)
echo 42 > lib/answer.txt`;
    const { env } = await run(taskYaml(passing), script);
    expect(env.status, env.reason).toBe("ESCALATED");
    const f = env.findings.find((x) => x.code === "unsupported_entry");
    expect(f?.severity).toBe("blocking");
    expect(f?.detail).toMatch(/too long to carry/);
    expect(f?.detail).toMatch(/characters cut/);
  });
});

describe("the builder's failures are the builder's", () => {
  it("a symlink whose target is 3,000 characters long ends ESCALATED with the finding, not TOOL_FAILURE", async () => {
    const script = `${word("t", 3000)}
ln -s "/$n" lib/escape
echo 42 > lib/answer.txt`;
    const { env } = await run(taskYaml(passing, 1), script);
    expect(env.status).toBe("ESCALATED");
    const f = env.findings.find((x) => x.code === "symlink_escapes_workspace");
    expect(f?.severity).toBe("blocking");
    expect(f?.path).toBe("lib/escape");
    expect(f?.detail).toMatch(/^symlink lib\/escape points to "\/ttt/);
    expect(f?.detail).toMatch(/\[… \d+ characters cut …\]/);
    expect(f?.detail.length).toBeLessThanOrEqual(2000);
    expect(env.reason).toMatch(/symlink_escapes_workspace \(lib\/escape\)/);
  });
});

describe("an append the log refuses stops the run with a verdict", () => {
  it("records TOOL_FAILURE with loopgate's own short reason, then run_finished, and throws RunStoppedError", async () => {
    let id = 0;
    const journal = new RunJournal(
      store,
      `refused-${Date.now()}`,
      () => new Date(),
      () => `e${++id}`,
    );
    await journal.record({
      type: "start_run",
      data: {
        task_id: "t",
        task_path: "/t/task.yaml",
        task_digest: "d",
        builder: { kind: "noop" },
        max_attempts: 1,
        gates: [{ id: "g", kind: "subprocess" }],
        sandbox: "none",
        run_dir: "/r",
      },
    });
    await journal.record({ type: "start_attempt", requiredFix: null });
    // A claim past its schema's limit, as a constructor that forgot to bound it would build it.
    const bad = { attempt: 1, origin: "model" as const, text: "x".repeat(5000), hedged: false };
    await expect(journal.record({ type: "record_claim", data: bad })).rejects.toBeInstanceOf(RunStoppedError);
    const events = await store.readStream(RunJournal.stream(journal.runId));
    expect(events.map((e) => e.type)).toEqual([
      "run_started",
      "attempt_started",
      "infrastructure_failed",
      "run_finished",
    ]);
    const last = events.at(-1);
    if (last?.type !== "run_finished") throw new Error("no verdict");
    expect(last.data.status).toBe("TOOL_FAILURE");
    expect(last.data.reason).toMatch(/^loopgate could not record claim_recorded: .*data\.text/);
    expect(last.data.reason.length).toBeLessThanOrEqual(1000);
    expect(projectEnvelope(journal.runId, events)?.status).toBe("TOOL_FAILURE");
  });
});
