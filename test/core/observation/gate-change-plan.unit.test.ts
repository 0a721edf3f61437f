import fc from "fast-check";
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { type ChangePlan, planGateChanges } from "../../../src/core/observation/gate-change-plan.js";
import {
  createObservation,
  type Observation,
  type ObservedEntry,
  symlinkEscapes,
} from "../../../src/core/observation/observation.js";

const file = (path: string, hash = "h1", mode = 0o644): ObservedEntry => ({
  path,
  type: "file",
  mode,
  size: 1,
  hash,
});
const dir = (path: string, mode = 0o755): ObservedEntry => ({ path, type: "dir", mode, size: 0, hash: "" });
const link = (path: string, target: string): ObservedEntry => ({
  path,
  type: "symlink",
  mode: 0o777,
  size: target.length,
  hash: `t:${target}`,
  target,
});
const other = (path: string): ObservedEntry => ({ path, type: "other", mode: 0o644, size: 0, hash: "" });
const obs = (...entries: ObservedEntry[]) => createObservation(entries);

/** The tree a gate sees, computed from the plan the way buildGateEnvironment does. */
function applyPlan(pristine: Observation, plan: ChangePlan): Map<string, ObservedEntry> {
  const tree = new Map(pristine.entries.map((e) => [e.path, e]));
  for (const p of plan.drop) tree.delete(p);
  for (const e of plan.carry) tree.set(e.path, e);
  return tree;
}

const pristine = obs(
  dir("src"),
  file("src/a.js"),
  file("src/b.js"),
  dir("test"),
  file("test/a.test.js"),
  file("package.json"),
  dir("docs"),
  file("docs/readme.md"),
);
const rules = { deliverables: ["src/**"], protected: ["test", "package.json"] };
const codes = (plan: ChangePlan) => plan.findings.map((f) => [f.code, f.severity, f.path]);

