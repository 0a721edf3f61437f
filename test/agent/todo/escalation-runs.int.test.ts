import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { agentBuilder } from "../../../src/agent/agent-builder.js";
import type { ScriptedResponseInput } from "../../../src/agent/models/script-file.js";
import { projectMessages } from "../../../src/core/agent/agent-messages.js";
import { REVISE_PLAN_NUDGE } from "../../../src/core/agent/step-escalation.js";
import type { EventData, EventType, LoopgateEvent } from "../../../src/core/events/loopgate-event.js";
import { attemptEvents } from "../../../src/core/run/agent-projections.js";
import { runTask } from "../../../src/runner/run/run-task.js";
import { RunJournal } from "../../../src/runner/stream/run-journal.js";
import { loadTask } from "../../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";
import { makeTask } from "../../runner/task-fixture.js";

// Scripted runs with a scripted escalation model: a landed step that trips a trigger is escalated once, and
// only a fixed template (never the reviewer's words) reaches the builder's conversation.

const taskYaml = `id: todo-escalation
prompt: Make lib/answer.js export 42.
workspace: ./repo
gates:
  - id: visible
    run: ["node", "-e", "process.exit(0)"]
    timeout: 20s
budget: { attempts: 1, turns: 3 }
`;
const repo = { "lib/answer.js": "export const answer = 41;\n", "package.json": '{ "type": "module" }\n' };
const MARKER = "ESCALATION-FREE-TEXT-MARKER-5150";

let localDir: string;
let store: SqliteEventStore;
const dirs: string[] = [];
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-escalation-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  for (const d of [localDir, ...dirs]) await rm(d, { recursive: true, force: true });
});

let n = 0;
async function run(
  responses: readonly ScriptedResponseInput[],
  escalation?: readonly ScriptedResponseInput[],
) {
  const t = await makeTask({ taskYaml, repo });
  dirs.push(t.dir);
  const file = join(t.dir, `script-${++n}.yaml`);
  await writeFile(file, stringify(responses));
  let escalationFile: string | undefined;
  if (escalation) {
    escalationFile = join(t.dir, `escalation-${n}.yaml`);
    await writeFile(escalationFile, stringify(escalation));
  }
  const env = await runTask({
    loaded: loadTask(t.file),
    builder: agentBuilder(
      `scripted:${file}`,
      escalationFile ? { stepEscalation: `scripted:${escalationFile}` } : {},
    ),
    store,
    localDir,
    sandbox: "bubblewrap",
    maxAttempts: 1,
  });
  const events: LoopgateEvent[] = await store.readStream(RunJournal.stream(env.run_id));
  const of = <T extends EventType>(type: T) =>
    events.filter((e) => e.type === type).map((e) => e.data as EventData<T>);
  const messages = projectMessages(attemptEvents(events, 1), "");
  const toolResult = (callId: string) =>
    messages.find((m) => m.role === "tool" && m.callId === callId) as { content: string } | undefined;
  return { env, events, of, messages, toolResult };
}

const S = "make the tests pass";
const todo = (status: string): ScriptedResponseInput => ({
  text: "",
  tool_calls: [{ name: "todo", args: { items: [{ content: S, status }] } }],
});
const claimScript: ScriptedResponseInput[] = [
  todo("in_progress"),
  { text: "", tool_calls: [{ name: "bash", args: { command: "echo working" } }] },
  todo("completed"),
  { text: "Done." },
];
const decide = (decision: string): ScriptedResponseInput[] => [
  { text: "", tool_calls: [{ name: "submit_decision", args: { decision, reason: MARKER } }] },
];

describe.concurrent("step escalation in scripted runs", () => {
  it("revise_plan renders only the fixed template; the reviewer's words never reach the builder", async () => {
    const r = await run(claimScript, decide("revise_plan"));
    expect(r.of("step_appraised")).toMatchObject([{ step: S, finding: "landed", calls: 1 }]);
    expect(r.of("step_escalated")).toEqual([
      {
        attempt: 1,
        call_id: "call_3_0",
        step: S,
        trigger: "unverified_claim",
        decision: "revise_plan",
        escalations_used: 1,
      },
    ]);
    expect(r.toolResult("call_3_0")?.content).toContain(REVISE_PLAN_NUDGE);
    expect(JSON.stringify(r.messages)).not.toContain(MARKER);
    expect(JSON.stringify(r.events)).not.toContain(MARKER);
  });

  it("carry_on renders nothing", async () => {
    const r = await run(claimScript, decide("carry_on"));
    expect(r.of("step_escalated")).toMatchObject([{ decision: "carry_on" }]);
    expect(r.toolResult("call_3_0")?.content).not.toContain("[loopgate]");
  });

  it("a malformed answer is inconclusive and renders nothing", async () => {
    const r = await run(claimScript, [{ text: `carry on, ${MARKER}` }]);
    expect(r.of("step_escalated")).toMatchObject([{ decision: "inconclusive" }]);
    expect(r.toolResult("call_3_0")?.content).not.toContain("[loopgate]");
    expect(JSON.stringify(r.events)).not.toContain(MARKER);
  });

  it("is off by default: no escalation model, no escalation", async () => {
    const r = await run(claimScript);
    expect(r.of("step_appraised")).toMatchObject([{ finding: "landed" }]);
    expect(r.of("step_escalated")).toEqual([]);
  });
});
