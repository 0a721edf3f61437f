import { existsSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { readRegularText } from "../../workspace/safe-read.js";
import type { PlanInput, PlantedFile, RunnerAdapter, TamperPlan } from "./adapter.js";
import { parsePytestOutput } from "./pytest-output.js";
import { canaryModuleName, pytestCanary } from "./python-canary.js";
import type { PlantedCanary } from "./test-report.js";
import { testKey } from "./twins/twin.js";

/** Short options that take a value (pytest's own, and xdist's -n): the rest of the cluster or the next word. */
const SHORT_VALUED = "kmpcorWn";
/** pytest's long options that take a value as the next word (`--tb short`) as well as `--tb=short`. */
const LONG_VALUED = new Set(
  [
    "pdbcls capture lfnf last-failed-no-failures durations durations-min verbosity tb show-capture color",
    "code-highlight pastebin junit-xml junitxml junit-prefix junitprefix pythonwarnings maxfail rootdir",
    "ignore ignore-glob deselect confcutdir import-mode doctest-report doctest-glob basetemp override-ini",
    "assert log-level log-format log-date-format log-cli-level log-cli-format log-cli-date-format log-file",
    "log-file-level log-file-format log-file-date-format log-auto-indent numprocesses maxprocesses dist",
    "cov-report cov-config cov-fail-under timeout reruns",
  ]
    .join(" ")
    .split(" ")
    .map((o) => `--${o}`),
);
const STOPS =
  "stops at the first failure, and loopgate's canary or mutated twins fail on purpose: the tests after them would not run";
const CACHE =
  "needs pytest's cache, which loopgate turns off (-p no:cacheprovider): a cache in the tree could steer the run";
const REFUSED: Record<string, string> = {
  "-x": STOPS,
  "--exitfirst": STOPS,
  "--maxfail": STOPS,
  "--sw": STOPS,
  "--stepwise": STOPS,
  "--sw-skip": STOPS,
  "--stepwise-skip": STOPS,
  "--lf": CACHE,
  "--last-failed": CACHE,
  "--ff": CACHE,
  "--failed-first": CACHE,
  "--nf": CACHE,
  "--new-first": CACHE,
  "--cache-clear": CACHE,
  "--cache-show": CACHE,
  "--lfnf": CACHE,
  "--last-failed-no-failures": CACHE,
  "--no-summary": "hides the short summary loopgate reads each test's result from",
};

const posix = (p: string) => p.split(sep).join("/");
const isDir = (p: string) => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/** A node id naming a test renamed for this run → the node ids of each of its emitted names. */
function renamedIds(id: string, renamed: PlanInput["renamed"], cwd: string): string[] {
  const at = id.indexOf("::");
  if (at < 0 || !renamed.size) return [id];
  const path = id.slice(0, at);
  const rest = id.slice(at + 2);
  const bare = rest.includes("[") ? rest.slice(0, rest.indexOf("[")) : rest;
  const emitted = renamed.get(testKey(posix(relative(cwd, resolve(cwd, path))), bare.split("::")));
  if (!emitted) return [id];
  // A parametrised id selects the whole renamed function: the twin's case ids differ from the original's.
  return emitted.map((k) => [path, ...k.split("::").slice(1)].join("::"));
}

/** The first folder `testpaths` names in the project's ini files, where a bare `pytest` collects. */
function testpathsDir(cwd: string): string | null {
  for (const f of ["pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"]) {
    const text = readRegularText(join(cwd, f));
    if (text === null) continue;
    const m = /^\s*testpaths\s*=[ \t]*([^\n]*)(?:\n([^\n]*))?/m.exec(text);
    if (!m) continue;
    const first = /[\w./-]+/.exec(`${m[1] ?? ""} ${m[2] ?? ""}`.replace(/[[\]"',]/g, " "))?.[0];
    return first && isDir(resolve(cwd, first)) ? resolve(cwd, first) : null;
  }
  return null;
}

/** The user's words read as pytest reads them: what is refused, the positionals, -k and -m. */
interface PytestArgs {
  words: string[];
  positionals: string[];
  /** Indices in `words` of -k options (with their values), to replace when the canary needs one. */
  keywordAt: number[];
  keyword: string | null;
  marker: boolean;
}

function readArgs(args: readonly string[], renamed: PlanInput["renamed"], cwd: string): PytestArgs | string {
  const out: PytestArgs = { words: [], positionals: [], keywordAt: [], keyword: null, marker: false };
  const option = (flag: string, value: string | undefined, words: string[]) => {
    if (flag === "-k") {
      out.keywordAt.push(out.words.length);
      out.keyword = value ?? "";
    }
    if (flag === "-m") out.marker = true;
    if (flag === "--deselect" && value !== undefined) {
      const joined = words.length === 1;
      for (const id of renamedIds(value, renamed, cwd))
        out.words.push(...(joined ? [`--deselect=${id}`] : ["--deselect", id]));
      return;
    }
    out.words.push(...words);
  };
  for (let i = 0; i < args.length; i++) {
    const w = args[i] ?? "";
    if (!w.startsWith("-") || w === "-") {
      out.positionals.push(w);
      out.words.push(...renamedIds(w, renamed, cwd));
    } else if (w.startsWith("--")) {
      const eq = w.indexOf("=");
      const name = eq < 0 ? w : w.slice(0, eq);
      const refused = REFUSED[name];
      if (refused) return `${name} ${refused}`;
      if (eq < 0 && LONG_VALUED.has(name) && i + 1 < args.length) {
        const v = args[++i] ?? "";
        option(name, v, [w, v]);
      } else option(name, eq < 0 ? undefined : w.slice(eq + 1), [w]);
    } else {
      // A cluster of short options: `-vx`, `-rA`, `-kfast`, `-vk fast`.
      let consumed: string[] = [w];
      for (let j = 1; j < w.length; j++) {
        const c = w[j] ?? "";
        const refused = REFUSED[`-${c}`];
        if (refused) return `-${c} ${refused}`;
        if (!SHORT_VALUED.includes(c)) continue;
        let value: string | undefined = w.slice(j + 1).replace(/^=/, "");
        if (!value) {
          value = args[++i];
          consumed = value === undefined ? [w] : [w, value];
        }
        if (c === "k" || c === "m") {
          // Written as its own option, so the canary's -k can replace it alone.
          if (j > 1) out.words.push(w.slice(0, j));
          option(`-${c}`, value, value === undefined ? [`-${c}`] : [`-${c}`, value]);
        } else out.words.push(...consumed);
        consumed = [];
        break;
      }
      if (consumed.length) out.words.push(...consumed);
    }
  }
  return out;
}

/**
 * `pytest` / `python3 -m pytest`: tests run in one process; each test's identity and outcome are read
 * from pytest's `-rA` short summary (`PASSED tests/test_x.py::Case::test_y[1-2]`). Selections (-k,
 * -m, node ids) are fine: identities decide. Without twins, a planted module holds loopgate's canary,
 * and a selection must keep it.
 */
export const pytest: RunnerAdapter = {
  id: "pytest",
  channel: "summary",
  plan(input: PlanInput): TamperPlan | string {
    const cwd = input.gateEnv;
    const a = readArgs(input.argv.slice(input.offset), input.renamed, cwd);
    if (typeof a === "string") return a;
    const words = [...a.words, "-rA", "-p", "no:cacheprovider"];
    const files: PlantedFile[] = [];
    let canary: PlantedCanary | null = null;
    if (input.canary) {
      if (a.marker)
        return "-m selects tests by marker and loopgate's canary carries none of yours, so it would not run (run task check to get a lock: mutated twins need no canary)";
      const first = a.positionals[0]?.split("::")[0];
      const at = first === undefined ? null : resolve(cwd, first);
      const dir =
        at === null ? (testpathsDir(cwd) ?? cwd) : isDir(at) ? at : existsSync(at) ? dirname(at) : cwd;
      const mod = canaryModuleName();
      const path = join(dir, `${mod}.py`);
      if (existsSync(path))
        return `loopgate's canary file ${relative(cwd, path)} would replace an existing file`;
      const c = pytestCanary();
      files.push({ path, content: c.content });
      canary = c.canary;
      if (a.keyword !== null) {
        // Only the last -k counts; the canary's module name is one of its tests' keywords.
        for (const i of [...a.keywordAt].reverse()) words.splice(i, words[i] === "-k" ? 2 : 1);
        words.push("-k", `(${a.keyword}) or ${mod}`);
      }
      // Inside a folder that is collected anyway, it is found there (named too, it would run twice).
      // Beside a file or node id it is named explicitly, so it is collected whatever python_files
      // says; a bare `pytest` keeps collecting its testpaths, with the canary in the first of them.
      if (at !== null && !isDir(at)) words.push(relative(cwd, path));
    }
    return {
      runner: "pytest",
      cwd,
      argv: [...input.argv.slice(0, input.offset), ...words],
      env: {},
      files,
      canary,
      reportsToPath: false,
    };
  },
  parse(output: string, _reportText: string | null, plan: TamperPlan) {
    return parsePytestOutput(output, plan);
  },
};
