// Every event built from builder-, gate- or model-controlled material fits its schema,
// whatever that material is (huge, all newlines, NUL, lone surrogates, control characters).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type EventData, LoopgateEvent } from "../../../src/core/events/loopgate-event.js";
import { boundName, boundText, cleanText, LIMITS } from "../../../src/core/kernel/bounded.js";
import { planGateChanges } from "../../../src/core/observation/gate-change-plan.js";
import { createObservation, type ObservedEntry } from "../../../src/core/observation/observation.js";
import {
  builderRecord,
  claimRecord,
  findingRecord,
  gateRunRecord,
  pathList,
} from "../../../src/core/run/attempt-records.js";
import { buildRequiredFix } from "../../../src/core/run/required-fix.js";
import { decide, type EventBody, foldRun, type RunCommand } from "../../../src/core/run/run-decider.js";

/** Strings a hostile builder would print: long, newline-heavy, NUL, lone surrogates, escapes, emoji. */
const piece = fc.oneof(
  fc.string({ maxLength: 50 }),
  fc.string({ unit: "binary", maxLength: 50 }),
  fc.constantFrom("\n", "\r\n", "\u0000", "\uD800", "\uDC00", "\x1b[2J", "\x9b", "😀", "\t", "\x7f"),
  fc.integer({ min: 1, max: 9000 }).map((n) => "\n".repeat(n)),
  fc.integer({ min: 1, max: 9000 }).map((n) => "x".repeat(n)),
  fc.integer({ min: 1, max: 3000 }).map((n) => "😀".repeat(n)),
);
const hostile = fc.array(piece, { maxLength: 6 }).map((a) => a.join(""));

const at = "2026-12-01T00:00:00.000Z";
function valid(body: EventBody): boolean {
  const r = LoopgateEvent.safeParse({ ...body, id: "e1", meta: { at, origin: "runtime" } });
  if (!r.success) throw new Error(`${body.type}: ${r.error.message}`);
  return true;
}
const wellFormed = (s: string) => !/[\uD800-\uDFFF]/.test(s.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ""));

const started: RunCommand = {
  type: "start_run",
  data: {
    task_id: "t",
    task_path: "/t/task.yaml",
    task_digest: "d",
    builder: { kind: "noop" },
    max_attempts: 3,
    gates: [{ id: "g", kind: "subprocess" }],
    sandbox: "none",
    run_dir: "/r",
  },
};

const gateData = (log: string, summary: string, note: string): EventData<"gate_run_finished"> => ({
  attempt: 1,
  gate_id: "g",
  passed: false,
  exit_code: 1,
  timed_out: false,
  error: null,
  duration_ms: 1,
  log_excerpt: log,
  summary,
  tamper: {
    check: "none",
    runner: null,
    channel: null,
    canary: { auto: false, declared: false },
    tests: null,
    floor: { min: 1, source: "default" },
    note,
  },
});

