// `loopgate init`'s reading of a repository: which runner, which tests, what is protected and delivered,
// and the task file it renders — on real folders written here (the runner programs are stand-in files:
// detection only checks they exist; test/e2e/init.e2e.test.ts runs the real ones).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InputError } from "../../src/core/kernel/errors.js";
import { parseTask } from "../../src/core/task/task.js";
import { detectProject } from "../../src/runner/init/detect.js";
import { renderTask } from "../../src/runner/init/render.js";
import { planTask } from "../../src/runner/init/task-plan.js";
import { type FixtureRunner, fixtureSpec } from "./init-fixtures.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function repoWith(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "loopgate-init-"));
  temps.push(root);
  const repo = join(root, "repo");
  mkdirSync(repo);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(repo, rel)), { recursive: true });
    writeFileSync(join(repo, rel), text);
  }
  return repo;
}

/** Each runner package's entry point, as its package.json declares it (the real packages' own). */
const ENTRY: Record<string, string> = {
  vitest: "vitest.mjs",
  jest: "bin/jest.js",
  mocha: "bin/mocha.js",
  tape: "bin/tape",
};

/** A fixture's files plus a stand-in for the runner's package in node_modules. */
function fixtureRepo(runner: FixtureRunner): string {
  const entry = ENTRY[runner];
  const pkg = entry
    ? {
        [`node_modules/${runner}/package.json`]: JSON.stringify({
          name: runner,
          bin: { [runner]: `./${entry}` },
        }),
        [`node_modules/${runner}/${entry}`]: "",
      }
    : {};
  return repoWith({ ...fixtureSpec(runner).files, ...pkg });
}

describe("detecting the runner and the tests of each fixture", () => {
  // Expected argv written out by hand from the runner adapters' recognised forms (src/gates/tamper/runners.ts).
  const expected: Record<FixtureRunner, { run: string[]; protected: string[]; deliverables: string[] }> = {
    "node-test": {
      run: ["node", "--test", "test"],
      protected: ["test/**", "package.json"],
      deliverables: ["src/**"],
    },
    vitest: {
      run: ["node", "node_modules/vitest/vitest.mjs", "run", "test/"],
      protected: ["test/**", "package.json"],
      deliverables: ["src/**"],
    },
    jest: {
      run: ["node", "node_modules/jest/bin/jest.js", "__tests__/"],
      protected: ["__tests__/**", "package.json"],
      deliverables: ["lib/**"],
    },
    mocha: {
      run: ["node", "node_modules/mocha/bin/mocha.js", "--recursive", "test/**/*.js"],
      protected: ["test/**", "package.json"],
      deliverables: ["lib/**"],
    },
    tape: {
      run: ["node", "node_modules/tape/bin/tape", "test/**/*.js"],
      protected: ["test/**", "package.json"],
      deliverables: ["index.js"],
    },
    unittest: {
      run: ["/usr/bin/python3", "-m", "unittest", "discover", "-s", "tests", "-t", "."],
      protected: ["tests/**"],
      deliverables: ["calc/**"],
    },
    pytest: {
      run: ["/usr/bin/python3", "-m", "pytest", "tests"],
      protected: ["tests/**", "pyproject.toml"],
      deliverables: ["calc/**"],
    },
  };
  for (const [runner, want] of Object.entries(expected) as [FixtureRunner, (typeof expected)["jest"]][]) {
    it(`${runner}: the gate argv, the protected paths and the deliverables`, () => {
      const repo = fixtureRepo(runner);
      const d = detectProject(repo);
      expect(d.runner).toBe(runner);
      const plan = planTask(d, {
        repo,
        taskFile: join(repo, "../t/task.yaml"),
        id: "t",
        prompt: null,
        oracle: null,
        heldout: null,
      });
      expect(plan.gates[0]?.run).toEqual(want.run);
      expect(plan.protected).toEqual(want.protected);
      expect(plan.deliverables).toEqual(want.deliverables);
    });
  }
});

