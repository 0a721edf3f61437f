/** What a runner's name pattern is matched against: the test's own name, or its describe blocks and name joined by spaces. */
export type NameMatch = "name" | "full";

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * A name pattern (a regular expression, as Jest's and Vitest's `-t`, Mocha's `--grep` and node's
 * `--test-name-pattern` read it) widened for a run whose tests were renamed: every test whose original
 * name the user's pattern selects is selected under each name it is emitted with (the renamed original
 * and its twins). Renaming appends words, so a pattern that does not end in `$` still matches; an
 * anchored one would leave them out. Keys are `file::Suite::name` (testKey); a `::` inside a name is
 * read as a separator, so such a test is not widened. Returns the pattern unchanged when nothing applies.
 */
export function widenNamePattern(
  pattern: string,
  renamed: ReadonlyMap<string, readonly string[]>,
  match: NameMatch,
): string {
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch {
    return pattern; // the runner reports a pattern it cannot read; loopgate adds nothing to it
  }
  const text = (key: string): string => {
    const parts = key.split("::").slice(1);
    return match === "name" ? (parts[parts.length - 1] ?? "") : parts.join(" ");
  };
  const extra = new Set<string>();
  for (const [original, emitted] of renamed) {
    if (!re.test(text(original))) continue;
    for (const e of emitted) extra.add(escapeRegExp(text(e)));
  }
  if (!extra.size) return pattern;
  return `(?:${pattern})|^(?:${[...extra].join("|")})$`;
}

/**
 * Widens, in place, the value of every name-pattern option of `names` (`-t x`, `-t=x`, `--grep x`) in
 * `argv` after `offset`, for a run whose tests were renamed (see widenNamePattern).
 */
export function widenNameOptions(
  argv: string[],
  offset: number,
  names: readonly string[],
  renamed: ReadonlyMap<string, readonly string[]>,
  match: NameMatch,
): void {
  for (let i = offset; i < argv.length; i++) {
    const a = argv[i] ?? "";
    const name = names.find((n) => a === n || a.startsWith(`${n}=`));
    if (name === undefined) continue;
    const joined = a.length > name.length;
    const at = joined ? i : i + 1;
    if (at >= argv.length) continue;
    const pattern = joined ? a.slice(name.length + 1) : (argv[at] ?? "");
    const wide = widenNamePattern(pattern, renamed, match);
    argv[at] = joined ? `${name}=${wide}` : wide;
    if (!joined) i++;
  }
}
