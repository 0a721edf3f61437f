import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { judgeTestRun } from "../../../src/gates/tamper/test-report.js";
import { findBwrap } from "../../../src/sandbox/bubblewrap.js";
import { repoModules, runJs } from "./js-run.js";
import { RUNNER_FIXTURES } from "./runner-fixtures.js";

const JS = ["node-test", "vitest", "jest", "mocha", "tape"];
const ready = findBwrap() !== null && existsSync(repoModules);
const floor = { min: 1, source: "default" as const };

/**
 * Code under test that finds the report pipe on its runner's command line (its own, or its parent's for
 * runners that run test files in child processes) and writes a line of its own into it when loaded.
 */
const forger = (exportsAdd: string) =>
  [
    'const fs = require("node:fs");',
    "const args = [...process.argv];",
    'try { args.push(...fs.readFileSync(`/proc/${process.ppid}/cmdline`, "utf8").split("\\0")); } catch {}',
    "for (const a of args) {",
    "  const m = /(?:destination|outputFile(?:\\.json)?|output)=(\\/.+)$/.exec(a);",
    '  if (m) try { fs.writeFileSync(m[1], JSON.stringify({ t: "end", n: 0 }) + "\\n"); } catch {}',
    "}",
    exportsAdd,
    "",
  ].join("\n");

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "lg-js-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

for (const f of RUNNER_FIXTURES.filter((x) => JS.includes(x.runner))) {
  describe.skipIf(!ready)(`${f.runner}, run for real in a read-only sandbox`, () => {
    test("honest, without a canary: the report lists exactly the hand-listed tests as passed", async () => {
      const r = await runJs(root, f.honest, f.argv, { canary: false });
      expect(r.report, r.output).not.toBeNull();
      expect(r.plan.canary).toBeNull();
      expect(r.passed.sort(), r.output).toEqual([...(f.identities ?? [])].sort());
      expect(r.failed).toEqual([]);
      expect(r.exitCode).toBe(0);
    });

    test("honest, with loopgate's canary: its tests all fail, the real ones pass, and the run is believed", async () => {
      const r = await runJs(root, f.honest, f.argv, { canary: true });
      const canary = r.plan.canary;
      expect(canary).not.toBeNull();
      expect(r.passed.sort(), r.output).toEqual([...(f.identities ?? [])].sort());
      const names = new Set(canary?.tests);
      const failed = (r.report?.tests ?? []).filter((t) => t.outcome === "failed").map((t) => t.name);
      expect(
        failed.every((n) => names.has(n)),
        failed.join(", "),
      ).toBe(true);
      const verdict = judgeTestRun({ report: r.report, canary, floor, exitCode: r.exitCode ?? -1 });
      expect(verdict.passed, verdict.summary).toBe(true);
      expect(verdict.counts.passed).toBe(f.tests);
    });

    test("code under test that exits 0 when loaded leaves no passing test in the report", async () => {
      for (const canary of [false, true]) {
        const r = await runJs(root, f.exitOnImport, f.argv, { canary });
        const real = r.passed.filter((k) => (f.identities ?? []).includes(k));
        expect(real, `canary ${canary}: ${r.output}`).toEqual([]);
        const verdict = judgeTestRun({
          report: r.report,
          canary: r.plan.canary,
          floor,
          exitCode: r.exitCode ?? -1,
        });
        expect(verdict.passed).toBe(false);
      }
    });

    if (f.runner !== "tape") {
      test("a line the code under test writes into the report pipe makes the report unreadable", async () => {
        const esm = f.honest["package.json"]?.includes("module");
        const add = esm ? "export const add = (a, b) => a + b;" : "exports.add = (a, b) => a + b;";
        const src = forger(add);
        const files = {
          ...f.honest,
          "src/add.js": esm
            ? src.replace('const fs = require("node:fs");', 'import fs from "node:fs";')
            : src,
        };
        const r = await runJs(root, files, f.argv, { canary: false });
        expect(r.reportText, r.output).toContain('{"t":"end","n":0}');
        expect(r.report, r.reportText ?? "").toBeNull();
      });
    }

    if (f.patchFramework) {
      const patched = f.patchFramework;
      test("code under test that turns the assertions into no-ops makes the canary pass: tampered", async () => {
        const r = await runJs(root, patched, f.argv, { canary: true });
        const verdict = judgeTestRun({
          report: r.report,
          canary: r.plan.canary,
          floor,
          exitCode: r.exitCode ?? -1,
        });
        expect(verdict.passed).toBe(false);
        expect(verdict.error, verdict.summary + r.output).toBe("tampered");
      });
    }
  });
}
