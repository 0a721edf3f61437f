// A timer past setTimeout's 2^31-1 ms limit really waits (a "600h" gate timeout must not fire at once).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_TIMER_DELAY_MS, setLongTimeout } from "../../../src/core/kernel/long-timer.js";

const HOUR = 3_600_000;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("setLongTimeout", () => {
  it("fires a 600h timer after 600h, not before", () => {
    const fired = vi.fn();
    setLongTimeout(fired, 600 * HOUR);
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS + 1); // past where a plain setTimeout would stop waiting
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(600 * HOUR - (MAX_TIMER_DELAY_MS + 1) - 1);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1000 * HOUR);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it("fires a short timer like setTimeout, exactly once", () => {
    const fired = vi.fn();
    setLongTimeout(fired, 250);
    vi.advanceTimersByTime(249);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it("clear stops it before the first step ends and after a re-arm", () => {
    const early = vi.fn();
    setLongTimeout(early, 3 * MAX_TIMER_DELAY_MS).clear();
    const late = vi.fn();
    const t = setLongTimeout(late, 3 * MAX_TIMER_DELAY_MS);
    vi.advanceTimersByTime(2 * MAX_TIMER_DELAY_MS + 5); // two re-arms have happened
    t.clear();
    vi.advanceTimersByTime(5 * MAX_TIMER_DELAY_MS);
    expect(early).not.toHaveBeenCalled();
    expect(late).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("an unref'd timer stays unref'd across re-arms (it never keeps the process alive)", () => {
    const armed = vi.spyOn(globalThis, "setTimeout");
    const t = setLongTimeout(() => {}, 2 * MAX_TIMER_DELAY_MS + 10).unref();
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS);
    const handles = armed.mock.results.map((r) => r.value as NodeJS.Timeout);
    expect(handles).toHaveLength(2);
    expect(handles.map((h) => h.hasRef())).toEqual([false, false]);
    t.clear();
  });
});
