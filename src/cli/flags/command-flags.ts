import { LoopgateError } from "../../core/kernel/errors.js";
import type { FlagName } from "./flags.js";

/** The flags `run`, `verify` and `task check` share. */
export const SANDBOX_FLAGS: readonly FlagName[] = [
  "store",
  "json",
  "builder-env",
  "builder-mount",
  "network",
  "unsafe-no-sandbox",
  "judge-model",
];
export const AGENT_FLAGS: readonly FlagName[] = [
  "max-turns",
  "max-cost",
  "record",
  "base-url",
  "no-step-checks",
  "step-escalation",
];

/** The positional word at `index`, or a bad-input error naming the command and what is missing. */
export function need(command: string, args: readonly string[], index: number, what: string): string {
  const v = args[index];
  if (!v)
    throw new LoopgateError(
      "bad_input",
      `loopgate ${command}: missing ${what}; see loopgate ${command} --help`,
    );
  return v;
}
