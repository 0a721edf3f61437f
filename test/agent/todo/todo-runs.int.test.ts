import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { agentBuilder } from "../../../src/agent/agent-builder.js";
import type { ScriptedResponseInput } from "../../../src/agent/models/script-file.js";
import { projectMessages } from "../../../src/core/agent/agent-messages.js";
import type { EventData, EventType, LoopgateEvent } from "../../../src/core/events/loopgate-event.js";
import { attemptEvents } from "../../../src/core/run/agent-projections.js";
import { runTask } from "../../../src/runner/run/run-task.js";
import { RunJournal } from "../../../src/runner/stream/run-journal.js";
import { loadTask } from "../../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";
import { makeTask } from "../../runner/task-fixture.js";

// Scripted-model runs of the plan tool: each completion is appraised from the recorded tool calls, declared
// checks run in the sandbox after the batch, and the finding is rendered onto the todo result.

const taskYaml = (budget = "{ attempts: 1, turns: 3 }") => `id: todo-answer
prompt: Make lib/answer.js export 42.
workspace: ./repo
gates:
  - id: visible
    run: ["node", "-e", "process.exit(0)"]
    timeout: 20s
budget: ${budget}
`;
const repo = { "lib/answer.js": "export const answer = 41;\n", "package.json": '{ "type": "module" }\n' };

let localDir: string;
let store: SqliteEventStore;
const dirs: string[] = [];
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-todo-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  for (const d of [localDir, ...dirs]) await rm(d, { recursive: true, force: true });
});

let n = 0;
async function run(
  responses: readonly ScriptedResponseInput[],
  opts: { stepChecks?: boolean; budget?: string } = {},
) {
  const t = await makeTask({ taskYaml: taskYaml(opts.budget), repo });
  dirs.push(t.dir);
  const file = join(t.dir, `script-${++n}.yaml`);
  await writeFile(file, stringify(responses));
  const env = await runTask({
    loaded: loadTask(t.file),
    builder: agentBuilder(`scripted:${file}`, opts.stepChecks === false ? { stepChecks: false } : {}),
    store,
    localDir,
    sandbox: "bubblewrap",
    maxAttempts: 1,
  });
  const events: LoopgateEvent[] = await store.readStream(RunJournal.stream(env.run_id));
  const of = <T extends EventType>(type: T) =>
    events.filter((e) => e.type === type).map((e) => e.data as EventData<T>);
  const toolResult = (callId: string) =>
    projectMessages(attemptEvents(events, 1), "").find((m) => m.role === "tool" && m.callId === callId) as
      | { content: string }
      | undefined;
  return { env, events, of, toolResult };
}

type Item = { content: string; status: string; check?: string | null; expect?: string };
const todo = (...items: Item[]): ScriptedResponseInput => ({
  text: "",
  tool_calls: [{ name: "todo", args: { items } }],
});
const calls = (...c: { name: string; args: unknown }[]): ScriptedResponseInput => ({
  text: "",
  tool_calls: c,
});
const done: ScriptedResponseInput = { text: "Done." };
const S = "set the answer";

