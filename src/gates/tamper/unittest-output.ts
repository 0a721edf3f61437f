import { resolve } from "node:path";
import type { TamperPlan } from "./adapter.js";
import { moduleFile, splitDotted } from "./python-modules.js";
import type { ReportedTest, TestOutcome, TestReport } from "./test-report.js";
import { parseUnittestArgs, unittestWords } from "./unittest-args.js";

// `test_x (pkg.mod.Class.test_x)` then ` ... STATUS`, ` ... ` (status later), or nothing (a docstring
// line follows). 3.11 puts the method after the class; 3.10 wrote the class alone.
const START = /^(\S+) \(([^\s()]+)\)(.*)$/;
const SUBTEST = /^ {2}(\S+) \(([^\s()]+)\) .* \.\.\. (FAIL|ERROR)$/;
const STATUS = /^(ok|FAIL|ERROR|skipped .*|expected failure|unexpected success)$/;
const DOC_STATUS = /^.* \.\.\. (ok|FAIL|ERROR|skipped .*|expected failure|unexpected success)$/;
const BLOCK = /^(?:FAIL|ERROR|UNEXPECTED SUCCESS): (\S+) \(([^\s()]+)\)/gm;
const FAILED_IMPORT = "unittest.loader._FailedTest.";
const MODULE_SKIPPED = "unittest.loader.ModuleSkipped.";

function outcomeOf(status: string): TestOutcome {
  if (status === "ok") return "passed";
  if (status.startsWith("skipped") || status === "expected failure") return "skipped";
  return "failed";
}

/** Where module names are looked up: discover's top (or start) folder, then the working folder. */
function roots(plan: TamperPlan): string[] {
  const a = parseUnittestArgs(unittestWords(plan.argv));
  if (typeof a === "string" || (!a.discover && a.names.length)) return [plan.cwd];
  return [resolve(plan.cwd, a.top ?? a.start ?? "."), plan.cwd];
}

/**
 * Reads `python -m unittest -v` output into per-test identities: the verbose lines give each test's
 * status, the FAIL/ERROR blocks at the end name every failure (a subtest's failure fails its test),
 * and a run without `Ran N tests` and its status line is unreadable. Output the tests print between a
 * test's name and its status is skipped; a test whose status is lost that way counts as passed only
 * when the summary's skip count is already accounted for, and as failed otherwise.
 */
export function parseUnittestOutput(output: string, plan: TamperPlan): TestReport | null {
  const ranAll = [...output.matchAll(/^Ran (\d+) tests? in [\d.]+s\s*$/gm)];
  const ran = ranAll[ranAll.length - 1];
  const status = /^(OK|FAILED)(?: \(([^)]*)\))?\s*$/m.exec(output.slice(ran?.index ?? 0));
  if (!ran || !status) return null;
  const field = (name: string) => Number(new RegExp(`${name}=(\\d+)`).exec(status[2] ?? "")?.[1] ?? 0);
  const where = roots(plan);
  const identify = (name: string, qual: string): Omit<ReportedTest, "outcome"> => {
    if (qual.startsWith(FAILED_IMPORT)) return { name, suites: [], file: moduleFile(name, where, plan.cwd) };
    const owner = qual.endsWith(`.${name}`) ? qual.slice(0, -name.length - 1) : qual;
    const s = splitDotted(owner, where, plan.cwd);
    return { name, suites: s.rest, file: s.file };
  };
  const tests = new Map<string, ReportedTest>();
  const silentFiles: string[] = [];
  const unresolved: string[] = [];
  const record = (name: string, qual: string, outcome: TestOutcome | null) => {
    const key = `${name} ${qual}`;
    if (outcome === null) {
      if (!tests.has(key)) unresolved.push(key);
      tests.set(key, { ...identify(name, qual), outcome: "failed" });
      return;
    }
    const known = tests.get(key);
    if (known?.outcome === "failed" && !unresolved.includes(key)) return; // a failure is never undone
    const i = unresolved.indexOf(key);
    if (i >= 0) unresolved.splice(i, 1);
    tests.set(key, { ...identify(name, qual), outcome });
  };
  let pending: { name: string; qual: string; doc: boolean } | null = null;
  for (const line of output.slice(0, ran.index).split("\n")) {
    const sub = SUBTEST.exec(line);
    if (sub) {
      record(sub[1] ?? "", sub[2] ?? "", "failed");
      continue;
    }
    const m = START.exec(line);
    const name = m?.[1] ?? "";
    const qual = m?.[2] ?? "";
    if (m && (qual.endsWith(`.${name}`) || name.startsWith("test"))) {
      if (pending) record(pending.name, pending.qual, null);
      pending = null;
      if (qual.startsWith(MODULE_SKIPPED)) {
        silentFiles.push(moduleFile(name, where, plan.cwd));
        continue;
      }
      const rest = m[3] ?? "";
      const tail = rest.startsWith(" ... ") ? rest.slice(5) : null;
      if (tail !== null && STATUS.test(tail)) record(name, qual, outcomeOf(tail));
      else if (rest === "" || tail !== null) pending = { name, qual, doc: rest === "" };
      continue;
    }
    if (!pending) continue;
    const done = STATUS.exec(line) ?? (pending.doc ? DOC_STATUS.exec(line) : null);
    if (done) {
      record(pending.name, pending.qual, outcomeOf(done[1] ?? ""));
      pending = null;
    } else if (pending.doc && / \.\.\. ?$/.test(line)) pending.doc = false;
  }
  if (pending) record(pending.name, pending.qual, null);
  for (const b of output.slice(0, ran.index).matchAll(BLOCK)) record(b[1] ?? "", b[2] ?? "", "failed");
  // A status lost among the tests' own output: a pass when every skip the summary counts is known.
  const skipped = [...tests.values()].filter((t) => t.outcome === "skipped").length + silentFiles.length;
  if (skipped === field("skipped") + field("expected failures"))
    for (const key of unresolved) {
      const t = tests.get(key);
      if (t) t.outcome = "passed";
    }
  return { channel: "summary", tests: [...tests.values()], silentFiles };
}
