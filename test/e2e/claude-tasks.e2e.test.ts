// The real Claude Code (the pinned binary) in `loopgate claude`: its task list's TaskCompleted runs the
// task's frozen check (a failing one refuses the completion with the finding), and the task's goal
// predicates are judged at each Stop over Claude's runtime facts. Driven by the scripted model server.
import { appendFileSync } from "node:fs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ModelServer } from "../../src/agent/models/model-server/server.js";
import { agentBinary } from "../support/agent-binaries.js";
import { addTask, FIX, modelServer } from "./claude-support.js";
import { type CliResult, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

const claude = agentBinary("claude");
if ("missing" in claude) console.log(`skipping the real Claude Code task and goal tests: ${claude.missing}`);
let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(removeTemps);

interface Env {
  run_id: string;
  status: string;
  attempts: number;
  gates: { attempt: number; passed: boolean }[];
}
interface Ev {
  type: string;
  data: Record<string, unknown>;
  meta: { origin: string };
}

async function run(task: string, url: string): Promise<CliResult & { store: string }> {
  const store = tempDir("loopgate-claude-tasks-store-");
  const r = await loopgate(
    ["claude", task, "--json", "--store", store, "--", "--allowedTools", "Bash,TaskCreate,TaskUpdate"],
    { env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: "sk-model-server-dummy-key" }, timeoutMs: 280_000 },
  );
  return { ...r, store };
}

async function events(runId: string, store: string): Promise<Ev[]> {
  const r = await loopgate(["events", runId, "--store", store, "--json"]);
  expect(r.code, show(r)).toBe(0);
  return r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Ev);
}

/** The last message of model request number `step`: what Claude sent back after the previous response. */
const request = (s: ModelServer, step: number) => {
  const body = s.requests.find((q) => q.kind === "step" && q.step === step)?.body as
    | { messages?: unknown[] }
    | undefined;
  return JSON.stringify(body?.messages?.at(-1) ?? null);
};

const LONG = { timeout: 300_000 };

describe.skipIf("missing" in claude)(
  "loopgate claude: Claude's tasks and the goal (real Claude Code)",
  () => {
    it(
      "TaskCompleted with a failing frozen check is refused with the finding; after the fix it is allowed; SUCCESS",
      LONG,
      async () => {
        const update = (status: string) => ({ name: "TaskUpdate", args: { taskId: "1", status } });
        server = await modelServer([
          {
            text: "Planning.",
            tool_calls: [
              {
                name: "TaskCreate",
                args: {
                  subject: "Make add.js add",
                  description: "add.js should sum its arguments.\ncheck: node --test test/",
                  activeForm: "Fixing add.js",
                },
              },
            ],
          },
          { text: "Starting.", tool_calls: [update("in_progress")] },
          { text: "I think it is done.", tool_calls: [update("completed")] },
          { text: "Fixing for real.", tool_calls: [{ name: "Bash", args: { command: FIX } }] },
          { text: "Now it is done.", tool_calls: [update("completed")] },
          { text: "Done: add.js adds." },
        ]);
        const r = await run(addTask(), server.url);
        expect(r.code, show(r)).toBe(0);
        const env = parseStdout<Env>(r);
        expect(env.status).toBe("SUCCESS");
        expect(env.attempts).toBe(1);
        const ev = await events(env.run_id, r.store);
        const appraised = ev.filter((e) => e.type === "agent_step_appraised");
        expect(appraised.map((e) => e.meta.origin)).toEqual(["runtime", "runtime"]);
        expect(appraised.map((e) => [e.data.blocked, e.data.finding])).toEqual([
          [true, "check_failed"],
          [false, "landed"],
        ]);
        expect(appraised[0]?.data).toMatchObject({
          task_id: "1",
          step: "Make add.js add",
          calls: 0,
          check: { command: "node --test test/", status: "failed" },
        });
        expect(appraised[1]?.data).toMatchObject({ calls: 1, check: { status: "passed", exit_code: 0 } });
        // The refusal reached the model as the TaskUpdate's result; the allowed completion did not carry it.
        expect(request(server, 4)).toContain("loopgate refused to mark task #1 completed");
        expect(request(server, 4)).toContain("node --test test/");
        expect(request(server, 6)).toContain("Updated task #1 status");
        expect(request(server, 6)).not.toContain("loopgate refused");
        expect(server.exhausted).toBeUndefined();
      },
    );

    it(
      "goal unmet at Stop blocks with the unmet predicate; once run, the Stop goes on: SUCCESS",
      LONG,
      async () => {
        const task = addTask();
        appendFileSync(task, 'goal:\n  all:\n    - command_succeeded: "node --test test/"\n');
        server = await modelServer([
          { text: "Fixing.", tool_calls: [{ name: "Bash", args: { command: FIX } }] },
          { text: "Done." },
          {
            text: "Running the tests.",
            tool_calls: [{ name: "Bash", args: { command: "node --test test/" } }],
          },
          { text: "Done, the tests pass." },
        ]);
        const r = await run(task, server.url);
        expect(r.code, show(r)).toBe(0);
        const env = parseStdout<Env>(r);
        expect(env.status).toBe("SUCCESS");
        expect(env.attempts).toBe(1);
        expect(env.gates.map((g) => [g.attempt, g.passed])).toEqual([[1, true]]);
        const ev = await events(env.run_id, r.store);
        const goal = ev.filter((e) => e.type === "agent_goal_evaluated");
        expect(goal.map((e) => [e.data.stop, e.data.outcome])).toEqual([
          [1, "continuing"],
          [2, "completed"],
        ]);
        expect(goal[0]?.data.unmet).toEqual(["command_succeeded: node --test test/"]);
        // The first Stop was blocked by the goal (no gate ran for it) and Claude was told what is unmet.
        expect(request(server, 3)).toContain("command_succeeded: node --test test/");
        expect(request(server, 3)).toContain("not evidence of completion");
        expect(server.exhausted).toBeUndefined();
      },
    );
  },
);
