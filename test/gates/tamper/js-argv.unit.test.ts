import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, extname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { TamperPlan } from "../../../src/gates/tamper/adapter.js";
import { recogniseRunner } from "../../../src/gates/tamper/runners.js";

let env: string;
const PRIVATE = "/private";
const REPORT = "/private/report";

beforeAll(() => {
  env = mkdtempSync(join(tmpdir(), "lg-jsargv-"));
  for (const f of ["test/a.test.js", "test/b.spec.js", "heldout/x.test.ts", "src/add.js"]) {
    mkdirSync(dirname(join(env, f)), { recursive: true });
    writeFileSync(join(env, f), "");
  }
});
afterAll(() => rmSync(env, { recursive: true, force: true }));

/** The runner and the argv loopgate plans for a gate's argv; loopgate's own random names become placeholders. */
function planned(
  argv: string[],
  options: { canary?: boolean; renamed?: Map<string, string[]>; gateEnv?: string } = {},
): { runner: string; argv: string[]; plan: TamperPlan } | string {
  const found = recogniseRunner(argv);
  if (!found) return "not recognised";
  const gateEnv = options.gateEnv ?? env;
  const p = found.adapter.plan({
    argv,
    offset: found.offset,
    gateEnv,
    privateDir: PRIVATE,
    reportPath: REPORT,
    canary: options.canary ?? false,
    renamed: options.renamed ?? new Map(),
  });
  if (typeof p === "string") return p;
  // Private files by their whole path; the canary by its name (its folder shows where it was put).
  const names = new Map<string, string>();
  for (const f of p.files) {
    if (f.path.startsWith(PRIVATE))
      names.set(f.path, f.content.includes("NODE_TEST_CONTEXT") ? "<preload>" : "<reporter>");
    else names.set(basename(f.path), `<canary${extname(f.path)}>`);
  }
  const shown = p.argv.map((a) => {
    for (const [path, role] of names) if (a.includes(path)) return a.replace(path, role);
    return a;
  });
  return { runner: found.adapter.id, argv: shown, plan: p };
}

describe("every launcher of a JavaScript runner is recognised, with the words that launch it", () => {
  test.each([
    [["npx", "vitest", "run"], "vitest", 2],
    [["npx", "--no-install", "vitest"], "vitest", 3],
    [["npx", "-y", "jest"], "jest", 3],
    [["npx", "--yes", "jest", "test/"], "jest", 3],
    [["npx", "-p", "jest", "jest"], "jest", 4],
    [["npx", "--package=jest", "--", "jest"], "jest", 4],
    [["npx", "mocha"], "mocha", 2],
    [["npx", "tape", "test/*.js"], "tape", 2],
    [["npx", "node", "--test"], "node-test", 2],
    [["node_modules/.bin/vitest", "run"], "vitest", 1],
    [["./node_modules/.bin/jest"], "jest", 1],
    [["node_modules/.bin/mocha"], "mocha", 1],
    [["node_modules/.bin/_mocha"], "mocha", 1],
    [["node_modules/.bin/tape", "t.js"], "tape", 1],
    [["node", "node_modules/vitest/vitest.mjs", "run"], "vitest", 2],
    [["node", "node_modules/jest/bin/jest.js"], "jest", 2],
    [["node", "--experimental-vm-modules", "node_modules/jest/bin/jest.js"], "jest", 3],
    [["node", "./node_modules/mocha/bin/mocha.js"], "mocha", 2],
    [["node", "-r", "ts-node/register", "node_modules/mocha/bin/mocha.js"], "mocha", 4],
    [["node", "node_modules/tape/bin/tape", "t.js"], "tape", 2],
    [["node", "node_modules/.bin/tape", "t.js"], "tape", 2],
    [["/usr/bin/node", "--test"], "node-test", 1],
    [["node", "--import", "tsx", "--test", "test/"], "node-test", 1],
    [["vitest"], "vitest", 1],
    [["jest"], "jest", 1],
    [["mocha"], "mocha", 1],
    [["tape", "t.js"], "tape", 1],
  ])("%j → %s after %i words", (argv, id, offset) => {
    const r = recogniseRunner(argv);
    expect(r?.adapter.id).toBe(id);
    expect(r?.offset).toBe(offset);
  });

  test.each([
    [["npx", "-c", "jest --ci"]],
    [["node", "test/run.js", "--test"]],
    [["node", "test/run.js"]],
    [["node", "-r", "node_modules/jest/bin/jest.js", "run.js"]],
    [["yarn", "jest"]],
  ])("%j is not one loopgate can instrument", (argv) => {
    expect(recogniseRunner(argv)).toBeNull();
  });
});

