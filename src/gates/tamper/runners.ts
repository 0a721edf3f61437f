import { basename } from "node:path";
import type { RunnerAdapter } from "./adapter.js";
import { cargoTest } from "./cargo-test.js";
import { goTest } from "./go-test.js";
import { jest, vitest } from "./js-frameworks.js";
import { nodeTest } from "./node-test.js";
import { pytest, unittest } from "./python.js";

/** Every runner loopgate instruments, for the README and `task check`. */
export const RUNNERS: readonly RunnerAdapter[] = [
  nodeTest,
  unittest,
  pytest,
  goTest,
  cargoTest,
  vitest,
  jest,
];

const PYTHON = /^python(\d+(\.\d+)?)?$/;
const NODE = /^node(js)?$/;

/** The adapter for a gate's argv and how many leading words are its launcher, or null for a runner loopgate does not know. */
export function recogniseRunner(argv: readonly string[]): { adapter: RunnerAdapter; offset: number } | null {
  let i = 0;
  let prog = basename(argv[0] ?? "");
  if (prog === "npx") {
    i = 1;
    while (i < argv.length && (argv[i] ?? "").startsWith("-")) i++;
    prog = basename(argv[i] ?? "");
  }
  if (NODE.test(prog)) {
    // node --test …, or node running a test framework's entry point.
    if (argv.slice(i + 1).includes("--test")) return { adapter: nodeTest, offset: i + 1 };
    const script = argv[i + 1] ?? "";
    if (/node_modules\/(\.bin\/vitest|vitest\/vitest\.mjs)$/.test(script))
      return { adapter: vitest, offset: i + 2 };
    if (/node_modules\/(\.bin\/jest|jest\/bin\/jest\.js)$/.test(script))
      return { adapter: jest, offset: i + 2 };
    return null;
  }
  if (PYTHON.test(prog) && argv[i + 1] === "-m") {
    if (argv[i + 2] === "unittest") return { adapter: unittest, offset: i + 3 };
    if (argv[i + 2] === "pytest") return { adapter: pytest, offset: i + 3 };
    return null;
  }
  if (prog === "pytest" || prog === "py.test") return { adapter: pytest, offset: i + 1 };
  if (prog === "go" && argv[i + 1] === "test") return { adapter: goTest, offset: i + 2 };
  if (prog === "cargo" && argv[i + 1] === "test") return { adapter: cargoTest, offset: i + 2 };
  if (prog === "vitest") return { adapter: vitest, offset: i + 1 };
  if (prog === "jest") return { adapter: jest, offset: i + 1 };
  return null;
}
