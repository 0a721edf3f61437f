// Locates the real agent CLIs (installed by `npm ci` as pinned dev dependencies) for tests that run them.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Either the binary's path, or why it is not usable here (printed by the skipping test). */
export type AgentBinary = { path: string; version: string } | { missing: string };

const PACKAGES = { claude: "@anthropic-ai/claude-code", codex: "@openai/codex" } as const;

/** The pinned `claude` or `codex` under node_modules/.bin, checked by running `--version`. */
export function agentBinary(name: "claude" | "codex"): AgentBinary {
  const path = join(ROOT, "node_modules", ".bin", name);
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    devDependencies?: Record<string, string>;
  };
  const pinned = pkg.devDependencies?.[PACKAGES[name]];
  if (!existsSync(path))
    return { missing: `${path} is missing (npm ci installs ${PACKAGES[name]}@${pinned})` };
  const run = spawnSync(path, ["--version"], { encoding: "utf8", timeout: 60_000 });
  if (run.status !== 0) return { missing: `${path} --version failed: ${run.error?.message ?? run.stderr}` };
  const version = run.stdout.trim();
  if (pinned !== undefined && !version.includes(pinned))
    return { missing: `${path} is ${version}, not the pinned ${pinned}` };
  return { path, version };
}