describe("planGateChanges", () => {
  it("carries deliverable changes and drops removed deliverables, without findings", () => {
    const ws = obs(
      ...pristine.entries.filter((e) => !e.path.startsWith("src")),
      dir("src"),
      file("src/a.js", "h2"),
      file("src/c.js"),
    );
    const plan = planGateChanges(pristine, ws, rules);
    expect(plan.carry.map((e) => e.path)).toEqual(["src/a.js", "src/c.js"]);
    expect(plan.drop).toEqual(["src/b.js"]);
    expect(plan.findings).toEqual([]);
  });

  it("restores protected paths and reports each kind of change to them", () => {
    const ws = obs(
      ...pristine.entries.filter((e) => e.path !== "package.json" && e.path !== "test/a.test.js"),
      file("test/a.test.js.bak"),
      dir("test/a.test.js"),
    );
    const plan = planGateChanges(pristine, ws, rules);
    expect(plan.carry).toEqual([]);
    expect(plan.drop).toEqual([]);
    expect(codes(plan)).toEqual([
      ["protected_path_modified", "blocking", "package.json"],
      ["protected_path_modified", "blocking", "test/a.test.js"],
      ["protected_path_added", "warning", "test/a.test.js.bak"],
    ]);
    expect(plan.findings[0]?.detail).toMatch(/package\.json was removed.*restored/);
    expect(plan.findings[1]?.detail).toMatch(/changed from file to dir/);
  });

  it("lets protected win over deliverables", () => {
    const ws = obs(...pristine.entries.filter((e) => e.path !== "src/a.js"), file("src/a.js", "h2"));
    const plan = planGateChanges(pristine, ws, { deliverables: ["src/**"], protected: ["src/a.js"] });
    expect(plan.carry).toEqual([]);
    expect(codes(plan)).toEqual([["protected_path_modified", "blocking", "src/a.js"]]);
  });

  it("does not carry changes outside the deliverables and restores what was removed there", () => {
    const ws = obs(...pristine.entries.filter((e) => !e.path.startsWith("docs")), file("notes.txt"));
    const plan = planGateChanges(pristine, ws, rules);
    expect(plan.carry).toEqual([]);
    expect(plan.drop).toEqual([]);
    expect(codes(plan)).toEqual([
      ["change_outside_deliverables", "warning", "docs"],
      ["change_outside_deliverables", "warning", "notes.txt"],
    ]);
    expect(plan.findings[0]?.detail).toMatch(/1 more changed paths below it/);
  });

  it("treats empty deliverables as everything not protected", () => {
    const ws = obs(
      ...pristine.entries.filter((e) => e.path !== "docs/readme.md"),
      file("notes.txt"),
      file("docs/readme.md", "h2"),
      file("test/new.js"),
    );
    const plan = planGateChanges(pristine, ws, { deliverables: [], protected: ["test/**"] });
    expect(plan.carry.map((e) => e.path)).toEqual(["docs/readme.md", "notes.txt"]);
    expect(codes(plan)).toEqual([["protected_path_added", "warning", "test/new.js"]]);
  });

  it("never carries an escaping symlink and hides the pristine entry it replaced", () => {
    const ws = obs(
      ...pristine.entries.filter((e) => e.path !== "src/a.js"),
      link("src/a.js", "../../etc/passwd"),
      link("src/abs", "/etc/passwd"),
      link("src/ok", "b.js"),
    );
    const plan = planGateChanges(pristine, ws, rules);
    expect(plan.carry.map((e) => e.path)).toEqual(["src/ok"]);
    expect(plan.drop).toEqual(["src/a.js"]);
    expect(codes(plan)).toEqual([
      ["symlink_escapes_workspace", "blocking", "src/a.js"],
      ["symlink_escapes_workspace", "blocking", "src/abs"],
    ]);
    expect(plan.findings[0]?.detail).toContain("../../etc/passwd");
  });

  it("never carries a FIFO, socket or device", () => {
    const plan = planGateChanges(pristine, obs(...pristine.entries, other("src/pipe")), rules);
    expect(plan.carry).toEqual([]);
    expect(codes(plan)).toEqual([["unsupported_entry", "blocking", "src/pipe"]]);
  });

  it("carries a new directory implicitly when only its contents are deliverable", () => {
    const ws = obs(...pristine.entries, dir("src/gen"), file("src/gen/x.ts"), file("src/gen/y.md"));
    const plan = planGateChanges(pristine, ws, { deliverables: ["**/*.ts"], protected: [] });
    expect(plan.carry.map((e) => e.path)).toEqual(["src/gen", "src/gen/x.ts"]);
    expect(codes(plan)).toEqual([["change_outside_deliverables", "warning", "src/gen/y.md"]]);
  });

  it("keeps the pristine directory when a protected file inside it must be restored", () => {
    // The builder replaced src/ (deliverable) by a file, but src/keep.js is protected.
    const p = obs(dir("src"), file("src/keep.js"), file("src/a.js"));
    const plan = planGateChanges(p, obs(file("src")), { deliverables: [], protected: ["src/keep.js"] });
    const tree = applyPlan(p, plan);
    expect(tree.get("src")?.type).toBe("dir");
    expect(tree.get("src/keep.js")).toEqual(file("src/keep.js"));
    expect(tree.has("src/a.js")).toBe(false);
    expect(codes(plan)).toEqual([["protected_path_modified", "blocking", "src/keep.js"]]);
  });

  it("keeps findings bounded when a builder adds or changes thousands of paths", () => {
    const many: ObservedEntry[] = [dir("node_modules")];
    for (let i = 0; i < 10_000; i++) many.push(file(`node_modules/f${i}.js`), file(`docs/d${i}.md`));
    const plan = planGateChanges(pristine, obs(...pristine.entries, ...many), rules);
    expect(plan.findings.length).toBeLessThanOrEqual(11);
    const nm = plan.findings.find((f) => f.path === "node_modules");
    expect(nm?.detail).toMatch(/10000 more changed paths below it/);
    const summary = plan.findings.find((f) => f.path === "docs");
    expect(summary?.detail).toMatch(/^9991 more paths under docs/);
  });

  it("is deterministic", () => {
    const ws = obs(...pristine.entries.filter((e) => e.path !== "src/b.js"), file("x"), link("src/l", "/x"));
    expect(planGateChanges(pristine, ws, rules)).toEqual(planGateChanges(pristine, ws, rules));
  });
});

