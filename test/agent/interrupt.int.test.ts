import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentBuilder } from "../../src/agent/agent-builder.js";
import type { ModelAdapter, ModelRequest, ModelResponse } from "../../src/agent/models/model.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { RunJournal } from "../../src/runner/stream/run-journal.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { makeTask } from "../runner/task-fixture.js";

// The interrupt reaches the model request and the retry backoff: the run is recorded as interrupted
// at once, nothing the interrupt cut short is recorded as a model failure, and no budget cap is involved.

const taskYaml = `id: interrupt-model
prompt: Make answer.txt say 42.
workspace: ./repo
gates:
  - id: answer
    static: { path: answer.txt, match: "^42$" }
budget: { attempts: 1 }
`;

const agent = (model: ModelAdapter): AgentBuilder => ({
  descriptor: { kind: "agent", command: model.id },
  agent: { model },
});

let localDir: string;
let store: SqliteEventStore;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-interrupt-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  await rm(localDir, { recursive: true, force: true });
});

/** Runs the task with `model`, aborting with SIGINT once `model` says it was asked (`asked`). */
async function interrupted(model: ModelAdapter & { asked: Promise<void> }) {
  const t = await makeTask({ taskYaml, repo: { "answer.txt": "41\n" } });
  const controller = new AbortController();
  void model.asked.then(() => controller.abort("SIGINT"));
  const started = Date.now();
  const env = await runTask({
    loaded: loadTask(t.file),
    builder: agent(model),
    store,
    localDir,
    sandbox: "bubblewrap",
    signal: controller.signal,
  });
  const events = await store.readStream(RunJournal.stream(env.run_id));
  return { env, events, ms: Date.now() - started };
}

function deferred() {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("an interrupt during the built-in agent's model work", () => {
  it("aborts a model request in flight (the provider sees the signal)", async () => {
    const asked = deferred();
    const requests: ModelRequest[] = [];
    const model = {
      id: "fake:hanging",
      asked: asked.promise,
      generate(req: ModelRequest): Promise<ModelResponse> {
        requests.push(req);
        asked.resolve();
        // A provider that answers only when aborted, as the AI SDK does with abortSignal.
        return new Promise((res) => {
          req.signal?.addEventListener("abort", () =>
            res({ ok: false, error: { kind: "timeout", retryable: false, message: "aborted" } }),
          );
        });
      },
    };
    const { env, events, ms } = await interrupted(model);
    expect(requests[0]?.signal).toBeDefined();
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toContain("interrupted (SIGINT)");
    expect(events.map((e) => e.type)).not.toContain("model_failed");
    expect(ms).toBeLessThan(30_000);
  });

  it("cuts a retry's backoff short", async () => {
    const asked = deferred();
    let calls = 0;
    const model = {
      id: "fake:rate-limited",
      asked: asked.promise,
      async generate(): Promise<ModelResponse> {
        calls++;
        // After the failure is returned (and recorded), the loop sleeps for a minute.
        setTimeout(() => asked.resolve(), 200);
        return {
          ok: false,
          error: { kind: "rate_limit", retryable: true, message: "slow down", retryAfterMs: 60_000 },
        };
      },
    };
    const { env, events, ms } = await interrupted(model);
    expect(calls).toBe(1);
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toContain("interrupted (SIGINT)");
    expect(events.filter((e) => e.type === "model_failed")).toHaveLength(1);
    // Far below the 30 s backoff cap the loop would otherwise have slept.
    expect(ms).toBeLessThan(25_000);
  });
});