describe.concurrent("plan steps checked when ticked", () => {
  it("a step ticked with no tool calls is a null step, rendered onto the todo result", async () => {
    const r = await run([
      todo({ content: S, status: "in_progress" }),
      todo({ content: S, status: "completed" }),
      done,
    ]);
    expect(r.of("todo_written").map((w) => w.completed)).toEqual([[], [S]]);
    expect(r.of("step_appraised")).toMatchObject([
      { step: S, finding: "null_step", measured: true, calls: 0, check: null },
    ]);
    expect(r.toolResult("call_2_0")?.content).toContain("[x] set the answer");
    expect(r.toolResult("call_2_0")?.content).toContain("was marked completed with no tool calls");
    expect(r.toolResult("call_1_0")?.content).not.toContain("loopgate:");
  });

  it("a step whose declared check fails is check_failed, even though its last call succeeded", async () => {
    const r = await run([
      todo({ content: S, status: "in_progress", check: "grep -q 42 lib/answer.js" }),
      calls({ name: "bash", args: { command: "echo working" } }),
      todo({ content: S, status: "completed" }), // omits the check: restored and frozen
      done,
    ]);
    expect(r.of("todo_written")[1]?.changes).toEqual([
      { step: S, kind: "check_restored", proposed: null, kept: "grep -q 42 lib/answer.js" },
    ]);
    expect(r.of("step_check_ran")).toMatchObject([{ step: S, status: "failed", exit_code: 1 }]);
    expect(r.of("step_appraised")).toMatchObject([
      {
        finding: "check_failed",
        measured: true,
        calls: 1,
        check: { command: "grep -q 42 lib/answer.js", exit_code: 1, verified: false },
      },
    ]);
    const content = r.toolResult("call_3_0")?.content ?? "";
    expect(content).toContain("restored and frozen");
    expect(content).toContain("ran and did not pass (exit 1)");
    // The check ran after the batch, before the next model request.
    const types = r.events.map((e) => e.type);
    expect(types.indexOf("step_check_ran")).toBeLessThan(types.lastIndexOf("model_responded"));
  });

  it("a check changed after completion is reported as a change and not taken", async () => {
    const r = await run([
      todo({ content: S, status: "in_progress", check: "grep -q 41 lib/answer.js" }),
      calls({ name: "bash", args: { command: "cat lib/answer.js" } }),
      todo({ content: S, status: "completed" }),
      todo({ content: S, status: "completed", check: "true" }),
      done,
    ]);
    expect(r.of("step_check_ran")).toMatchObject([{ status: "passed", exit_code: 0 }]);
    expect(r.of("step_appraised")).toMatchObject([
      { finding: "landed", rendered: "", check: { verified: true } },
    ]);
    const last = r.of("todo_written")[2];
    expect(last?.items[0]).toMatchObject({ check: "grep -q 41 lib/answer.js", check_frozen: true });
    expect(last?.changes).toEqual([
      { step: S, kind: "check_kept", proposed: "true", kept: "grep -q 41 lib/answer.js" },
    ]);
    expect(r.toolResult("call_4_0")?.content).toContain("is frozen since it completed");
  });

  it("--no-step-checks: the check is skipped and the step stays unverified", async () => {
    const r = await run(
      [
        todo({ content: S, status: "in_progress", check: "true" }),
        calls({ name: "bash", args: { command: "true" } }),
        todo({ content: S, status: "completed" }),
        done,
      ],
      { stepChecks: false },
    );
    expect(r.of("step_check_ran")).toMatchObject([{ status: "skipped", exit_code: null }]);
    expect(r.of("step_appraised")).toMatchObject([{ finding: "landed", check: { verified: false } }]);
    expect(r.toolResult("call_3_0")?.content).toContain("the step is unverified");
  });

  it("at most budget.step_checks checks run; the rest are skipped, never passed", async () => {
    const r = await run(
      [
        todo(
          { content: "a", status: "in_progress", check: "true" },
          { content: "b", status: "in_progress", check: "true" },
        ),
        todo({ content: "a", status: "completed" }, { content: "b", status: "completed" }),
        done,
      ],
      { budget: "{ attempts: 1, turns: 3, step_checks: 1 }" },
    );
    expect(r.of("step_check_ran").map((c) => [c.step, c.status])).toEqual([
      ["a", "passed"],
      ["b", "skipped"],
    ]);
    expect(r.of("step_appraised").map((a) => a.check?.verified)).toEqual([true, false]);
  });

  it("a step revised once that gets the same finding again escalates its wording", async () => {
    const r = await run([
      todo({ content: S, status: "in_progress" }),
      todo({ content: S, status: "completed" }),
      todo({ content: S, status: "in_progress" }),
      todo({ content: S, status: "completed" }),
      done,
    ]);
    expect(r.of("todo_written").map((w) => w.reopened)).toEqual([[], [], [S], []]);
    expect(r.of("step_appraised").map((a) => a.finding)).toEqual(["null_step", "null_step"]);
    expect(r.toolResult("call_2_0")?.content).toContain("revise the step");
    expect(r.toolResult("call_4_0")?.content).toContain("already got this finding");
  });

  it("ambiguity reads as no finding: a sibling in flight, a denial in the same batch", async () => {
    const r = await run([
      todo({ content: "a", status: "in_progress" }, { content: "b", status: "in_progress" }),
      calls(
        {
          name: "todo",
          args: {
            items: [
              { content: "a", status: "completed" },
              { content: "b", status: "in_progress" },
            ],
          },
        },
        { name: "bash", args: { command: "true" } },
      ),
      calls(
        { name: "read_file", args: { path: "../../etc/passwd" } },
        {
          name: "todo",
          args: {
            items: [
              { content: "a", status: "completed" },
              { content: "b", status: "completed" },
            ],
          },
        },
      ),
      done,
    ]);
    expect(r.of("step_appraised").map((a) => [a.step, a.finding, a.measured, a.rendered])).toEqual([
      ["a", null, false, ""],
      ["b", null, false, ""],
    ]);
  });
});
