import { z } from "zod";
import { InputError } from "../../core/kernel/errors.js";
import { FLAGS, type FlagName, type FlagSpec, type FlagValues, type RawFlagValues } from "./flags.js";
import { didYouMean } from "./suggest.js";

// The flags a command accepts, as one zod schema per command, built from the flag table: a flag the
// command does not take, or a value its check refuses, is an error naming the flag and the command.

/** A numeric flag's value: what it must be, said once for every flag that has that check. */
function numeric(want: string, ok: (n: number) => boolean, max?: number) {
  return z.string().transform((value, ctx) => {
    const n = /^\s*$/.test(value) ? Number.NaN : Number(value);
    if (!ok(n)) {
      ctx.addIssue({ code: "custom", message: `expected ${want}, got ${JSON.stringify(value)}` });
      return z.NEVER;
    }
    if (max !== undefined && n > max) {
      ctx.addIssue({ code: "custom", message: `expected at most ${max}, got ${JSON.stringify(value)}` });
      return z.NEVER;
    }
    return n;
  });
}

/** A whole number ≥ 1: `--max-attempts`, `--max-turns`, `--limit`, `--days`. */
export const positiveInteger = (max?: number) =>
  numeric("a positive whole number (1 or more)", (n) => Number.isInteger(n) && n >= 1, max);
/** A whole number ≥ 0: `--keep`. */
export const countValue = (max?: number) =>
  numeric("a whole number (0 or more)", (n) => Number.isInteger(n) && n >= 0, max);
/** A number > 0: `--max-cost`. */
export const positiveNumber = (max?: number) =>
  numeric("a number greater than 0", (n) => Number.isFinite(n) && n > 0, max);

/** The schema of one flag's value, from its entry in the flag table. */
export function flagValueSchema(name: FlagName): z.ZodType {
  const spec: FlagSpec = FLAGS[name];
  if (spec.value === undefined) return z.literal(true);
  if (spec.multiple) return z.array(z.string());
  if (spec.check === "positive-int") return positiveInteger(spec.max);
  if (spec.check === "count") return countValue(spec.max);
  if (spec.check === "positive") return positiveNumber(spec.max);
  return z.string();
}

/** A command's flags as one strict schema: only the flags it accepts, each with its value's schema. */
export function commandFlagsSchema(accepted: readonly FlagName[]) {
  return z.strictObject(Object.fromEntries(accepted.map((n) => [n, flagValueSchema(n).optional()])));
}

/**
 * Checks and converts the flags given to `command` against its schema. The first flag it does not take
 * (in the order written) is refused, saying which commands take it and suggesting the closest one it
 * does take; then the first value a check refuses, naming the flag and the command.
 */
export function parseCommandFlags(
  command: string,
  raw: RawFlagValues,
  given: readonly FlagName[],
  accepted: readonly FlagName[],
  takers: (flag: FlagName) => readonly string[] = () => [],
): FlagValues {
  const result = commandFlagsSchema(accepted).safeParse(raw);
  if (result.success) return result.data as FlagValues;
  const unknown = new Set(
    result.error.issues.flatMap((i) => (i.code === "unrecognized_keys" ? (i.keys as string[]) : [])),
  );
  const foreign = given.find((f) => unknown.has(f));
  if (foreign !== undefined) {
    const own = accepted.filter((a) => a !== "help" && a !== "version").map((a) => `--${a}`);
    const who = takers(foreign);
    const where = who.length ? `applies only to loopgate ${who.join(", ")}, not to` : "does not apply to";
    throw new InputError(
      `--${foreign} ${where} loopgate ${command}${didYouMean(`--${foreign}`, own)}; see loopgate ${command} --help`,
    );
  }
  const issue = result.error.issues[0];
  const flag = String(issue?.path[0] ?? "?");
  throw new InputError(`${issue?.message ?? "invalid value"} (loopgate ${command})`, `--${flag}`);
}