describe("choosing among runners", () => {
  it("follows package.json's test script through the scripts it runs by name", () => {
    const repo = repoWith({
      "package.json": JSON.stringify({
        scripts: {
          test: "npm run lint && npm run test:unit",
          "test:unit": "c8 --100 node --test",
          lint: "eslint .",
        },
        devDependencies: { mocha: "*" },
      }),
      "index.js": "module.exports = 1;\n",
      "test/a.test.js": "require('node:test');\n",
    });
    const d = detectProject(repo);
    expect(d.runner).toBe("node-test");
    expect(d.evidence[0]).toContain("scripts.test:unit");
    expect(d.others.map((o) => o.runner)).toEqual(["mocha"]);
  });

  it("takes --runner over what the scripts say, and refuses one it does not know", () => {
    const repo = repoWith({
      "package.json": JSON.stringify({
        scripts: { test: "jest" },
        devDependencies: { jest: "*", mocha: "*" },
      }),
      "node_modules/.bin/mocha": "",
      "node_modules/.bin/jest": "",
      "node_modules/jest/package.json": JSON.stringify({ bin: "./bin/jest.js" }),
      "node_modules/jest/bin/jest.js": "",
      "lib/a.js": "",
      "test/a.test.js": "",
    });
    expect(detectProject(repo).runner).toBe("jest");
    expect(detectProject(repo, { runner: "mocha" }).runner).toBe("mocha");
    expect(() => detectProject(repo, { runner: "ava" })).toThrow(/unknown runner "ava"/);
  });

  it("says what to install when the runner's program is missing", () => {
    const repo = repoWith({
      "package.json": JSON.stringify({ scripts: { test: "vitest" } }),
      "test/a.test.js": "",
    });
    expect(() => detectProject(repo)).toThrow(/node_modules\/vitest is missing.*npm ci/);
  });

  it("reads Python as pytest when a conftest.py is there, as unittest otherwise, with -p for *_test.py files", () => {
    const withConftest = repoWith({
      "pkg/__init__.py": "",
      "tests/test_a.py": "import unittest\n",
      "conftest.py": "",
    });
    expect(detectProject(withConftest).runner).toBe("pytest");
    const plain = repoWith({
      "pkg/__init__.py": "",
      "tests/a_test.py": "import unittest\n",
      "tests/b_test.py": "",
    });
    const d = detectProject(plain);
    expect(d.runner).toBe("unittest");
    const plan = planTask(d, {
      repo: plain,
      taskFile: join(plain, "../t/task.yaml"),
      id: "t",
      prompt: null,
      oracle: null,
      heldout: null,
    });
    expect(plan.gates[0]?.run).toEqual([
      "/usr/bin/python3",
      "-m",
      "unittest",
      "discover",
      "-s",
      "tests",
      "-p",
      "*_test.py",
    ]);
  });

  it("finds tests inside a package (toolz/tests), busiest folder first, and leaves benchmarks out", () => {
    const repo = repoWith({
      "pyproject.toml": "[tool.pytest.ini_options]\n",
      "toolz/__init__.py": "",
      "toolz/core.py": "",
      "toolz/sandbox/__init__.py": "",
      "toolz/sandbox/tests/test_parallel.py": "",
      "toolz/tests/__init__.py": "",
      "toolz/tests/test_core.py": "",
      "toolz/tests/test_curry.py": "",
      "bench/test_curry.py": "",
    });
    const d = detectProject(repo);
    expect(d.runner).toBe("pytest");
    expect(d.testPaths).toEqual(["toolz/tests", "toolz/sandbox/tests"]);
    expect(d.testGlobs).toEqual(["toolz/tests/**", "toolz/sandbox/tests/**"]);
    expect(d.heldoutPath).toBe("toolz/tests/heldout");
    expect(d.sources).toEqual(["toolz/**"]);
  });

  it("mocha and tape: test globs, and a proposed held-out glob inside the test folder", () => {
    const repo = repoWith({
      "package.json": JSON.stringify({
        scripts: { test: "npm run tests-only", "tests-only": "nyc tape 'test/**/*.js'" },
      }),
      "node_modules/tape/package.json": JSON.stringify({ bin: "./bin/tape" }),
      "node_modules/tape/bin/tape": "",
      "lib/index.js": "",
      "test/parse.js": "",
      "test/stringify.js": "",
    });
    const d = detectProject(repo);
    expect(d.runner).toBe("tape");
    const plan = planTask(d, {
      repo,
      taskFile: join(repo, "../t/task.yaml"),
      id: "t",
      prompt: null,
      oracle: null,
      heldout: null,
    });
    expect(plan.gates[0]?.run).toEqual(["node", "node_modules/tape/bin/tape", "test/**/*.js"]);
    expect(plan.proposedHeldout?.run).toEqual(["node", "node_modules/tape/bin/tape", "test/heldout/**/*.js"]);
  });
});

