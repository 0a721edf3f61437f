import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentBuilder } from "../../src/agent/agent-builder.js";
import type {
  ModelAdapter,
  ModelFailure,
  ModelRequest,
  ModelResponse,
} from "../../src/agent/models/model.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { RunJournal } from "../../src/runner/stream/run-journal.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { makeTask } from "../runner/task-fixture.js";

// The model boundary fails as values: rate limits and provider errors become events, retries are
// bounded and each is recorded, and a model that keeps failing ends the run in TOOL_FAILURE.

const taskYaml = `id: fail-model
prompt: Make answer.txt say 42.
workspace: ./repo
gates:
  - id: answer
    static: { path: answer.txt, match: "^42$" }
budget: { attempts: 1 }
`;

/** A model at the boundary that plays back a fixed list of outcomes and counts the requests it got. */
function fakeModel(outcomes: ModelResponse[]): ModelAdapter & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    id: "fake:model",
    requests,
    async generate(req) {
      requests.push(req);
      return (
        outcomes[requests.length - 1] ?? {
          ok: false,
          error: { kind: "script_exhausted", message: "no more", retryable: false },
        }
      );
    },
  };
}
const failure = (kind: ModelFailure["kind"], retryable: boolean): ModelResponse => ({
  ok: false,
  error: { kind, message: `${kind} from the fake provider`, retryable, retryAfterMs: 5 },
});
const usage = { inputTokens: 10, outputTokens: 5, costUsd: 0.001 };
const agent = (model: ModelAdapter): AgentBuilder => ({
  descriptor: { kind: "agent", command: model.id },
  agent: { model },
});

let localDir: string;
let store: SqliteEventStore;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-model-failures-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  await rm(localDir, { recursive: true, force: true });
});

async function run(model: ModelAdapter) {
  const t = await makeTask({ taskYaml, repo: { "answer.txt": "41\n" } });
  const env = await runTask({
    loaded: loadTask(t.file),
    builder: agent(model),
    store,
    localDir,
    sandbox: "bubblewrap",
  });
  const events = await store.readStream(RunJournal.stream(env.run_id));
  return { env, events };
}

describe("model failures", () => {
  it("retries a rate limit with backoff, records every failure, then goes on", async () => {
    const model = fakeModel([
      failure("rate_limit", true),
      failure("provider", true),
      {
        ok: true,
        text: "",
        toolCalls: [{ id: "c1", name: "write_file", args: { path: "answer.txt", content: "42\n" } }],
        usage,
        finishReason: "tool-calls",
      },
      { ok: true, text: "done", toolCalls: [], usage, finishReason: "stop" },
    ]);
    const { env, events } = await run(model);
    expect(env.status).toBe("SUCCESS");
    expect(model.requests).toHaveLength(4);
    const failed = events.filter((e) => e.type === "model_failed").map((e) => e.data);
    expect(failed).toMatchObject([
      { kind: "rate_limit", retry: 0, backoff_ms: 5, retryable: true },
      { kind: "provider", retry: 1, backoff_ms: 5, retryable: true },
    ]);
    const responded = events.filter((e) => e.type === "model_responded");
    expect(responded.map((e) => (e.data as { input_tokens: number }).input_tokens)).toEqual([10, 10]);
    expect(responded.map((e) => (e.data as { cost_usd: number }).cost_usd)).toEqual([0.001, 0.001]);
  });

  it("stops retrying at the cap and ends in TOOL_FAILURE naming the error", async () => {
    const model = fakeModel([1, 2, 3, 4, 5].map(() => failure("rate_limit", true)));
    const { env, events } = await run(model);
    expect(model.requests).toHaveLength(4);
    expect(events.filter((e) => e.type === "model_failed")).toHaveLength(4);
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toContain("rate_limit");
    expect(env.reason).toContain("after 3 retries");
  });

  it("does not retry an error that is not retryable (auth, refusal)", async () => {
    for (const kind of ["auth", "refusal"] as const) {
      const model = fakeModel([failure(kind, false), failure(kind, false)]);
      const { env } = await run(model);
      expect(model.requests).toHaveLength(1);
      expect(env.status).toBe("TOOL_FAILURE");
      expect(env.reason).toContain(kind);
    }
  });
});
