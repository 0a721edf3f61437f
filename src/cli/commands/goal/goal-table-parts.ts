import { LoopgateError } from "../../../core/kernel/errors.js";
import { need } from "../../flags/command-flags.js";
import type { FlagName, FlagValues } from "../../flags/flags.js";

// The pieces the goal control plane's command tables share: goal-table.ts (goal, scheduler, goals) and
// todo-gate-table.ts (todo, gate).

// biome-ignore lint/suspicious/noExplicitAny: each handler declares the flag shape it reads
export const f = (v: FlagValues): any => v;

/** The positional word at `index`, or a bad-input error naming the command and what is missing. */
export const word = need;

/** The subcommand in args[0], one of `known`, or a bad-input error listing them. */
export function sub<T extends string>(command: string, args: readonly string[], known: readonly T[]): T {
  const s = args[0];
  if (s === undefined || !(known as readonly string[]).includes(s))
    throw new LoopgateError(
      "bad_input",
      `loopgate ${command}: ${s === undefined ? "missing the subcommand" : `unknown subcommand ${JSON.stringify(s)}`}; one of ${known.join(", ")}; see loopgate ${command} --help`,
    );
  return s as T;
}

export const TODO_SPEC_FLAGS: readonly FlagName[] = [
  "content",
  "class",
  "task",
  "scope",
  "requires",
  "depends-on",
  "unblocks",
];
export const WRITE_FLAGS: readonly FlagName[] = ["store", "json", "expect-revision", "as"];
export const RUN_FLAGS: readonly FlagName[] = [
  "model",
  "builder",
  "oracle",
  "noop",
  "max-attempts",
  "builder-env",
  "builder-mount",
  "network",
  "unsafe-no-sandbox",
  "judge-model",
  "max-turns",
  "max-cost",
  "record",
  "base-url",
  "no-step-checks",
  "step-escalation",
  "verbose",
  "follow",
];

/** The actor rule, said once in the help of every command that writes to a goal. */
export const ACTOR_HELP = `Who, for every write a person makes (new, stop, resume, close, acceptance, vision, revert, todo, gate):
  --as NAME, else $LOOPGATE_ACTOR, else the OS user's name, else none (unknown); recorded as the write's
  actor (meta.by) and shown by goal history and loopgate events. Printable, at most 64 characters; a bad
  --as or $LOOPGATE_ACTOR is refused (exit 2) and nothing is written.`;
