// The held-out gate's argv `task from-commit` chooses: a runner form the tamper checks recognise,
// or the user's --gate-cmd with {tests} expanded.
import { describe, expect, it } from "vitest";
import { gateCommandFor, runnableTests } from "../../src/runner/from-commit/gate-command.js";

const noPkg = { packageJson: null, pytestAvailable: true };
const pkg = (devDependencies: Record<string, string>) => ({
  packageJson: JSON.stringify({ name: "x", devDependencies }),
  pytestAvailable: false,
});

describe("runnableTests", () => {
  it("names test modules, not data, fixtures or helpers", () => {
    expect(
      runnableTests([
        "tests/test_a.py",
        "tests/conftest.py",
        "tests/data/in.json",
        "test/a.test.js",
        "test/helpers/setup.js",
        "test/b.js",
      ]),
    ).toEqual({ python: ["tests/test_a.py"], js: ["test/a.test.js", "test/b.js"] });
  });
});

describe("gateCommandFor", () => {
  it("runs Python tests under pytest when this machine has it, else unittest", () => {
    expect(gateCommandFor(["tests/test_a.py", "tests/data.txt"], noPkg)).toEqual({
      argv: ["python3", "-m", "pytest", "tests/test_a.py"],
      runner: "pytest",
    });
    expect(gateCommandFor(["tests/test_a.py"], { packageJson: null, pytestAvailable: false })).toEqual({
      argv: ["python3", "-m", "unittest", "tests/test_a.py"],
      runner: "unittest",
    });
  });

  it("runs JavaScript tests under the framework package.json declares, else node --test", () => {
    expect(gateCommandFor(["test/a.test.js"], noPkg)).toEqual({
      argv: ["node", "--test", "test/a.test.js"],
      runner: "node-test",
    });
    expect(gateCommandFor(["test/a.test.ts"], pkg({ vitest: "4" }))).toEqual({
      argv: ["node_modules/.bin/vitest", "run", "test/a.test.ts"],
      runner: "vitest",
    });
    expect(gateCommandFor(["test/a.test.js"], pkg({ mocha: "10" }))).toEqual({
      argv: ["node_modules/.bin/mocha", "test/a.test.js"],
      runner: "mocha",
    });
  });

  it("says why when it cannot choose", () => {
    expect(gateCommandFor(["tests/test_a.py", "test/a.test.js"], noPkg)).toEqual({
      none: expect.stringContaining("--gate-cmd"),
    });
    expect(gateCommandFor(["pkg/x_test.go"], noPkg)).toEqual({
      none: expect.stringContaining("pkg/x_test.go"),
    });
  });

  it("takes --gate-cmd as argv, {tests} standing for the runnable held-out files", () => {
    expect(
      gateCommandFor(["tests/test_a.py", "tests/test_b.py"], noPkg, "python3 -m pytest -x {tests}"),
    ).toEqual({
      argv: ["python3", "-m", "pytest", "-x", "tests/test_a.py", "tests/test_b.py"],
      runner: "--gate-cmd",
    });
    expect(gateCommandFor(["pkg/x_test.go"], noPkg, "go test ./...")).toEqual({
      argv: ["go", "test", "./..."],
      runner: "--gate-cmd",
    });
  });

  it("refuses a --gate-cmd a shell would be needed for", () => {
    expect(() => gateCommandFor(["tests/test_a.py"], noPkg, "pytest | tee log")).toThrow(/--gate-cmd/);
  });
});
