import { describe, expect, it } from "vitest";
import { derivedArtifact } from "../../../src/core/observation/derived-artifacts.js";
import { type ChangePlan, planGateChanges } from "../../../src/core/observation/gate-change-plan.js";
import { createObservation, type ObservedEntry } from "../../../src/core/observation/observation.js";

const file = (path: string, hash = "h1"): ObservedEntry => ({
  path,
  type: "file",
  mode: 0o644,
  size: 1,
  hash,
});
const dir = (path: string): ObservedEntry => ({ path, type: "dir", mode: 0o755, size: 0, hash: "" });
const obs = (...entries: ObservedEntry[]) => createObservation(entries);
const carried = (plan: ChangePlan) => plan.carry.map((e) => e.path);
const derivedFindings = (plan: ChangePlan) =>
  plan.findings.filter((f) => f.code === "derived_artifact_not_carried").map((f) => [f.severity, f.path]);

// Everything of the pristine tree, so that "not carried" means the gates see exactly the pristine state.
const pristine = [
  dir("pkg"),
  file("pkg/__init__.py"),
  file("pkg/parser.py"),
  dir("src"),
  file("src/index.ts"),
  file("tsconfig.json"),
  dir("crate"),
  file("crate/Cargo.toml"),
  dir("crate/src"),
  file("crate/src/lib.rs"),
  dir("node_modules"),
  dir("node_modules/left-pad"),
  file("node_modules/left-pad/index.js"),
];
const rules = { deliverables: [], protected: [] };

/** The builder's tree: pristine plus `added`, with `pkg/parser.py` fixed (a real deliverable change). */
function plan(...added: ObservedEntry[]): ChangePlan {
  const ws = [
    ...pristine.filter((e) => e.path !== "pkg/parser.py"),
    file("pkg/parser.py", "fixed"),
    ...added,
  ];
  return planGateChanges(obs(...pristine), obs(...ws), rules);
}

describe("derived artifacts are never carried into the gates, and each is a warning finding", () => {
  const cases: [string, ObservedEntry[], string][] = [
    [
      "CPython bytecode in __pycache__",
      [dir("pkg/__pycache__"), file("pkg/__pycache__/parser.cpython-311.pyc")],
      "pkg/__pycache__",
    ],
    ["a sourceless .pyc next to the sources", [file("pkg/helper.pyc")], "pkg/helper.pyc"],
    ["an optimised .pyo", [file("pkg/parser.pyo")], "pkg/parser.pyo"],
    [
      "an extension module shadowing pkg/parser.py",
      [file("pkg/parser.cpython-311-x86_64-linux-gnu.so")],
      "pkg/parser.cpython-311-x86_64-linux-gnu.so",
    ],
    ["an abi3 extension module shadowing the package", [file("pkg.abi3.so")], "pkg.abi3.so"],
    ["the pytest cache", [dir(".pytest_cache"), file(".pytest_cache/v/cache/lastfailed")], ".pytest_cache"],
    ["the mypy cache", [dir(".mypy_cache"), file(".mypy_cache/3.11/pkg/parser.meta.json")], ".mypy_cache"],
    ["the ruff cache", [dir(".ruff_cache"), file(".ruff_cache/CACHEDIR.TAG")], ".ruff_cache"],
    ["TypeScript incremental build state", [file("tsconfig.tsbuildinfo")], "tsconfig.tsbuildinfo"],
    ["a nested .tsbuildinfo", [file("src/.tsbuildinfo-x.tsbuildinfo")], "src/.tsbuildinfo-x.tsbuildinfo"],
    ["the ESLint cache", [file(".eslintcache")], ".eslintcache"],
    [
      "tool caches under node_modules/.cache",
      [dir("node_modules/.cache"), file("node_modules/.cache/@babel/register/.babel.json")],
      "node_modules/.cache",
    ],
    [
      "Vite/Vitest caches",
      [dir("node_modules/.vite"), file("node_modules/.vite/vitest/results.json")],
      "node_modules/.vite",
    ],
    [
      "cargo's target/ next to Cargo.toml",
      [dir("crate/target"), file("crate/target/debug/.fingerprint/x/lib-x")],
      "crate/target",
    ],
    ["an object file", [file("src/parser.o")], "src/parser.o"],
  ];
  for (const [name, added, where] of cases)
    it(name, () => {
      const p = plan(...added);
      // The real fix still travels; nothing added here does.
      expect(carried(p)).toEqual(["pkg/parser.py"]);
      expect(derivedFindings(p)).toEqual([["warning", where]]);
      expect(p.findings.every((f) => f.severity === "warning")).toBe(true);
    });

  it("names the path and the runtime, and folds a whole cache into one bounded finding", () => {
    const many = Array.from({ length: 500 }, (_, i) => file(`pkg/__pycache__/m${i}.cpython-311.pyc`));
    const p = plan(dir("pkg/__pycache__"), ...many);
    const f = p.findings.filter((x) => x.code === "derived_artifact_not_carried");
    expect(f).toHaveLength(1);
    expect(f[0]?.detail).toMatch(
      /^pkg\/__pycache__ was added \(dir\): bytecode.*\(Python\).*\(and 500 more changed paths below it\)$/,
    );
  });

  it("keeps a pristine cache when the builder modifies or removes it", () => {
    const base = [...pristine, dir("pkg/__pycache__"), file("pkg/__pycache__/parser.cpython-311.pyc", "p")];
    const forged = planGateChanges(
      obs(...base),
      obs(
        ...base.filter((e) => !e.path.endsWith(".pyc")),
        file("pkg/__pycache__/parser.cpython-311.pyc", "x"),
      ),
      rules,
    );
    expect(forged.carry).toEqual([]);
    expect(forged.drop).toEqual([]);
    expect(derivedFindings(forged)).toEqual([["warning", "pkg/__pycache__/parser.cpython-311.pyc"]]);
    const removed = planGateChanges(obs(...base), obs(...pristine), rules);
    expect(removed.drop).toEqual([]);
    expect(derivedFindings(removed).map(([, p]) => p)).toEqual(["pkg/__pycache__"]);
  });

  it("leaves look-alikes that are sources alone", () => {
    const none = () => false;
    for (const p of [
      "target/readme.md",
      "src/target.ts",
      "pkg/pycache.py",
      "lib/native.so",
      "logo",
      "a.o.txt",
    ])
      expect(derivedArtifact(p, none), p).toBeNull();
    // target/ without a Cargo.toml beside it, and an extension module with no .py of its name, are carried.
    const p = plan(dir("target"), file("target/out.txt"), file("pkg/native.cpython-311-x86_64-linux-gnu.so"));
    expect(carried(p)).toEqual([
      "pkg/native.cpython-311-x86_64-linux-gnu.so",
      "pkg/parser.py",
      "target",
      "target/out.txt",
    ]);
    expect(derivedFindings(p)).toEqual([]);
  });

  it("reports a protected path as protected, not as derived", () => {
    const p = planGateChanges(
      obs(...pristine, dir("tests"), file("tests/test_a.py")),
      obs(
        ...pristine,
        dir("tests"),
        file("tests/test_a.py"),
        dir("tests/__pycache__"),
        file("tests/__pycache__/t.pyc"),
      ),
      { deliverables: [], protected: ["tests/**"] },
    );
    expect(p.carry).toEqual([]);
    expect(p.findings.map((f) => f.code)).toEqual(["protected_path_added"]);
  });
});
