import type { CommandIO } from "../output/io.js";
import type { FlagName, FlagValues } from "./flags.js";

/**
 * One command of the CLI: how it is written, what it does, the flags it takes and how it runs. The
 * help (`help.ts`), the flag checks and the dispatch in `main.ts` are all derived from this table, so
 * adding a command is one entry here. Handlers are imported lazily: `--version` loads nothing else.
 */
export interface CommandSpec {
  /** The first word: `loopgate NAME …`. */
  name: string;
  /** Synopsis lines, each starting with `loopgate `. */
  usage: readonly string[];
  /** What it does, for the help (a few lines). */
  about: string;
  /** The flags it takes (besides --help and --version). */
  flags: readonly FlagName[];
  /** The most positional words it takes after its name. */
  maxArgs: number;
  /** Its exit codes, when they are not the run's (0 SUCCESS, 1 ESCALATED, 2 TOOL_FAILURE or bad input). */
  exit?: string;
  run(io: CommandIO, args: string[], flags: FlagValues): Promise<number>;
}
