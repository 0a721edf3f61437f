import { randomUUID } from "node:crypto";
import type { LoopgateEvent } from "../../src/core/events/loopgate-event.js";

/** A fresh event id; random so that suites sharing a database never collide. */
export function newId(prefix = "ev"): string {
  return `${prefix}-${randomUUID()}`;
}

/** A fresh stream name under `prefix`. */
export function newStream(prefix = "run"): string {
  return `${prefix}-${randomUUID()}`;
}

/** A small valid event; `at` lets a test control `meta.at`. */
export function attemptStarted(id = newId(), at = "2025-03-01T10:00:00.000Z", attempt = 1): LoopgateEvent {
  return {
    id,
    type: "attempt_started",
    data: { attempt, required_fix: null },
    meta: { at, origin: "runtime" },
  };
}

/** `count` valid events with fresh ids. */
export function batch(count: number, prefix = "ev"): LoopgateEvent[] {
  return Array.from({ length: count }, () => attemptStarted(newId(prefix)));
}

/** Events of several shapes (nested objects, nulls, optional fields present and absent, unicode). */
export function assortedEvents(): LoopgateEvent[] {
  return [
    attemptStarted(newId(), "2025-03-01T10:00:00.000+02:00"),
    {
      id: newId(),
      type: "gate_run_finished",
      data: {
        attempt: 2,
        gate_id: "unit",
        passed: false,
        exit_code: null,
        timed_out: true,
        error: "timeout",
        duration_ms: 60_000.5,
        log_excerpt: 'line 1\nlíne 2 — "quoted" \u0000 \u{1F600}',
        summary: "timed out after 60s",
      },
      meta: { at: "2025-03-01T10:01:00Z", origin: "gate" },
    },
    {
      id: newId(),
      type: "finding_recorded",
      data: {
        attempt: 1,
        code: "protected_changed",
        severity: "blocking",
        path: "test/a.test.js",
        detail: "",
      },
      meta: { at: "2025-03-01T10:02:00.000Z", origin: "runtime" },
    },
    {
      id: newId(),
      type: "finding_recorded",
      data: { attempt: 1, code: "hedge", severity: "warning", detail: "no path on this one" },
      meta: { at: "2025-03-01T10:03:00.000Z", origin: "judge" },
    },
    {
      id: newId(),
      type: "workspace_changed",
      data: {
        attempt: 1,
        added: { paths: ["src/ä.ts", "src/b.ts"], total: 2 },
        modified: { paths: [], total: 0 },
        removed: { paths: ["old.txt"], total: 1 },
        type_changed: { paths: [], total: 0 },
      },
      meta: { at: "2025-03-01T10:04:00.000Z", origin: "runtime" },
    },
  ];
}

/** Drops the store's bookkeeping so a read event can be compared with what was appended. */
export function bare(
  event: LoopgateEvent & { stream?: string; revision?: number; position?: number },
): LoopgateEvent {
  const { stream: _s, revision: _r, position: _p, ...rest } = event;
  return rest as LoopgateEvent;
}

/** The error a promise rejects with; fails the test if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`rejected with a non-Error: ${String(error)}`);
  }
  throw new Error("expected the call to reject, but it resolved");
}
