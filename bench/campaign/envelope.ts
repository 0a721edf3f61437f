// What must match between a resumed run and one never interrupted: the rule of the resume tests
// (test/e2e/resume.e2e.test.ts, worker.e2e.test.ts): the envelope less its run id, timings, event
// count, raw gate logs, and the names of loopgate's canary tests (fresh random words in every run, so also
// in the note that names them).

import type { RecordedEvent } from "../../src/core/events/loopgate-event.js";
import { type Envelope, projectEnvelope } from "../../src/core/run/envelope.js";

export function comparable(env: Envelope): unknown {
  const { run_id: _id, audit, gates, ...rest } = env;
  const { latency_ms: _l, event_count: _c, ...auditRest } = audit;
  return { ...rest, audit: auditRest, gates: gates.map(comparableGate) };
}

function comparableGate(gate: Envelope["gates"][number]): unknown {
  const { duration_ms: _d, log_excerpt: _x, exit_code_note: _n, ...g } = gate;
  if (!g.tamper?.canary) return g;
  const { tests: _t, ...canary } = g.tamper.canary;
  return { ...g, tamper: { ...g.tamper, canary } };
}

/** The run id of a run stream (`run-<id>`), or null for any other stream. */
export const runIdOf = (stream: string): string | null =>
  stream.startsWith("run-") ? stream.slice(4) : null;

/** The envelope the log says run `runId` ended with; null while it has not finished. */
export function envelopeOf(runId: string, events: readonly RecordedEvent[]): Envelope | null {
  return projectEnvelope(
    runId,
    events.filter((e) => e.stream === `run-${runId}`),
  );
}
