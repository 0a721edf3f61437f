import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentDeps, runAgentAttempt } from "../../src/agent/agent-loop.js";
import { scriptedModel } from "../../src/agent/models/scripted-model.js";
import { defaultTools } from "../../src/agent/tools/tool-registry.js";
import type { LoopgateEvent } from "../../src/core/events/loopgate-event.js";

// The agent-tools sandbox self-test runs before an attempt relies on the sandbox: when bubblewrap cannot
// be found the attempt records nothing and ends TOOL_FAILURE with the remedy; a later attempt tries again.

let ws: string;
beforeAll(async () => {
  ws = await mkdtemp(join(tmpdir(), "loopgate-agent-selftest-"));
});
afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
});

function deps(log: LoopgateEvent[]): AgentDeps {
  return {
    attempt: 1,
    prompt: "p",
    system: "s",
    model: scriptedModel([{ text: "Done." }]),
    tools: defaultTools,
    toolCtx: { workspace: ws, sandbox: "bubblewrap", network: false, timeoutMs: 10_000 },
    goal: null,
    budget: { turns: 1, stepsPerTurn: 5, modelRetries: 0 },
    record: async (event, origin) => {
      log.push({
        id: `e${log.length}`,
        ...event,
        meta: { at: new Date(0).toISOString(), origin },
      } as LoopgateEvent);
    },
    events: () => log,
    observeAfter: async () => null,
    probe: async () => ({ holds: false, detail: "" }),
    runStartedAt: 0,
    now: () => 0,
    sleep: async () => {},
  };
}

const start = {
  id: "s",
  type: "attempt_started",
  data: { attempt: 1, required_fix: null },
  meta: { at: new Date(0).toISOString(), origin: "runtime" },
} as LoopgateEvent;

describe("the agent-tools sandbox self-test", () => {
  it("fails closed before the first model request, with the remedy, and is tried again next time", async () => {
    const path = process.env.PATH;
    const log = [start];
    process.env.PATH = "/nonexistent";
    let outcome: Awaited<ReturnType<typeof runAgentAttempt>>;
    try {
      outcome = await runAgentAttempt(deps(log));
    } finally {
      process.env.PATH = path;
    }
    expect(outcome.kind).toBe("tool_failure");
    expect(outcome.kind === "tool_failure" ? outcome.reason : "").toContain("apt-get install -y bubblewrap");
    expect(log).toEqual([start]);
    // The remedy applied (bwrap found again): the same attempt now runs.
    const again = [start];
    expect(await runAgentAttempt(deps(again))).toEqual({ kind: "stopped", text: "Done." });
    expect(again.map((e) => e.type)).toEqual(["attempt_started", "model_responded"]);
  });
});