describe("planGateChanges on random trees", () => {
  const names = ["a", "b", "c"];
  const paths = names.flatMap((x) => [
    x,
    ...names.flatMap((y) => [`${x}/${y}`, ...names.map((z) => `${x}/${y}/${z}`)]),
  ]);
  const entryFor = (path: string, kind: number, v: number): ObservedEntry | undefined => {
    const targets = ["a", "../b", "/etc", "b/c", "c/../..", ".."];
    if (kind === 0) return undefined;
    if (kind === 1) return dir(path, v % 2 ? 0o700 : 0o755);
    if (kind === 2) return file(path, `h${v % 2}`, v % 3 ? 0o644 : 0o755);
    if (kind === 3) return link(path, targets[v % targets.length] as string);
    return other(path);
  };
  /** Only entries whose ancestors are all directories survive, so every generated tree is a real tree. */
  const tree = fc
    .array(fc.tuple(fc.nat(5), fc.nat(5)), { minLength: paths.length, maxLength: paths.length })
    .map((spec) => {
      const entries = new Map<string, ObservedEntry>();
      paths.forEach((p, i) => {
        const [kind, v] = spec[i] ?? [0, 0];
        const parent = p.includes("/") ? entries.get(p.slice(0, p.lastIndexOf("/"))) : dir("");
        const e = parent?.type === "dir" ? entryFor(p, kind > 4 ? 1 : kind, v) : undefined;
        if (e) entries.set(p, e);
      });
      return obs(...entries.values());
    });
  const patterns = fc.subarray(["a", "b/**", "**/c", "a/b", "c/*"]);

  it("always yields a consistent tree that never differs from pristine on protected paths", () => {
    fc.assert(
      fc.property(tree, tree, patterns, patterns, (p, w, deliverables, prot) => {
        const plan = planGateChanges(p, w, { deliverables, protected: prot });
        const result = applyPlan(p, plan);
        const before = new Map(p.entries.map((e) => [e.path, e]));
        const after = new Map(w.entries.map((e) => [e.path, e]));
        const m = prot.length ? picomatch(prot, { dot: true }) : () => false;
        const isProtected = (x: string): boolean =>
          m(x) || (x.includes("/") && isProtected(x.slice(0, x.lastIndexOf("/"))));
        for (const [path, e] of result) {
          const parent = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
          if (parent !== "") expect(result.get(parent)?.type, `parent of ${path}`).toBe("dir");
          if (e !== before.get(path)) {
            expect(e).toBe(after.get(path));
            expect(isProtected(path)).toBe(false);
            if (e.type === "symlink") expect(symlinkEscapes(path, e.target ?? "")).toBe(false);
            expect(e.type).not.toBe("other");
          }
        }
        for (const path of before.keys())
          if (isProtected(path)) expect(result.get(path)).toBe(before.get(path));
        expect(plan.findings.length).toBeLessThanOrEqual(55);
        // Every change the gates do not see is explained by a finding on it, above it or below it.
        for (const path of new Set([...before.keys(), ...after.keys()])) {
          if (result.get(path) === after.get(path)) continue;
          if (
            before.get(path) &&
            after.get(path) &&
            JSON.stringify(before.get(path)) === JSON.stringify(after.get(path))
          )
            continue;
          const related = (f: string) =>
            f === "." || f === path || path.startsWith(`${f}/`) || f.startsWith(`${path}/`);
          expect(
            plan.findings.some((f) => related(f.path)),
            `finding for ${path}`,
          ).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("privileged mode bits", () => {
  const base = obs(dir("src"), file("src/a.sh", "h1", 0o755));
  const codes = (p: ChangePlan) => p.findings.filter((f) => f.code === "privileged_mode_bit");

  it("a builder that makes a file set-uid, set-gid or a folder sticky gets one blocking finding each", () => {
    const after = obs(
      dir("src"),
      file("src/a.sh", "h1", 0o4755),
      file("src/.helper", "h9", 0o2755),
      dir("src/tmp", 0o1777),
    );
    const found = codes(planGateChanges(base, after, { deliverables: ["src/**"], protected: [] }));
    expect(found.map((f) => [f.path, f.severity])).toEqual([
      ["src/.helper", "blocking"],
      ["src/a.sh", "blocking"],
      ["src/tmp", "blocking"],
    ]);
    expect(found.find((f) => f.path === "src/a.sh")?.detail).toContain("set-uid");
    expect(found.find((f) => f.path === "src/.helper")?.detail).toContain("set-gid");
    expect(found.find((f) => f.path === "src/tmp")?.detail).toContain("sticky");
  });

  it("outside the deliverables or under a protected pattern the bit is still a blocking finding", () => {
    const after = obs(dir("src"), file("src/a.sh", "h1", 0o755), file("bin", "h2", 0o4755));
    const plan = planGateChanges(base, after, { deliverables: ["src/**"], protected: ["bin"] });
    expect(codes(plan).map((f) => f.path)).toEqual(["bin"]);
  });

  it("ordinary modes, unchanged paths and symlinks raise no such finding", () => {
    const after = obs(dir("src"), file("src/a.sh", "h2", 0o700), link("src/l", "a.sh"));
    expect(codes(planGateChanges(base, after, { deliverables: [], protected: [] }))).toEqual([]);
  });
});
