import { afterEach, describe, expect, it, vi } from "vitest";
import { progressReporter } from "../../../src/cli/output/progress.js";
import type { Envelope } from "../../../src/core/run/envelope.js";

afterEach(() => {
  vi.useRealTimers();
});

/** A terminal-like stream that records what was written. */
function fakeTerminal() {
  const writes: string[] = [];
  return { writes, out: { isTTY: true, write: (s: string) => writes.push(s) > 0 } };
}

const step = (turn: number, s: number, tool?: string) => ({
  turn,
  step: s,
  ...(tool ? { tool } : {}),
  tokens: 0,
  costUsd: 0,
});

describe("progressReporter on a terminal", () => {
  it("a gate started while an agent step's live line is drawn replaces it: nothing is drawn after the verdict", () => {
    vi.useFakeTimers();
    const { writes, out } = fakeTerminal();
    const r = progressReporter(out as never);
    r.agentStep?.(step(1, 5));
    r.gateStarted?.(1, "unit");
    r.runFinished?.({
      status: "SUCCESS",
      attempts: 1,
      reason: "all 1 gates passed on attempt 1",
    } as Envelope);
    const after = writes.length;
    vi.advanceTimersByTime(5_000);
    expect(writes.length).toBe(after);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("close() stops a live line that no finishing event ended (an error, an interrupt)", () => {
    vi.useFakeTimers();
    const { writes, out } = fakeTerminal();
    const r = progressReporter(out as never);
    r.builderStarted?.(1, "./agent.sh");
    vi.advanceTimersByTime(1_000);
    expect(writes.length).toBeGreaterThan(1);
    r.close();
    const after = writes.length;
    vi.advanceTimersByTime(5_000);
    expect(writes.length).toBe(after);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("many steps in a row keep one timer at most", () => {
    vi.useFakeTimers();
    const { out } = fakeTerminal();
    const r = progressReporter(out as never);
    for (let i = 1; i <= 20; i++) {
      r.agentStep?.(step(1, i));
      r.agentStep?.(step(1, i, "bash"));
      r.gateStarted?.(1, `g${i}`);
    }
    expect(vi.getTimerCount()).toBe(1);
    r.close();
    expect(vi.getTimerCount()).toBe(0);
  });
});