describe("node --test", () => {
  test.each([
    [
      ["node", "--test", "test/"],
      [
        "node",
        "--test",
        "--test-reporter=spec",
        "--test-reporter-destination=stdout",
        "--test-reporter=<reporter>",
        `--test-reporter-destination=${REPORT}`,
        "test/",
      ],
    ],
    [
      // The user's reporters keep their destinations, in Node's order (the n-th with the n-th).
      [
        "node",
        "--test",
        "--test-reporter",
        "tap",
        "--test-reporter=dot",
        "--test-reporter-destination=out.txt",
      ],
      [
        "node",
        "--test",
        "--test-reporter=tap",
        "--test-reporter-destination=out.txt",
        "--test-reporter=dot",
        "--test-reporter-destination=stdout",
        "--test-reporter=<reporter>",
        `--test-reporter-destination=${REPORT}`,
      ],
    ],
    [
      ["node", "--test-name-pattern=^adds", "--test"],
      [
        "node",
        "--test-name-pattern=^adds",
        "--test",
        "--test-reporter=spec",
        "--test-reporter-destination=stdout",
        "--test-reporter=<reporter>",
        `--test-reporter-destination=${REPORT}`,
      ],
    ],
  ])("without a canary %j → %j", (argv, want) => {
    const p = planned(argv);
    expect(typeof p === "string" ? p : p.argv).toEqual(want);
    if (typeof p !== "string") expect([p.plan.canary, p.plan.reportsToPath]).toEqual([null, true]);
  });

  test("with the canary: a preload from the private folder, and a name filter is refused", () => {
    const p = planned(["node", "--test", "test/"], { canary: true });
    expect(typeof p === "string" ? p : p.argv.slice(0, 3)).toEqual(["node", "--import=<preload>", "--test"]);
    expect(planned(["node", "--test", "--test-name-pattern=x"], { canary: true })).toContain(
      "--test-name-pattern",
    );
    expect(planned(["node", "--test-only", "--test"], { canary: true })).toContain("--test-only");
    expect(planned(["node", "--test", "--watch"])).toContain("--watch");
  });

  test("a renamed test's emitted names are added to an anchored name pattern", () => {
    const renamed = new Map([["test/a.test.js::add::adds", ["test/a.test.js::add::adds x 1"]]]);
    const p = planned(["node", "--test-name-pattern=^adds$", "--test"], { renamed });
    expect(typeof p === "string" ? p : p.argv[1]).toBe("--test-name-pattern=(?:^adds$)|^(?:adds x 1)$");
  });
});