describe("refusing what it cannot read", () => {
  it("a folder with no tests and no runner: a clear error naming what it looked for", () => {
    const repo = repoWith({ "README.md": "hello\n" });
    const e = (() => {
      try {
        detectProject(repo);
      } catch (err) {
        return err;
      }
    })();
    expect(e).toBeInstanceOf(InputError);
    expect((e as Error).message).toMatch(
      /no test runner found in .*repo: looked for package\.json .*pytest\.ini/,
    );
  });

  it("a runner but no tests", () => {
    const repo = repoWith({
      "package.json": JSON.stringify({ scripts: { test: "node --test" } }),
      "index.js": "",
    });
    expect(() => detectProject(repo)).toThrow(/no tests found in .*: looked for test\/, tests\//);
  });
});

describe("the rendered task file", () => {
  it("keeps a hostile file name named in a comment from ending it and writing YAML", () => {
    const repo = repoWith({
      "package.json": "{}",
      "src/a.js": "",
      "test/x\nid: evil\n#.test.js": 'import "node:test";\n',
    });
    const d = detectProject(repo);
    expect(d.evidence[0]).toContain("\nid: evil");
    const plan = planTask(d, {
      repo,
      taskFile: join(repo, "../t/task.yaml"),
      id: "clamp",
      prompt: null,
      oracle: null,
      heldout: null,
    });
    expect(parseTask(renderTask(plan), "task.yaml").id).toBe("clamp");
  });

  it("loads as a task with the planned gates, and its proposed held-out gate loads once uncommented", () => {
    const repo = fixtureRepo("vitest");
    const plan = planTask(detectProject(repo), {
      repo,
      taskFile: join(repo, "../t/task.yaml"),
      id: "clamp",
      prompt: "Fix clamp().\n  Indented: line\n",
      oracle: null,
      heldout: null,
    });
    const text = renderTask(plan);
    const task = parseTask(text, "task.yaml");
    expect(task.prompt).toBe("Fix clamp().\n  Indented: line\n");
    expect(task.workspace).toBe("../repo");
    expect(task.gates.map((g) => g.id)).toEqual(["tests"]);
    // node_modules is shared read-only with a private writable layer for Vite's caches: no `writable: true`.
    expect(task.gates[0]).toMatchObject({
      run: ["node", "node_modules/vitest/vitest.mjs", "run", "test/"],
      writable: false,
    });
    expect(task.dependencies).toEqual(["node_modules"]);
    const uncommented = text.replace(/^ {2}# (- id: heldout-tests| {2}\w+:.*)$/gm, "  $1");
    const withHeldout = parseTask(uncommented, "task.yaml");
    expect(withHeldout.gates[1]).toMatchObject({
      id: "heldout-tests",
      run: ["node", "node_modules/vitest/vitest.mjs", "run", "test/heldout/"],
      heldout: "./heldout",
    });
  });
});
