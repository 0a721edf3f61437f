import { type EmittedTests, readIdentities } from "./identity.js";
import { canaryProblem, type PlantedCanary, type TestReport, type TestVerdict } from "./test-report.js";

/** How a gate run is judged by identity: against the task's lock, or recording for it (`loopgate task check`). */
export type IdentityRule = { mode: "enforce"; required: readonly string[] } | { mode: "record" };

/** The twins written into this run: emitted key → what it stands for, and which emitted keys are twins. */
export interface PlantedTwins {
  emitted: EmittedTests;
  twins: readonly string[];
}

/** A verdict by identity, with what the run showed about identities and twins. */
export interface IdentityVerdict extends TestVerdict {
  identity: { required: number; passed: number; notPassed: string[] };
  twins: { planted: number; failed: number } | null;
  /** Recording only: the identities that passed and the twins (emitted keys) that failed. */
  observed?: { passed: string[]; twinsFailed: string[] };
}

const SHOWN = 3;

/**
 * Decides a test run by identity. Enforcing a lock: every recorded test must be reported passed (skipped,
 * missing or failed is not; tests the lock does not name neither help nor hurt), every twin must fail, and
 * the runner must say so by exiting non-zero. A twin that passed beside its passing original is proof the
 * run does not tell right expected values from wrong ones: tampered. Recording: every real test the oracle
 * ran must pass and at least one must; the twins it failed are what later runs draw from.
 */
export function judgeByIdentity(input: {
  report: TestReport | null;
  canary: PlantedCanary | null;
  twins: PlantedTwins | null;
  rule: IdentityRule;
  exitCode: number;
}): IdentityVerdict {
  const { report, canary, twins, rule, exitCode } = input;
  const none = { passed: 0, failed: 0, skipped: 0 };
  const planted = twins?.twins.length ?? 0;
  const identityOf = (required: number, passed: number, notPassed: string[] = []) => ({
    required,
    passed,
    notPassed: notPassed.slice(0, 10),
  });
  if (!report)
    return {
      passed: false,
      error: "unreadable",
      summary: "the test runner's per-test results could not be read, so the run cannot be believed",
      counts: none,
      identity: identityOf(rule.mode === "enforce" ? rule.required.length : 0, 0),
      twins: twins ? { planted, failed: 0 } : null,
    };
  const emitted = twins?.emitted ?? new Map();
  const reading = readIdentities(report, emitted);
  const canaryNames = new Set(canary?.tests ?? []);
  const real = [...reading.outcomes].filter(([key]) => !canaryNames.has(key.split("::").at(-1) ?? ""));
  const counts = {
    passed: real.filter(([, o]) => o === "passed").length,
    failed: real.filter(([, o]) => o === "failed").length,
    skipped: real.filter(([, o]) => o === "skipped").length,
  };
  const twinsRecord = twins ? { planted, failed: reading.twinsFailed.size } : null;
  const base = { counts, twins: twinsRecord };
  const verdict = (
    passed: boolean,
    error: IdentityVerdict["error"],
    summary: string,
    identity: IdentityVerdict["identity"],
  ): IdentityVerdict => ({ ...base, passed, error, summary, identity });

  if (canary) {
    const problem = canaryProblem(report, canary);
    if (problem) return verdict(false, "tampered", problem, identityOf(0, 0));
  }
  // A twin and its original both passing: the run accepted a wrong expected value and the right one alike.
  const bothPassed = [...reading.twinsPassed].filter((t) => {
    const original = emitted.get(t)?.original;
    return original !== undefined && reading.outcomes.get(original) === "passed";
  });

  if (rule.mode === "enforce") {
    const notPassed = rule.required.filter((k) => reading.outcomes.get(k) !== "passed");
    const identity = identityOf(rule.required.length, rule.required.length - notPassed.length, notPassed);
    if (bothPassed.length)
      return verdict(false, "tampered", twinPassedSummary(bothPassed, emitted), identity);
    if (notPassed.length)
      return verdict(
        false,
        null,
        notPassedSummary(notPassed, reading.outcomes, rule.required.length),
        identity,
      );
    const unfailed = twins ? twins.twins.filter((t) => !reading.twinsFailed.has(t)) : [];
    if (unfailed.length) return verdict(false, "tampered", twinPassedSummary(unfailed, emitted), identity);
    if ((planted > 0 || canary) && exitCode === 0) return verdict(false, "tampered", EXIT_ZERO, identity);
    return verdict(
      true,
      null,
      `passed (${rule.required.length} recorded tests${planted ? `, ${planted} twins failed` : ""})`,
      identity,
    );
  }

  const passedKeys = real
    .filter(([, o]) => o === "passed")
    .map(([k]) => k)
    .sort();
  const identity = identityOf(passedKeys.length, passedKeys.length);
  // Recording runs the trusted oracle: a candidate twin it passes changed no expected value and is dropped.
  if (counts.failed > 0) {
    const failed = real.filter(([, o]) => o === "failed").map(([k]) => k);
    return verdict(
      false,
      null,
      `${counts.failed} test(s) failed: ${failed.slice(0, SHOWN).join(", ")}`,
      identity,
    );
  }
  if (counts.passed === 0) return verdict(false, "too_few_tests", "no test passed", identity);
  if ((reading.twinsFailed.size > 0 || canary) && exitCode === 0)
    return verdict(false, "tampered", EXIT_ZERO, identity);
  if (!canary && planted === 0 && exitCode !== 0)
    return verdict(false, null, "the runner reported a failure", identity);
  return {
    ...verdict(
      true,
      null,
      `passed (${counts.passed} tests recorded${planted ? `, ${reading.twinsFailed.size} of ${planted} twins failed` : ""})`,
      identity,
    ),
    observed: { passed: passedKeys, twinsFailed: [...reading.twinsFailed].sort() },
  };
}

const EXIT_ZERO =
  "the runner exited 0 although tests loopgate planted failed: its exit status does not report failures";

function twinPassedSummary(twins: readonly string[], emitted: EmittedTests): string {
  const names = twins.slice(0, SHOWN).map((t) => emitted.get(t)?.original ?? t);
  return (
    `${twins.length} mutated twin(s) did not fail (a copy of a held-out test with a wrong expected value), ` +
    `e.g. of ${names.join(", ")}: the run does not tell right expected values from wrong ones`
  );
}

function notPassedSummary(
  notPassed: readonly string[],
  outcomes: ReadonlyMap<string, string>,
  total: number,
): string {
  const shown = notPassed.slice(0, SHOWN).map((k) => `${k} (${outcomes.get(k) ?? "not reported"})`);
  return `${notPassed.length} of ${total} recorded test(s) did not pass: ${shown.join(", ")}${notPassed.length > SHOWN ? ", …" : ""}`;
}
