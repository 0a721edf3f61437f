import { InputError } from "../core/kernel/errors.js";

/**
 * Splits a command line into argv the way a POSIX shell would split words (single quotes, double quotes,
 * backslash), without expanding anything: no variables, globs, pipes or redirections. `flag` names the
 * option the line came from in errors.
 */
export function splitCommandLine(line: string, flag = "--builder"): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === "\\" && i + 1 < line.length && '"\\$`'.includes(line[i + 1] as string))
        word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      if ("|&;<>".includes(c))
        throw new InputError(
          `the command contains ${c}, a shell operator; loopgate runs argv without a shell — wrap it: sh -c '…'`,
          flag,
        );
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new InputError(`unterminated ${quote} quote`, flag);
  if (inWord) words.push(word);
  if (words.length === 0) throw new InputError("the command is empty", flag);
  return words;
}

/** Substitutes `{prompt}`, `{prompt_file}`, `{required_fix}`, `{workspace}` inside each word. */
export function substituteBuilderArgs(
  words: readonly string[],
  values: Readonly<Record<string, string>>,
): string[] {
  return words.map((w) =>
    w.replace(/\{(prompt|prompt_file|required_fix|workspace)\}/g, (_, k: string) => values[k] ?? ""),
  );
}
