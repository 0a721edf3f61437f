import { basename } from "node:path";
import type { RunnerAdapter } from "./adapter.js";
import { cargoTest } from "./cargo-test.js";
import { goTest } from "./go-test.js";
import { jest } from "./jest.js";
import { mocha } from "./mocha.js";
import { nodeTest } from "./node-test.js";
import { pytest, unittest } from "./python.js";
import { tape } from "./tape.js";
import { vitest } from "./vitest.js";

/** Every runner loopgate instruments, for docs/explanation/tamper-checks.md and `task check`. */
export const RUNNERS: readonly RunnerAdapter[] = [
  nodeTest,
  unittest,
  pytest,
  goTest,
  cargoTest,
  vitest,
  jest,
  mocha,
  tape,
];

const PYTHON = /^python(\d+(\.\d+)?)?$/;
const NODE = /^node(js)?$/;

/** A JavaScript runner's command by its name (`npx jest`, `node_modules/.bin/mocha`). */
const JS_BINS: Record<string, RunnerAdapter> = { vitest, jest, mocha, _mocha: mocha, tape };

/** A JavaScript runner's entry point inside node_modules, run by `node` (or as a program of its own). */
const JS_SCRIPTS: [RegExp, RunnerAdapter][] = [
  [/(^|\/)node_modules\/(\.bin\/vitest|vitest\/vitest\.mjs)$/, vitest],
  [/(^|\/)node_modules\/(\.bin\/jest|(jest|jest-cli)\/bin\/jest(\.js)?)$/, jest],
  [/(^|\/)node_modules\/(\.bin\/_?mocha|mocha\/bin\/_?mocha(\.js)?)$/, mocha],
  [/(^|\/)node_modules\/(\.bin\/tape|tape\/bin\/tape(\.js)?)$/, tape],
];

/** npx options that take the next word as their value (npm 7 and later). */
const NPX_VALUE = new Set(["-p", "--package", "--cache", "--userconfig", "--registry", "-w", "--workspace"]);
/** npx options after which the command is a shell string, not an argv loopgate can read. */
const NPX_SHELL = new Set(["-c", "--call"]);

/**
 * node's options that take the next word as their value, so it is not taken for the script. Other
 * options are flags or are written `--option=value`.
 */
const NODE_VALUE = new Set([
  "-r",
  "--require",
  "--import",
  "--loader",
  "--experimental-loader",
  "-C",
  "--conditions",
  "--input-type",
  "--title",
  "--env-file",
  "--inspect-port",
  "--disable-warning",
  "--redirect-warnings",
  "--openssl-config",
  "--icu-data-dir",
  "--diagnostic-dir",
  "--heapsnapshot-signal",
  "--trace-event-categories",
  "--watch-path",
  "--test-reporter",
  "--test-reporter-destination",
  "--test-name-pattern",
  "--test-skip-pattern",
  "--test-concurrency",
  "--test-shard",
  "--test-timeout",
]);

/** The index of the command npx runs (after its own options), or -1 when npx runs a shell string. */
function afterNpx(argv: readonly string[]): number {
  let i = 1;
  while (i < argv.length) {
    const a = argv[i] ?? "";
    if (a === "--") return i + 1;
    if (!a.startsWith("-")) return i;
    const name = a.includes("=") ? a.slice(0, a.indexOf("=")) : a;
    if (NPX_SHELL.has(name)) return -1;
    i += NPX_VALUE.has(name) && !a.includes("=") ? 2 : 1;
  }
  return i;
}

/** What `node …` runs: the test runner (`--test` among node's own options) or a runner's entry point. */
function recogniseNode(
  argv: readonly string[],
  at: number,
): { adapter: RunnerAdapter; offset: number } | null {
  let j = at + 1;
  let test = false;
  while (j < argv.length) {
    const a = argv[j] ?? "";
    if (a === "--") {
      j++;
      break;
    }
    if (!a.startsWith("-") || a === "-") break;
    if (a === "--test") test = true;
    j += NODE_VALUE.has(a) ? 2 : 1;
  }
  if (test) return { adapter: nodeTest, offset: at + 1 };
  const script = argv[j] ?? "";
  const hit = JS_SCRIPTS.find(([re]) => re.test(script));
  return hit ? { adapter: hit[1], offset: j + 1 } : null;
}

/** The adapter for a gate's argv and how many leading words are its launcher, or null for a runner loopgate does not know. */
export function recogniseRunner(argv: readonly string[]): { adapter: RunnerAdapter; offset: number } | null {
  let i = 0;
  if (basename(argv[0] ?? "") === "npx") {
    i = afterNpx(argv);
    if (i < 0) return null;
  }
  const word = argv[i] ?? "";
  const prog = basename(word);
  if (NODE.test(prog)) return recogniseNode(argv, i);
  const script = JS_SCRIPTS.find(([re]) => re.test(word));
  if (script) return { adapter: script[1], offset: i + 1 };
  const bin = Object.hasOwn(JS_BINS, prog) ? JS_BINS[prog] : undefined;
  if (bin) return { adapter: bin, offset: i + 1 };
  if (PYTHON.test(prog) && argv[i + 1] === "-m") {
    if (argv[i + 2] === "unittest") return { adapter: unittest, offset: i + 3 };
    if (argv[i + 2] === "pytest") return { adapter: pytest, offset: i + 3 };
    return null;
  }
  if (prog === "pytest" || prog === "py.test") return { adapter: pytest, offset: i + 1 };
  if (prog === "go" && argv[i + 1] === "test") return { adapter: goTest, offset: i + 2 };
  if (prog === "cargo" && argv[i + 1] === "test") return { adapter: cargoTest, offset: i + 2 };
  return null;
}
