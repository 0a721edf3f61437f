import { substituteBuilderArgs } from "./command-line.js";

/**
 * The most bytes one argument may take. Linux refuses a single argument of MAX_ARG_STRLEN (32 pages:
 * 128 KiB) or more with E2BIG; this leaves room below it.
 */
export const MAX_WORD_BYTES = 100 * 1024;

/**
 * The most bytes the whole argument list may take. Linux's ARG_MAX (`getconf ARG_MAX`: 2 MiB with the
 * default 8 MiB stack) covers arguments and environment together, and bubblewrap adds its own words.
 */
export const MAX_ARGV_BYTES = 1024 * 1024;

/** A builder's argv after substitution, or why it cannot be run; `note` says what loopgate changed. */
export type FittedArgv =
  | { argv: string[]; note: string | null; error: null }
  | { argv: null; note: null; error: string };

const bytes = (w: string) => Buffer.byteLength(w) + 1; // each argument ends with a NUL
const kib = (n: number) => `${Math.ceil(n / 1024)} KiB`;

function tooBig(argv: readonly string[]): string | null {
  let total = 0;
  for (const [i, w] of argv.entries()) {
    const n = bytes(w);
    total += n;
    if (n > MAX_WORD_BYTES)
      return `word ${i + 1} of the builder command would be ${kib(n)}, more than one argument may safely be (${kib(MAX_WORD_BYTES)}; Linux refuses 128 KiB)`;
  }
  if (total > MAX_ARGV_BYTES)
    return `the builder command would be ${kib(total)} of arguments, more than loopgate passes (${kib(MAX_ARGV_BYTES)}; Linux's ARG_MAX holds arguments and environment together)`;
  return null;
}

/**
 * Substitutes the placeholders of a builder command and keeps the result within the argument limits.
 * A `{prompt}` that would not fit is given the path of the prompt file instead (the same prompt, and
 * the required fix on later attempts), said in `note`; a command that still would not fit is an
 * error naming the word, so the builder is never started into E2BIG.
 */
export function fitBuilderArgv(
  words: readonly string[],
  values: Readonly<Record<string, string>>,
): FittedArgv {
  const argv = substituteBuilderArgs(words, values);
  const why = tooBig(argv);
  if (!why) return { argv, note: null, error: null };
  const usesPrompt = words.some((w) => w.includes("{prompt}"));
  const file = values.prompt_file ?? "";
  if (usesPrompt && file) {
    const swapped = substituteBuilderArgs(words, { ...values, prompt: file });
    const still = tooBig(swapped);
    if (!still)
      return {
        argv: swapped,
        note: `the prompt (${kib(Buffer.byteLength(values.prompt ?? ""))}) is too long for a command-line argument: ${why}; {prompt} was given the path of the prompt file instead (${file}); use {prompt_file} in the command to say so yourself`,
        error: null,
      };
    return { argv: null, note: null, error: `the builder cannot be started: ${still}; shorten the command` };
  }
  return {
    argv: null,
    note: null,
    error: `the builder cannot be started: ${why}; pass long text through a file ({prompt_file}) instead`,
  };
}
