import { InputError } from "../../core/kernel/errors.js";
import { FLAGS, type FlagName, type FlagSpec, type RawFlagValues } from "./flags.js";
import { didYouMean } from "./suggest.js";

/** A command line split into flags (checked against `FLAGS`) and positional words, in order. */
export interface ParsedArgs {
  /** As written; each command's schema checks and converts them (flag-values.ts). */
  flags: RawFlagValues;
  /** The flags as the user wrote them, in order (for "does not apply" errors). */
  given: FlagName[];
  positionals: string[];
}

const table: Record<string, FlagSpec> = FLAGS;
const longNames = Object.keys(FLAGS).map((n) => `--${n}`);
const byShort = new Map<string, FlagName>(
  Object.entries(table).flatMap(([n, s]) => (s.short ? [[`-${s.short}`, n as FlagName] as const] : [])),
);

/**
 * Parses argv. `--name value` and `--name=value` both work; a value may start with `-` (`--max-attempts
 * -1` reaches the command's value check, which names the flag), but not with `--` unless written `--name=--x`.
 * `--` ends the flags. Every error is an InputError naming the flag, with the closest known flag.
 */
export function parseArgv(argv: readonly string[]): ParsedArgs {
  const flags: RawFlagValues = {};
  const given: FlagName[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!token.startsWith("-") || token === "-") {
      positionals.push(token);
      continue;
    }
    const eq = token.startsWith("--") ? token.indexOf("=") : -1;
    const written = eq < 0 ? token : token.slice(0, eq);
    const name = byShort.get(written) ?? (written.startsWith("--") ? written.slice(2) : undefined);
    const spec = name === undefined ? undefined : table[name];
    if (name === undefined || spec === undefined)
      throw new InputError(`unknown flag${didYouMean(written, longNames)}; see loopgate --help`, written);
    const flag = name as FlagName;
    let value: string | true;
    if (spec.value === undefined) {
      if (eq >= 0) throw new InputError("is a switch and takes no value", written);
      value = true;
    } else if (eq >= 0) value = token.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith("--") && next.length > 2))
        throw new InputError(
          `needs a value (${spec.value})${next ? `, got the flag ${next}; write ${written}=${next} if you mean it` : ""}`,
          written,
        );
      value = next;
      i++;
    }
    const before = flags[flag];
    if (spec.multiple) flags[flag] = [...((before as string[] | undefined) ?? []), value as string];
    else if (before !== undefined && before !== value)
      throw new InputError(`given twice (${JSON.stringify(before)} and ${JSON.stringify(value)})`, written);
    else flags[flag] = value;
    given.push(flag);
  }
  return { flags, given, positionals };
}
