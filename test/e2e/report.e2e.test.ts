// CI reports: `run --junit --markdown` and `report RUN` write a JUnit file that validates against the
// Ant/Jenkins schema and that a real JUnit consumer reads with the right counts, plus a Markdown summary.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { junitSchemaErrors, readAsCi } from "../cli/junit-consumers.js";
import {
  type Envelope,
  exampleTask,
  gateIdsOf,
  loopgate,
  parseStdout,
  removeTemps,
  show,
  tempDir,
} from "./cli.js";

afterAll(removeTemps);
const TASK = exampleTask("js-slugify");
const GATES = gateIdsOf(TASK);

describe.concurrent("CI reports", () => {
  it("run --noop --junit --markdown: every gate and the verdict are test cases; failures carry their log", async () => {
    const dir = tempDir();
    const junit = join(dir, "out", "junit.xml");
    const md = join(dir, "summary.md");
    const store = tempDir();
    const r = await loopgate([
      "run",
      TASK,
      "--noop",
      "--max-attempts",
      "1",
      "--json",
      "--store",
      store,
      "--junit",
      junit,
      "--markdown",
      md,
    ]);
    expect(r.code, show(r)).toBe(1);
    const env = parseStdout<Envelope>(r);
    const xml = readFileSync(junit, "utf8");
    expect(await junitSchemaErrors(xml)).toBeNull();
    const ci = readAsCi(xml);
    const failedGates = env.gates.filter((g) => g.attempt === env.attempts && !g.passed);
    expect(failedGates.length).toBeGreaterThan(0);
    expect(ci.total).toBe(GATES.length + 1);
    expect(ci.failed + ci.errors).toBe(failedGates.length + 1);
    const suite = ci.suites[0];
    expect(suite?.cases.map((c) => c.name)).toEqual([
      ...env.gates.filter((g) => g.attempt === 1).map((g) => g.id),
      "verdict",
    ]);
    expect(suite?.metadata).toMatchObject({ run_id: env.run_id, status: "ESCALATED", reason: env.reason });
    for (const g of failedGates) {
      const c = suite?.cases.find((x) => x.name === g.id);
      expect(c?.status).toBe("FAIL");
      expect(c?.stack_trace.trim().slice(0, 40)).toBe(
        g.log_excerpt
          // biome-ignore lint/suspicious/noControlCharactersInRegex: what XML cannot carry is dropped
          .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "")
          .trim()
          .slice(0, 40),
      );
    }

    const summary = readFileSync(md, "utf8");
    expect(summary).toContain("loopgate: ESCALATED");
    for (const id of GATES) expect(summary).toContain(`| ${id.replace(/_/g, "\\_")} |`);
    expect(summary).toContain("### Findings");
    expect(summary).toContain("### Audit");
    expect(summary).toContain(env.run_id);

    // `report RUN` rebuilds the same JUnit bytes from the log.
    const again = join(dir, "again.xml");
    const rep = await loopgate(["report", env.run_id, "--store", store, "--junit", again]);
    expect(rep.code, show(rep)).toBe(1);
    expect(readFileSync(again, "utf8")).toBe(xml);
    const printed = await loopgate(["report", env.run_id, "--store", store]);
    expect(printed.stdout).toBe(summary);
  });

  it("an oracle run's report is all green", async () => {
    const store = tempDir();
    const junit = join(tempDir(), "junit.xml");
    const r = await loopgate(["run", TASK, "--oracle", "--store", store, "--junit", junit]);
    expect(r.code, show(r)).toBe(0);
    expect(r.stderr).toContain(`wrote ${junit}`);
    const xml = readFileSync(junit, "utf8");
    expect(await junitSchemaErrors(xml)).toBeNull();
    const ci = readAsCi(xml);
    expect([ci.total, ci.passed, ci.failed, ci.errors, ci.status]).toEqual([
      GATES.length + 1,
      GATES.length + 1,
      0,
      0,
      "PASS",
    ]);
  });

  it("report of an unknown run, or to a file that cannot be written, exits 2 naming it", async () => {
    const store = tempDir();
    const r = await loopgate(["run", TASK, "--noop", "--max-attempts", "1", "--json", "--store", store]);
    const id = parseStdout<Envelope>(r).run_id;
    const none = await loopgate(["report", "no-such-run", "--store", store]);
    expect(none.code, show(none)).toBe(2);
    expect(none.stderr).toContain("no-such-run");
    const blocked = join(TASK, "cannot", "junit.xml"); // a path under a file
    const bad = await loopgate(["report", id, "--store", store, "--junit", blocked]);
    expect(bad.code, show(bad)).toBe(2);
    expect(bad.stderr).toContain("--junit");
    expect(bad.stderr).toContain(blocked);
  });
});
