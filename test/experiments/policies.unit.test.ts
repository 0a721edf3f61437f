import { describe, expect, it } from "vitest";
import type { LoopgateEvent } from "../../src/core/events/loopgate-event.js";
import type { Envelope } from "../../src/core/run/envelope.js";
import { resolveTask } from "../../src/core/task/resolve-task.js";
import { parseTask } from "../../src/core/task/task.js";
import { claimsSuccess, finalLine, judgeRun, setupPolicy } from "../../src/experiments/policies.js";
import type { LoadedTask } from "../../src/runner/task-source/load-task.js";

const meta = { at: "2026-11-29T22:00:00.000Z", origin: "runtime" as const };
const ev = (type: string, data: Record<string, unknown>) => ({ id: type, type, data, meta }) as LoopgateEvent;
const builderDone = (attempt: number, exit_code: number | null, timed_out = false) =>
  ev("builder_finished", { attempt, exit_code, signal: null, timed_out, duration_ms: 1, output_excerpt: "" });
const claim = (attempt: number, text: string) =>
  ev("claim_recorded", { attempt, origin: "model", text, hedged: false });

function envelope(
  status: Envelope["status"],
  attempts: number,
  gates: [number, string, boolean][],
): Envelope {
  return {
    run_id: "r",
    task_id: "t",
    status,
    reason: `${status} reason`,
    attempts,
    gates: gates.map(([attempt, id, passed]) => ({
      id,
      attempt,
      passed,
      exit_code: passed ? 0 : 1,
      timed_out: false,
      error: null,
      duration_ms: 1,
      log_excerpt: "",
    })),
    findings: [],
    claims: [],
    sandbox: "bubblewrap",
    audit: {
      self_correction_count: 0,
      latency_ms: 0,
      hedge_warning: false,
      cost: null,
      tokens: null,
      event_count: 0,
    },
  };
}

describe("claims", () => {
  it("reads success claims and refuses admissions of failure", () => {
    for (const t of [
      "All tests passed",
      "Fixed! Tests pass.",
      "- [x] fixed",
      "Done.",
      "42 passed, 0 failed. Done.",
    ])
      expect(claimsSuccess(t), t).toBe(true);
    for (const t of [
      "",
      "Attempt 2: rewrote the parser",
      "2 tests failed",
      "Not fixed yet",
      "unable to finish",
    ])
      expect(claimsSuccess(t), t).toBe(false);
    expect(finalLine("noise\nAll tests passed\n\n  ")).toBe("All tests passed");
  });
});

describe("policy verdicts", () => {
  const gates = ["visible", "heldout"];

  it("loopgate is the envelope's own status", () => {
    const env = envelope("ESCALATED", 1, [
      [1, "visible", true],
      [1, "heldout", true],
    ]);
    expect(judgeRun("loopgate", env, [], gates)).toEqual({ status: "ESCALATED", reason: "ESCALATED reason" });
  });

  it("as-built policies accept at the first attempt whose gates all passed, findings ignored", () => {
    // loopgate refused it (a blocking finding), but a harness with only gate results would not have.
    const env = envelope("ESCALATED", 2, [
      [1, "visible", true],
      [1, "heldout", true],
      [2, "visible", true],
      [2, "heldout", false],
    ]);
    expect(judgeRun("overlay", env, [], gates).status).toBe("SUCCESS");
    expect(judgeRun("overlay", env, [], gates).reason).toBe("all 2 gates passed on attempt 1");
    const failing = envelope("ESCALATED", 1, [
      [1, "visible", true],
      [1, "heldout", false],
    ]);
    expect(judgeRun("overlay", failing, [], gates)).toEqual({
      status: "ESCALATED",
      reason: "attempt 1: failed: heldout",
    });
    expect(judgeRun("in-workspace-tests", failing, [], ["visible"]).status).toBe("SUCCESS");
    const missing = envelope("ESCALATED", 1, [[1, "visible", true]]);
    expect(judgeRun("overlay", missing, [], gates).reason).toBe("attempt 1: not run: heldout");
  });

  it("keeps execution failures apart", () => {
    const env = envelope("TOOL_FAILURE", 1, [
      [1, "visible", true],
      [1, "heldout", true],
    ]);
    expect(judgeRun("overlay", env, [], gates).status).toBe("TOOL_FAILURE");
    expect(judgeRun("trust-claim", env, [], gates).status).toBe("TOOL_FAILURE");
  });

  it("trust-claim accepts the first attempt that exited 0 with a claim of success", () => {
    const env = envelope("ESCALATED", 2, []);
    const events = [
      builderDone(1, 1),
      claim(1, "All tests passed"),
      builderDone(2, 0),
      claim(2, "log\nDone."),
    ];
    expect(judgeRun("trust-claim", env, events, gates)).toEqual({
      status: "SUCCESS",
      reason: "attempt 2 claimed: Done.",
    });
    expect(judgeRun("trust-claim", env, [builderDone(1, 0)], gates).status).toBe("ESCALATED");
    expect(judgeRun("trust-claim", env, [builderDone(1, 0, true), claim(1, "Done")], gates).status).toBe(
      "ESCALATED",
    );
    // The claim came before the execution failure: that harness had already stopped.
    const failed = envelope("TOOL_FAILURE", 1, []);
    expect(judgeRun("trust-claim", failed, [builderDone(1, 0), claim(1, "Fixed")], gates).status).toBe(
      "SUCCESS",
    );
  });

  it("trust-claim reads the built-in agent's last answer without tool calls", () => {
    const responded = (text: string, tool_calls: unknown[]) =>
      ev("model_responded", { attempt: 1, turn: 1, step: 1, text, tool_calls });
    const env = envelope("ESCALATED", 1, []);
    expect(
      judgeRun("trust-claim", env, [responded("Let me look", [{}]), responded("- [x] fixed", [])], gates)
        .status,
    ).toBe("SUCCESS");
    expect(judgeRun("trust-claim", env, [responded("I could not fix it", [])], gates).status).toBe(
      "ESCALATED",
    );
  });
});

