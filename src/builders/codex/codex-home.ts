import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hookCommand } from "../claude/claude-settings.js";
import { FORWARDER_SCRIPT } from "../claude/hook-forwarder.js";

/** config.toml of the private CODEX_HOME: one provider, nothing else of the user's configuration. */
export function codexConfig(baseUrl: string, model: string, envKey: string): string {
  const q = (s: string) => JSON.stringify(s);
  return [
    `model = ${q(model)}`,
    'model_provider = "loopgate"',
    "",
    "[model_providers.loopgate]",
    'name = "loopgate provider"',
    `base_url = ${q(baseUrl)}`,
    `env_key = ${q(envKey)}`,
    'wire_api = "responses"',
    "",
  ].join("\n");
}

/**
 * The Stop hook in Codex 0.169.0's config shape (an inline `[[hooks.Stop]]` group with one command
 * handler): `command` runs through the shell; `timeout` is Codex's own limit, longer than the
 * forwarder's deadline, so that it is loopgate that answers (and blocks) when time runs out.
 */
export function codexStopHook(command: string, timeoutSeconds: number): string {
  return [
    "[[hooks.Stop]]",
    "[[hooks.Stop.hooks]]",
    'type = "command"',
    `command = ${JSON.stringify(command)}`,
    `timeout = ${timeoutSeconds}`,
    "",
  ].join("\n");
}

/** The folder of the Stop hook's forwarder and the hook server's socket, in the run folder `base`. */
export const codexHooksDir = (base: string) => join(base, "codex-hooks");

/** What `writeCodexHome` made: CODEX_HOME, its config.toml, and the read-only folder of the forwarder. */
export interface CodexHome {
  home: string;
  config: string;
  hooksDir: string;
}

/**
 * Writes the run's private CODEX_HOME (outside the workspace; Codex writes its sessions there) with a
 * config.toml declaring the provider and loopgate's Stop hook, and the hook's forwarder in `hooksDir`
 * (made by `freshHookDir`, holding the hook server's socket). config.toml is 0444 and mounted read-only
 * over itself, the forwarder's folder 0555 and mounted read-only: the agent can change neither. The hook
 * command names the socket and holds no credential (hook-server.ts).
 */
export function writeCodexHome(
  base: string,
  o: {
    baseUrl: string;
    model: string;
    envKey: string;
    node: string;
    socket: string;
    deadlineSeconds: number;
  },
): CodexHome {
  const home = join(base, "codex-home");
  const hooksDir = codexHooksDir(base);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  mkdirSync(hooksDir, { recursive: true, mode: 0o700 });
  const forwarder = join(hooksDir, "loopgate-hook.mjs");
  writeFileSync(forwarder, FORWARDER_SCRIPT, { mode: 0o444 });
  chmodSync(hooksDir, 0o555);
  const command = hookCommand({
    node: o.node,
    forwarder,
    socket: o.socket,
    deadlineSeconds: o.deadlineSeconds,
  });
  const config = join(home, "config.toml");
  writeFileSync(
    config,
    `${codexConfig(o.baseUrl, o.model, o.envKey)}\n${codexStopHook(command, o.deadlineSeconds + 30)}`,
    { mode: 0o444 },
  );
  return { home, config, hooksDir };
}