describe("boundText", () => {
  it("keeps head and tail, says how many characters it cut, never exceeds max, never leaves half a pair", () => {
    fc.assert(
      fc.property(
        hostile,
        fc.integer({ min: 0, max: 5000 }),
        fc.double({ min: 0, max: 1 }),
        (s, max, head) => {
          const out = boundText(s, max, { head });
          expect(out.length).toBeLessThanOrEqual(max);
          expect(out.includes("\u0000")).toBe(false);
          expect(wellFormed(out)).toBe(true);
          const clean = cleanText(s);
          if (clean.length <= max) expect(out).toBe(clean);
          else if (max > 60) {
            const m = /\n\[… (\d+) characters cut …\]\n/.exec(out);
            expect(m).not.toBeNull();
            // What is kept plus what was cut is the whole cleaned text.
            expect(out.length - (m?.[0].length ?? 0) + Number(m?.[1])).toBe(clean.length);
            expect(clean.startsWith(out.slice(0, m?.index))).toBe(true);
            expect(clean.endsWith(out.slice((m?.index ?? 0) + (m?.[0].length ?? 0)))).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("says the cut in words a reader can count", () => {
    expect(boundText("a".repeat(100) + "b".repeat(100), 100)).toBe(
      `${"a".repeat(37)}\n[… 126 characters cut …]\n${"b".repeat(37)}`,
    );
    expect(boundText("short", 100)).toBe("short");
    expect(cleanText("a\u0000b\uD800c")).toBe("a\\0b\uFFFDc");
    expect(boundName("one\ntwo")).toBe("one\\ntwo");
  });
});

describe("every event constructor fed from outside validates against its schema", () => {
  it("builder_finished and claim_recorded", () => {
    fc.assert(
      fc.property(hostile, hostile, (out, sig) => {
        valid({
          type: "builder_finished",
          data: builderRecord(1, { exitCode: 1, signal: sig, timedOut: false, durationMs: 1, output: out }),
        });
        const c = claimRecord(1, out);
        if (c) valid({ type: "claim_recorded", data: c });
      }),
    );
  });

  it("gate_run_finished", () => {
    fc.assert(
      fc.property(hostile, hostile, hostile, (log, summary, note) => {
        valid({ type: "gate_run_finished", data: gateRunRecord(gateData(log, summary, note)) });
      }),
    );
  });

  it("finding_recorded, workspace_changed", () => {
    fc.assert(
      fc.property(hostile, hostile, fc.array(hostile, { maxLength: 300 }), (path, detail, paths) => {
        valid({
          type: "finding_recorded",
          data: findingRecord({ attempt: 1, code: "x", severity: "blocking", path, detail }),
        });
        const list = pathList(paths);
        valid({
          type: "workspace_changed",
          data: { attempt: 1, added: list, modified: list, removed: list, type_changed: list },
        });
      }),
      { numRuns: 30 },
    );
  });

  it("planGateChanges findings (symlink targets, FIFOs, protected paths with hostile names)", () => {
    const name = hostile.map((s) => `lib/${s.replace(/\//g, "_") || "x"}`);
    fc.assert(
      fc.property(fc.uniqueArray(name, { maxLength: 15 }), hostile, (paths, target) => {
        const pristine = createObservation([{ path: "lib", type: "dir", mode: 0o755, size: 0, hash: "" }]);
        const entries: ObservedEntry[] = [{ path: "lib", type: "dir", mode: 0o755, size: 0, hash: "" }];
        for (const [i, p] of paths.entries())
          entries.push(
            i % 2
              ? { path: p, type: "symlink", mode: 0o777, size: 1, hash: "h", target: `/${target}` }
              : { path: p, type: "other", mode: 0, size: 0, hash: "" },
          );
        const plan = planGateChanges(pristine, createObservation(entries), {
          deliverables: ["lib/**"],
          protected: [],
        });
        for (const f of plan.findings) valid({ type: "finding_recorded", data: { attempt: 1, ...f } });
      }),
      { numRuns: 40 },
    );
  });

  it("required_fix, attempt_started, infrastructure_failed and run_finished through the decider", () => {
    fc.assert(
      fc.property(
        fc.array(hostile, { minLength: 1, maxLength: 6 }),
        fc.array(fc.tuple(hostile, hostile), { maxLength: 30 }),
        hostile,
        (logs, findings, reason) => {
          const gates = logs.map((l, i) => gateRunRecord({ ...gateData(l, "failed", ""), gate_id: `g${i}` }));
          const fs = findings.map(([p, d]) =>
            findingRecord({
              attempt: 1,
              code: "unsupported_entry",
              severity: "blocking",
              path: p,
              detail: d,
            }),
          );
          const fix = buildRequiredFix({
            attempt: 1,
            gates,
            feedback: Object.fromEntries(gates.map((g) => [g.gate_id, "log" as const])),
            findings: fs,
            deliverables: [reason],
          });
          expect(fix.length).toBeLessThanOrEqual(LIMITS.requiredFix);
          // A run whose first attempt failed on those findings, then a hostile infrastructure reason.
          const events: EventBody[] = [];
          const apply = (c: RunCommand) => {
            for (const b of decide(c, foldRun(events))) {
              valid(b);
              events.push(b);
            }
          };
          apply(started);
          apply({ type: "start_attempt", requiredFix: null });
          for (const f of fs) apply({ type: "record_finding", data: f });
          apply({ type: "finish_attempt" });
          apply({ type: "issue_required_fix", text: fix + reason });
          apply({ type: "start_attempt", requiredFix: fix + reason });
          apply({ type: "fail_infrastructure", reason });
          apply({ type: "finish_run" });
          expect(foldRun(events).finished?.status).toBe("TOOL_FAILURE");
        },
      ),
      { numRuns: 40 },
    );
  });

  it("run_finished with a reason built from many long blocking finding paths", () => {
    fc.assert(
      fc.property(fc.array(hostile, { minLength: 1, maxLength: 12 }), (paths) => {
        const events: EventBody[] = [];
        const apply = (c: RunCommand) => {
          for (const b of decide(c, foldRun(events))) events.push(b);
        };
        apply({ ...started, data: { ...started.data, max_attempts: 1 } } as RunCommand);
        apply({ type: "start_attempt", requiredFix: null });
        for (const p of paths)
          apply({
            type: "record_finding",
            data: findingRecord({ attempt: 1, code: "c", severity: "blocking", path: p, detail: "d" }),
          });
        apply({ type: "finish_attempt" });
        apply({ type: "finish_run" });
        const last = events.at(-1) as EventBody;
        valid(last);
        expect(last.type === "run_finished" && last.data.status).toBe("ESCALATED");
      }),
      { numRuns: 40 },
    );
  });
});
