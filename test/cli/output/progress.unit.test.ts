import { describe, expect, it } from "vitest";
import { progressReporter } from "../../../src/cli/output/progress.js";
import type { GateResult } from "../../../src/gates/gate.js";

/** A stream that is not a terminal and keeps what was written. */
function sink() {
  const chunks: string[] = [];
  const out = { isTTY: false, write: (s: string) => chunks.push(s) > 0 } as unknown as NodeJS.WriteStream;
  return { out, text: () => chunks.join("") };
}

const failed: GateResult = {
  passed: false,
  exit_code: 1,
  timed_out: false,
  error: null,
  duration_ms: 120,
  log_excerpt: "ok 1 - a\nnot ok 2 - keeps accents\n# pass 1\n",
  summary: "exit 1",
  infrastructure: null,
};

describe("progress off a terminal", () => {
  it("prints one line per phase: builder started/finished, each tool, gate started/finished", () => {
    const s = sink();
    const r = progressReporter(s.out);
    r.attemptStarted?.(1, 3);
    r.builderStarted?.(1, "sh ./agent.sh");
    r.builderOutput?.("not shown without --verbose\n");
    r.builderFinished?.(1, { exitCode: 0, timedOut: false, durationMs: 20_000 });
    r.agentStep?.({ turn: 1, step: 2, tool: "bash", tokens: 10, costUsd: 0 });
    r.gateStarted?.(1, "unit");
    r.gateFinished?.(1, "unit", failed);
    const lines = s.text().split("\n");
    expect(lines).toEqual([
      "attempt 1/3",
      "  builder started: sh ./agent.sh",
      "  builder exited 0 after 20.0s",
      "  turn 1 step 2 · running tool bash · 10 tokens · $0.0000",
      "  gate unit started",
      "  ✗ gate unit 0.1s exit 1",
      "      | not ok 2 - keeps accents",
      "      | … 3 lines in all",
      "",
    ]);
    expect(s.text()).not.toContain("\x1b");
  });

  it("names the command that shows a failed gate's whole log, with the run's real id", () => {
    const s = sink();
    const r = progressReporter(s.out, { hints: { me: "npx loopgate", storeArg: "" } });
    r.runStarted?.({ runId: "20261203-000000-abc123", taskId: "t", maxAttempts: 1, gates: ["unit"] });
    r.gateFinished?.(1, "unit", failed);
    expect(s.text()).toContain(
      "      | … 3 lines in all; the whole log: npx loopgate status 20261203-000000-abc123 --json\n",
    );
  });

  it("with verbose, streams the builder's and each gate's output as prefixed lines", () => {
    const s = sink();
    const r = progressReporter(s.out, { verbose: true });
    r.builderStarted?.(1, "agent");
    r.builderOutput?.("step 1\nstep");
    r.builderOutput?.(" 2\n");
    r.builderOutput?.("no newline at the end");
    r.builderFinished?.(1, { exitCode: 0, timedOut: false, durationMs: 1 });
    r.gateStarted?.(1, "visible-tests");
    r.gateOutput?.("visible-tests", "not ok 2 - keeps accents\n");
    r.gateFinished?.(1, "visible-tests", failed);
    expect(s.text().split("\n")).toEqual([
      "  builder started: agent",
      "builder| step 1",
      "builder| step 2",
      "builder| no newline at the end",
      "  builder exited 0 after 0.0s",
      "  gate visible-tests started",
      "gate visible-tests| not ok 2 - keeps accents",
      "  ✗ gate visible-tests 0.1s exit 1",
      "",
    ]);
  });
});