describe("jest", () => {
  const flags = ["--json", `--outputFile=${REPORT}`, "--workerIdleMemoryLimit=4GB"];
  test.each([
    [["jest"], ["jest", ...flags]],
    [
      ["npx", "jest", "heldout/x.test.ts", "-t", "parses"],
      ["npx", "jest", "heldout/x.test.ts", "-t", "parses", ...flags],
    ],
    [
      ["jest", "--runInBand"],
      ["jest", "--runInBand", "--json", `--outputFile=${REPORT}`],
    ],
    [
      ["jest", "--", "test/"],
      ["jest", ...flags, "--", "test/"],
    ],
  ])("without a canary %j → %j", (argv, want) => {
    const p = planned(argv);
    expect(typeof p === "string" ? p : p.argv).toEqual(want);
    if (typeof p !== "string") expect(p.plan.env).toEqual({ CI: "true" });
  });

  test.each([
    // A path filter: the canary, named like the file filtered on, is named right after it.
    [
      ["jest", "heldout/x.test.ts"],
      ["jest", "heldout/x.test.ts", "heldout/<canary.ts>", ...flags],
    ],
    // No filter: the canary only has to be where Jest looks, beside the project's first test file.
    [
      ["jest", "--ci"],
      ["jest", "--ci", ...flags],
    ],
    // --testMatch takes every following word (yargs): "test/" is not a filter.
    [
      ["jest", "--testMatch", "**/*.test.js", "test/"],
      ["jest", "--testMatch", "**/*.test.js", "test/", ...flags],
    ],
    [
      ["jest", "-c", "jest.config.js", "test/"],
      ["jest", "-c", "jest.config.js", "test/", "test/<canary.js>", ...flags],
    ],
  ])("with the canary %j → %j", (argv, want) => {
    const p = planned(argv, { canary: true });
    expect(typeof p === "string" ? p : p.argv).toEqual(want);
    if (typeof p !== "string") {
      expect(p.plan.canary?.tests.length).toBe(5);
      expect(p.plan.files[0]?.path.startsWith(env)).toBe(true);
    }
  });

  test("the canary file is named like the test file it sits beside", () => {
    const p = planned(["jest", "--ci"], { canary: true });
    expect(typeof p === "string" ? p : p.plan.files[0]?.path).toMatch(
      new RegExp(`^${env}/heldout/[a-z]+-[a-z]+-\\d+\\.test\\.ts$`),
    );
  });

  test.each([
    [["jest", "--bail"], false, "--bail"],
    [["jest", "-b"], false, "-b"],
    [["jest", "--watchAll"], false, "--watchAll"],
    [["jest", "--outputFile=out.json"], false, "--outputFile"],
    [["jest", "-t", "parses"], true, "-t"],
    [["jest", "--test-name-pattern=parses"], true, "--test-name-pattern"],
    [["jest", "--onlyChanged"], true, "--onlyChanged"],
    [["jest", "--findRelatedTests", "src/add.js"], true, "--findRelatedTests"],
  ])("%j (canary %s) cannot be instrumented and says %s", (argv, canary, word) => {
    const p = planned(argv, { canary });
    expect(typeof p).toBe("string");
    expect(p).toContain(word);
  });

  test("a renamed test's emitted names are added to an anchored -t pattern", () => {
    const renamed = new Map([
      ["t.test.js::add::adds", ["t.test.js::add::adds x 1", "t.test.js::add::adds y 2"]],
    ]);
    const p = planned(["jest", "-t", "^add adds$"], { renamed });
    expect(typeof p === "string" ? p : p.argv.slice(0, 3)).toEqual([
      "jest",
      "-t",
      "(?:^add adds$)|^(?:add adds x 1|add adds y 2)$",
    ]);
  });
});

describe("vitest", () => {
  const flags = ["--reporter=default", "--reporter=json", `--outputFile.json=${REPORT}`];
  test.each([
    [["vitest"], ["vitest", "--run", ...flags]],
    [
      ["npx", "vitest", "run"],
      ["npx", "vitest", "run", ...flags],
    ],
    [
      ["vitest", "run", "test/a.test.js"],
      ["vitest", "run", "test/a.test.js", ...flags],
    ],
    [
      ["vitest", "run", "--reporter=verbose", "-t", "adds"],
      ["vitest", "run", "--reporter=verbose", "-t", "adds", "--reporter=json", `--outputFile.json=${REPORT}`],
    ],
  ])("without a canary %j → %j", (argv, want) => {
    const p = planned(argv);
    expect(typeof p === "string" ? p : p.argv).toEqual(want);
  });

  test("a config file in the project is loaded with the loader that writes nothing beside it", () => {
    const withConfig = mkdtempSync(join(tmpdir(), "lg-jsargv-cfg-"));
    try {
      writeFileSync(join(withConfig, "vitest.config.ts"), "export default {};\n");
      const p = planned(["vitest", "run"], { gateEnv: withConfig });
      expect(typeof p === "string" ? p : p.argv.at(-1)).toBe("--configLoader=runner");
      const own = planned(["vitest", "run", "--configLoader", "bundle"], { gateEnv: withConfig });
      expect(typeof own === "string" ? own : own.argv.filter((a) => a.includes("configLoader"))).toEqual([
        "--configLoader",
      ]);
      const named = planned(["vitest", "run", "-c", "conf/v.ts"]);
      expect(typeof named === "string" ? named : named.argv.at(-1)).toBe("--configLoader=runner");
    } finally {
      rmSync(withConfig, { recursive: true, force: true });
    }
  });

  test.each([
    [
      ["vitest", "run", "test/a.test.js"],
      ["vitest", "run", "test/<canary.js>", "test/a.test.js", ...flags],
    ],
    // -u takes the next word as its value (cac): there is no path filter, so no canary path either.
    [
      ["vitest", "run", "-u", "test/a.test.js"],
      ["vitest", "run", "-u", "test/a.test.js", ...flags],
    ],
  ])("with the canary %j → %j", (argv, want) => {
    const p = planned(argv, { canary: true });
    expect(typeof p === "string" ? p : p.argv).toEqual(want);
    if (typeof p !== "string") expect(p.plan.files[0]?.content).toContain('from "vitest"');
  });

  test.each([
    [["vitest", "watch"], false, "vitest watch"],
    [["vitest", "bench"], false, "vitest bench"],
    [["vitest", "run", "--bail=1"], false, "--bail"],
    [["vitest", "run", "--outputFile=junit.xml"], false, "--outputFile"],
    [["vitest", "run", "-t", "adds"], true, "-t"],
    [["vitest", "related", "src/add.js"], true, "vitest related"],
    [["vitest", "run", "--changed"], true, "--changed"],
  ])("%j (canary %s) cannot be instrumented and says %s", (argv, canary, word) => {
    const p = planned(argv, { canary });
    expect(typeof p).toBe("string");
    expect(p).toContain(word);
  });
});

