// Hand-made envelopes for the report renderers' tests (the shape of src/core/run/envelope.ts).
import type { Envelope } from "../../src/core/run/envelope.js";

type Gate = Envelope["gates"][number];

/** A gate result; passed unless told otherwise. */
export function gate(id: string, over: Partial<Gate> = {}): Gate {
  return {
    id,
    attempt: 1,
    passed: true,
    exit_code: 0,
    timed_out: false,
    error: null,
    duration_ms: 100,
    log_excerpt: "",
    ...over,
  };
}

/** An envelope; SUCCESS with no gates unless told otherwise. */
export function envelope(over: Partial<Envelope> = {}): Envelope {
  return {
    run_id: "20260101-000000-abcdef",
    task_id: "demo-task",
    status: "SUCCESS",
    reason: "every gate passed on attempt 1",
    attempts: 1,
    gates: [],
    findings: [],
    claims: [],
    sandbox: "bubblewrap",
    audit: {
      self_correction_count: 0,
      latency_ms: 1500,
      hedge_warning: false,
      cost: null,
      tokens: null,
      event_count: 12,
    },
    ...over,
  };
}
