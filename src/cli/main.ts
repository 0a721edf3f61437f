import { readFileSync } from "node:fs";
import { z } from "zod";
import { LoopgateError } from "../core/kernel/errors.js";
import { packagePath } from "../core/kernel/package-root.js";
import { COMMANDS, findCommand } from "./commands-table.js";
import { parseArgv } from "./flags/args.js";
import { parseCommandFlags } from "./flags/flag-values.js";
import { GLOBAL_FLAGS } from "./flags/flags.js";
import { commandHelp, helpText } from "./flags/help.js";
import { didYouMean } from "./flags/suggest.js";
import { EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_SUCCESS } from "./output/exit-codes.js";
import { pasteable } from "./output/hints.js";
import { type CommandIO, processIO } from "./output/io.js";

/** package.json's version. */
function version(): string {
  const file = packagePath("package.json");
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
}

/**
 * Commands that stay up and parse records by the thousand (a worker, the board, the MCP server) keep zod's
 * compiled parsers. Every other command is a short process that parses a few hundred records at most:
 * compiling a parser for each schema it meets (zod's default, `new Function` per object schema) cost more
 * than the parsing it speeds up (about 12 ms of a 180 ms `goal status`).
 */
const LONG_LIVED: ReadonlySet<string> = new Set(["worker", "serve", "mcp"]);

/** The CLI entry: parses argv, runs one command, maps every error to a message and an exit code. */
export async function main(argv: string[], io: CommandIO = processIO): Promise<number> {
  try {
    const { flags, given, positionals } = parseArgv(argv);
    const [name, ...rest] = positionals;
    if (name !== undefined && !LONG_LIVED.has(name)) z.config({ jitless: true });
    if (flags.version) {
      io.out(`${version()}\n`);
      return EXIT_SUCCESS;
    }
    if (name === undefined) {
      io.out(helpText(COMMANDS));
      return flags.help ? EXIT_SUCCESS : EXIT_BAD_INPUT;
    }
    const command = findCommand(name);
    if (!command)
      throw new LoopgateError(
        "bad_input",
        `unknown command ${JSON.stringify(name)}${didYouMean(
          name,
          COMMANDS.map((c) => c.name),
        )}; see loopgate --help`,
      );
    const checked = parseCommandFlags(name, flags, given, [...command.flags, ...GLOBAL_FLAGS], (flag) =>
      COMMANDS.filter((c) => c.flags.includes(flag)).map((c) => c.name),
    );
    if (flags.help) {
      io.out(command.name === "help" ? helpText(COMMANDS) : commandHelp(COMMANDS, command.name));
      return EXIT_SUCCESS;
    }
    // A stray word (`run a.yaml b.yaml`) is refused rather than silently ignored.
    if (rest.length > command.maxArgs)
      throw new LoopgateError(
        "bad_input",
        `loopgate ${name}: unexpected argument ${JSON.stringify(rest[command.maxArgs])}; see loopgate ${name} --help`,
      );
    return await command.run(io, rest, checked);
  } catch (e) {
    if (e instanceof LoopgateError) {
      const message = pasteable(e.message);
      io.err(`${message.startsWith("loopgate ") ? message : `loopgate: ${message}`}\n`);
      return EXIT_BAD_INPUT;
    }
    io.err(`loopgate: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return EXIT_FAILURE;
  }
}