describe("mocha", () => {
  const flags = ["--reporter=<reporter>", `--reporter-option=output=${REPORT}`];
  test.each([
    [["mocha"], ["mocha", ...flags]],
    [
      ["npx", "mocha", "--timeout", "5000", "test/"],
      ["npx", "mocha", "--timeout", "5000", "test/", ...flags],
    ],
    [
      ["mocha", "-g", "adds"],
      ["mocha", "-g", "adds", ...flags],
    ],
  ])("without a canary %j → %j", (argv, want) => {
    const p = planned(argv);
    expect(typeof p === "string" ? p : p.argv).toEqual(want);
    if (typeof p !== "string") expect(p.plan.files[0]?.path.endsWith(".cjs")).toBe(true);
  });

  test.each([
    // --file loads the canary whatever the spec (Mocha's default one stays), beside the spec's first file.
    [["mocha"], ["mocha", ...flags, "--file=test/<canary.js>"]],
    [
      ["mocha", "test/"],
      ["mocha", "test/", ...flags, "--file=test/<canary.js>"],
    ],
    // Parallel mode refuses --file: the canary is one more spec argument.
    [
      ["mocha", "--parallel", "test/"],
      ["mocha", "--parallel", "test/", "test/<canary.js>", ...flags],
    ],
  ])("with the canary %j → %j", (argv, want) => {
    const p = planned(argv, { canary: true });
    expect(typeof p === "string" ? p : p.argv).toEqual(want);
  });

  test("the canary is named like the spec's first file", () => {
    const p = planned(["mocha", "test/b.spec.js"], { canary: true });
    expect(typeof p === "string" ? p : p.plan.files[1]?.path).toMatch(/\/test\/[a-z]+-[a-z]+-\d+\.spec\.js$/);
  });

  test.each([
    [["mocha", "--reporter", "dot"], false, "--reporter"],
    [["mocha", "-R", "json"], false, "-R"],
    [["mocha", "--bail"], false, "--bail"],
    [["mocha", "--dry-run"], false, "--dry-run"],
    [["mocha", "--watch"], false, "--watch"],
    [["mocha", "--grep", "adds"], true, "--grep"],
    [["mocha", "-f", "adds"], true, "-f"],
    [["mocha", "--parallel"], true, "parallel"],
  ])("%j (canary %s) cannot be instrumented and says %s", (argv, canary, word) => {
    const p = planned(argv, { canary });
    expect(typeof p).toBe("string");
    expect(p).toContain(word);
  });
});

describe("tape", () => {
  test.each([
    [["tape", "test/*.js"], false, ["tape", "test/*.js"]],
    [["npx", "tape", "test/*.js"], true, ["npx", "tape", "test/*.js", "test/<canary.js>"]],
    [
      ["node", "node_modules/tape/bin/tape", "-r", "ts-node/register", "heldout/x.test.ts", "--strict"],
      true,
      [
        "node",
        "node_modules/tape/bin/tape",
        "-r",
        "ts-node/register",
        "heldout/x.test.ts",
        "heldout/<canary.ts>",
        "--strict",
      ],
    ],
  ])("%j (canary %s) → %j, read from the output", (argv, canary, want) => {
    const p = planned(argv, { canary });
    expect(typeof p === "string" ? p : p.argv).toEqual(want);
    if (typeof p !== "string") expect(p.plan.reportsToPath).toBe(false);
  });

  test("tape without test files cannot be instrumented", () => {
    expect(planned(["tape"])).toContain("no test files");
    expect(planned(["tape", "-r", "ts-node/register"])).toContain("no test files");
  });
});
