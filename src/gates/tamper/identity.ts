import type { ReportedTest, TestReport } from "./test-report.js";
import { testKey } from "./twins/twin.js";

/** A test written into this run under a name of loopgate's: the original it stands for, and the twin it is (if one). */
export interface EmittedTest {
  /** The original test's key (testKey of its file and path as the task's file defines it). */
  original: string;
  /** For a twin: the literal it changed and to what; null for the renamed original. */
  twin: { site: string; replacement: string } | null;
}

/** The twins and renames written into one gate run: emitted key → what it stands for. */
export type EmittedTests = ReadonlyMap<string, EmittedTest>;

/** A reported test read back through the renames: whose test it is, and which twin it belongs to (if any). */
export interface ResolvedTest {
  /** The identity: the original test's key, plus any subtest names and parameters under it. */
  key: string;
  /** The emitted key of the twin this result belongs to, or null for a real test. */
  twin: string | null;
  outcome: ReportedTest["outcome"];
}

/** A reported test's key as it ran (its file, suites and name). */
export function reportedKey(t: ReportedTest): string {
  return testKey(t.file ?? "", [...t.suites, t.name]);
}

/**
 * Maps a reported test back through the run's renames. The renamed test may be the reported one, an
 * ancestor of it (subtests) or its name without the parameters (`test_x_edge_4[1h-3600]` →
 * `test_x[1h-3600]`).
 */
export function resolveReported(t: ReportedTest, emitted: EmittedTests): ResolvedTest {
  if (t.file === null) {
    // A runner that does not say which file a test came from (tape): the rewritten file's tests are
    // found by their suites and name alone, when exactly one emitted test has them.
    const hit = resolveWithoutFile(t, emitted);
    if (hit) return hit;
  }
  const parts = [t.file ?? "", ...t.suites, t.name];
  for (let n = parts.length; n >= 2; n--) {
    const head = parts.slice(0, n);
    const rest = parts.slice(n);
    const hit = emitted.get(head.join("::"));
    if (hit) return resolved(hit, head.join("::"), rest, "", t.outcome);
    if (n === parts.length) {
      const last = head[n - 1] ?? "";
      const bracket = last.indexOf("[");
      if (bracket > 0) {
        const base = [...head.slice(0, -1), last.slice(0, bracket)].join("::");
        const hitBase = emitted.get(base);
        if (hitBase) return resolved(hitBase, base, rest, last.slice(bracket), t.outcome);
      }
    }
  }
  return { key: parts.join("::"), twin: null, outcome: t.outcome };
}

function resolveWithoutFile(t: ReportedTest, emitted: EmittedTests): ResolvedTest | null {
  const wanted = [...t.suites, t.name].join("::");
  let found: ResolvedTest | null = null;
  for (const [key, e] of emitted) {
    const cut = key.indexOf("::");
    if (cut < 0 || key.slice(cut + 2) !== wanted) continue;
    if (found) return null;
    found = resolved(e, key, [], "", t.outcome);
  }
  return found;
}

function resolved(
  hit: EmittedTest,
  emittedKey: string,
  rest: string[],
  params: string,
  outcome: ReportedTest["outcome"],
): ResolvedTest {
  const key = [`${hit.original}${params}`, ...rest].join("::");
  return { key, twin: hit.twin ? emittedKey : null, outcome };
}

/** What one run says about the identities it had to pass and the twins it had to fail. */
export interface IdentityReading {
  /** Each identity's outcome: passed only when every result under it passed; a test never reported is absent. */
  outcomes: Map<string, ReportedTest["outcome"]>;
  /** Twins (emitted keys) with at least one failed result. */
  twinsFailed: Set<string>;
  /** Twins (emitted keys) every result of which passed. */
  twinsPassed: Set<string>;
}

/** Reads a report through the run's renames. */
export function readIdentities(report: TestReport, emitted: EmittedTests): IdentityReading {
  const outcomes = new Map<string, ReportedTest["outcome"]>();
  const twinOutcomes = new Map<string, ReportedTest["outcome"][]>();
  for (const t of report.tests) {
    const r = resolveReported(t, emitted);
    if (r.twin) {
      twinOutcomes.set(r.twin, [...(twinOutcomes.get(r.twin) ?? []), r.outcome]);
      continue;
    }
    outcomes.set(r.key, worst(outcomes.get(r.key), r.outcome));
  }
  const twinsFailed = new Set<string>();
  const twinsPassed = new Set<string>();
  for (const [twin, list] of twinOutcomes) {
    if (list.includes("failed")) twinsFailed.add(twin);
    else if (list.every((o) => o === "passed")) twinsPassed.add(twin);
  }
  return { outcomes, twinsFailed, twinsPassed };
}

/** failed beats skipped beats passed: one bad result under an identity makes it not passed. */
function worst(a: ReportedTest["outcome"] | undefined, b: ReportedTest["outcome"]): ReportedTest["outcome"] {
  if (a === "failed" || b === "failed") return "failed";
  if (a === "skipped" || b === "skipped") return "skipped";
  return "passed";
}