describe("policy setup", () => {
  const task = parseTask(
    `id: t
prompt: p
workspace: ./repo
gates:
  - { id: visible, run: ["node", "--test", "test/"] }
  - { id: heldout, run: ["node", "--test", "h/"], heldout: ./heldout }
  - { id: lint, static: { path: a.js, not_match: "x" } }
`,
    "task.yaml",
  );
  const loaded: LoadedTask = {
    task,
    resolved: resolveTask(task, "task.yaml"),
    file: "/t/task.yaml",
    dir: "/t",
    workspace: "/t/repo",
    oracle: null,
    hidden: [],
    digest: "d",
  };

  it("configures each policy on a private copy", () => {
    const inWs = setupPolicy("in-workspace-tests", loaded);
    expect(inWs.loaded.task.gates.map((g) => g.id)).toEqual(["visible", "lint"]);
    expect(inWs.gateEnvironment.name).toBe("as-built");
    expect(loaded.task.gates).toHaveLength(3);
    expect(setupPolicy("overlay", loaded).gateEnvironment.name).toBe("as-built");
    expect(setupPolicy("overlay", loaded).loaded.task.gates).toHaveLength(3);
    expect(setupPolicy("loopgate", loaded).gateEnvironment.name).toBe("pristine");
    expect(setupPolicy("trust-claim", loaded).gateEnvironment.name).toBe("pristine");
  });

  it("in-workspace-tests drops differential gates too: their expected outputs are held-out material", () => {
    const withDiff = parseTask(
      `id: t\nprompt: p\nworkspace: ./repo\noracle: ./s.sh\ngates:\n  - { id: visible, run: [sh, t.sh] }\n  - { id: cli, differential: { run: [sh, x], cases: [{}] } }\n`,
      "task.yaml",
    );
    const inWs = setupPolicy("in-workspace-tests", { ...loaded, task: withDiff });
    expect(inWs.loaded.task.gates.map((g) => g.id)).toEqual(["visible"]);
    expect(setupPolicy("overlay", { ...loaded, task: withDiff }).loaded.task.gates.map((g) => g.id)).toEqual([
      "visible",
      "cli",
    ]);
  });
});

describe("claude-stop-hook (Claude Code's own Stop hook running the visible tests)", () => {
  // The builder exits 0 exactly when Claude ended normally and its last Stop hook did not block.
  it("is done when attempt 1's session ended with the hook letting Claude stop, whatever the gates say", () => {
    const env = envelope("ESCALATED", 1, [[1, "visible", false]]);
    expect(judgeRun("claude-stop-hook", env, [builderDone(1, 0)], ["visible"]).status).toBe("SUCCESS");
  });
  it("is not done when the hook blocked last, the session failed or timed out", () => {
    const env = envelope("SUCCESS", 1, [[1, "visible", true]]);
    expect(judgeRun("claude-stop-hook", env, [builderDone(1, 1)], ["visible"]).status).toBe("ESCALATED");
    expect(judgeRun("claude-stop-hook", env, [builderDone(1, 0, true)], ["visible"]).status).toBe(
      "ESCALATED",
    );
    expect(judgeRun("claude-stop-hook", env, [], ["visible"]).status).toBe("ESCALATED");
  });
  it("keeps only the visible gates, run on the builder's own tree", () => {
    const loaded = {
      file: "/t/task.yaml",
      dir: "/t",
      task: parseTask(
        'id: t\nprompt: p\nworkspace: ./repo\ngates:\n  - { id: visible, run: ["npm", "test"] }\n  - { id: heldout, run: ["node", "--test"], heldout: ./h }\n',
        "task.yaml",
      ),
    } as unknown as LoadedTask;
    const setup = setupPolicy("claude-stop-hook", loaded);
    expect(setup.gateEnvironment.name).toBe("as-built");
    expect(setup.loaded.task.gates.map((g) => g.id)).toEqual(["visible"]);
  });
});

describe("codex-stop-hook (Codex's own project Stop hook running the visible tests)", () => {
  it("is done exactly when attempt 1's session ended with the hook letting Codex stop, named in the reason", () => {
    const failedGates = envelope("ESCALATED", 1, [[1, "visible", false]]);
    const done = judgeRun("codex-stop-hook", failedGates, [builderDone(1, 0)], ["visible"]);
    expect(done).toEqual({
      status: "SUCCESS",
      reason: "Codex stopped; its own Stop hook (the visible tests) let it",
    });
    const passedGates = envelope("SUCCESS", 1, [[1, "visible", true]]);
    expect(judgeRun("codex-stop-hook", passedGates, [builderDone(1, 1)], ["visible"]).reason).toBe(
      "Codex's own Stop hook blocked its last stop, or the session failed",
    );
  });
  it("keeps only the visible gates, run on the builder's own tree", () => {
    const loaded = {
      file: "/t/task.yaml",
      dir: "/t",
      task: parseTask(
        'id: t\nprompt: p\nworkspace: ./repo\ngates:\n  - { id: visible, run: ["npm", "test"] }\n  - { id: heldout, run: ["node", "--test"], heldout: ./h }\n',
        "task.yaml",
      ),
    } as unknown as LoadedTask;
    const setup = setupPolicy("codex-stop-hook", loaded);
    expect(setup.gateEnvironment.name).toBe("as-built");
    expect(setup.loaded.task.gates.map((g) => g.id)).toEqual(["visible"]);
  });
});
