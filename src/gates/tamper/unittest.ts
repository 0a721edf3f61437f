import { existsSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import type { PlanInput, PlantedFile, RunnerAdapter, TamperPlan } from "./adapter.js";
import { plausibleName } from "./names.js";
import { canaryModuleName, unittestCanary } from "./python-canary.js";
import { pathToModule, splitDotted } from "./python-modules.js";
import type { PlantedCanary } from "./test-report.js";
import { testKey } from "./twins/twin.js";
import { parseUnittestArgs, renderUnittestArgs, type UnittestArgs } from "./unittest-args.js";
import { parseUnittestOutput } from "./unittest-output.js";

// unittest discover imports only files whose name is a module name (loader.VALID_MODULE_NAME).
const VALID_MODULE_NAME = /^[_a-z]\w*\.py$/i;

const isDir = (p: string) => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/** A file name matching a discovery pattern made of literal text and `*`s, or null. */
function fileForPattern(pattern: string): string | null {
  if (!/^[\w.*-]+$/.test(pattern) || !pattern.endsWith(".py")) return null;
  const file = pattern.replace(/\*/g, (_s, at: number) =>
    at === 0 ? plausibleName("_") : `_${plausibleName("_")}`,
  );
  return VALID_MODULE_NAME.test(file) && !file.slice(0, -3).includes(".") ? file : null;
}

/** Where the canary module goes, the name that runs it (none under discovery) and its -k word. */
function placeCanary(
  a: UnittestArgs,
  cwd: string,
): { path: string; name: string | null; word: string } | string {
  if (a.discover || a.names.length === 0) {
    const start = a.start ?? ".";
    let dir = resolve(cwd, start);
    // discover also takes an importable package name as its start.
    if (!isDir(dir) && /^[\w.]+$/.test(start)) dir = resolve(cwd, start.split(".").join("/"));
    if (!isDir(dir)) return `the discovery start ${start} is not a folder loopgate can plant its canary in`;
    const file = fileForPattern(a.pattern ?? "test*.py");
    if (!file)
      return `the discovery pattern ${a.pattern} is not a simple *-pattern loopgate can name a canary file for`;
    return { path: join(dir, file), name: null, word: file.slice(0, -3) };
  }
  // Beside the first named module, so it is importable the same way.
  const first = a.names[0] ?? "";
  const mod = canaryModuleName();
  const asPath = pathToModule(first, cwd);
  const split = asPath !== null && existsSync(resolve(cwd, first)) ? null : splitDotted(first, [cwd], cwd);
  let pkg = "";
  let dir = cwd;
  if (asPath !== null && !split) {
    pkg = asPath.split(".").slice(0, -1).join(".");
    dir = dirname(resolve(cwd, first));
  } else if (split?.found) {
    pkg = split.file.endsWith("__init__.py") ? split.module : split.module.split(".").slice(0, -1).join(".");
    dir = dirname(resolve(cwd, split.file));
  }
  return { path: join(dir, `${mod}.py`), name: pkg ? `${pkg}.${mod}` : mod, word: mod };
}

/** A name that selects a test that was renamed for this run selects each of its emitted names instead. */
function renamedNames(name: string, renamed: PlanInput["renamed"], cwd: string): string[] {
  if (!renamed.size || pathToModule(name, cwd) !== null) return [name];
  const s = splitDotted(name, [cwd], cwd);
  const emitted = s.found && s.rest.length ? renamed.get(testKey(s.file, s.rest)) : undefined;
  if (!emitted) return [name];
  return emitted.map((k) => [s.module, ...k.split("::").slice(1)].join("."));
}

/**
 * `python3 -m unittest`: all test modules load into one process. Its verbose lines name each test
 * (`test_x (pkg.mod.Class.test_x) ... ok`), its FAIL/ERROR blocks each failure, and `Ran N tests` with
 * the status line close the run; all are read from the run's output. Without twins, one planted
 * module holds loopgate's canary.
 */
export const unittest: RunnerAdapter = {
  id: "unittest",
  channel: "summary",
  plan(input: PlanInput): TamperPlan | string {
    const cwd = input.gateEnv;
    const a = parseUnittestArgs(input.argv.slice(input.offset));
    if (typeof a === "string") return a;
    if (a.failfast)
      return `${a.failfast} stops at the first failure, and loopgate's canary or mutated twins fail on purpose: the tests after them would not run`;
    a.names = a.names.flatMap((n) => renamedNames(n, input.renamed, cwd));
    // An explicit pattern (`*Case.test_x`) no longer matches a renamed test; its suffixed names do.
    const patterns = input.renamed.size
      ? a.patterns.filter((p) => p.includes("*") && !p.endsWith("*")).map((p) => `${p}_*`)
      : [];
    const names: string[] = [];
    const files: PlantedFile[] = [];
    let canary: PlantedCanary | null = null;
    if (input.canary) {
      const placed = placeCanary(a, cwd);
      if (typeof placed === "string") return placed;
      if (existsSync(placed.path))
        return `loopgate's canary file ${relative(cwd, placed.path)} would replace an existing file`;
      const c = unittestCanary();
      files.push({ path: placed.path, content: c.content });
      canary = c.canary;
      if (placed.name) names.push(placed.name);
      // -k filters every module, the canary's too: a pattern of its own keeps it in.
      if (a.patterns.length) patterns.push(placed.word);
    }
    return {
      runner: "unittest",
      cwd,
      argv: [...input.argv.slice(0, input.offset), ...renderUnittestArgs(a, { patterns, names })],
      env: {},
      files,
      canary,
      reportsToPath: false,
    };
  },
  parse(output: string, _reportText: string | null, plan: TamperPlan) {
    return parseUnittestOutput(output, plan);
  },
};
