import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../core/kernel/package-root.js";
import type { Check } from "./verdict.js";

/** What every dimension may read: where loopgate is installed and which README to measure. */
export interface SelftestContext {
  /** The package root (package.json, examples/, README.md). */
  root: string;
  /** The README the documentation dimension reads (`$LOOPGATE_SELFTEST_README` or `<root>/README.md`). */
  readme: string;
  /** Where provider keys are looked up (default process.env). */
  env: NodeJS.ProcessEnv;
  /** The CLI's help text, which the documentation dimension holds the README to (passed in by the CLI). */
  help: string;
}

/** A check's expectation did not hold. */
export class CheckFailure extends Error {}

/** Throws a CheckFailure with `message` unless `condition` holds. */
export function must(condition: unknown, message: string): asserts condition {
  if (!condition) throw new CheckFailure(message);
}

/** Runs one check: its detail on success; anything thrown (an expectation, a crash) is a failed check. */
export async function check(name: string, fn: () => Promise<string> | string): Promise<Check> {
  try {
    return { name, ok: true, detail: await fn() };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return { name, ok: false, detail: message.split("\n").slice(0, 4).join(" | ").slice(0, 600) };
  }
}

/** Runs `fn` with a fresh temporary folder, removed afterwards whatever happens. */
export async function withTemp<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), `loopgate-selftest-${prefix}-`));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The installed package's root: the nearest folder above this file whose package.json names loopgate. */
export const installRoot = packageRoot;

/** The context the CLI runs the self-test in. */
export function defaultContext(help: string, env: NodeJS.ProcessEnv = process.env): SelftestContext {
  const root = installRoot();
  return { root, readme: env.LOOPGATE_SELFTEST_README || join(root, "README.md"), env, help };
}
