/**
 * Reading a JavaScript test runner's own arguments (the argv after its launcher): which words are
 * options, which are their values and which are positional (files, folders, name patterns). Each runner's
 * table lists its options as its own parser reads them; a gate can always write `--option=value` to be
 * read right whatever the table says.
 */
export interface OptionTable {
  /** Options followed by one value (`--config x`, `-c x`), spelled as in argv after normalising. */
  value: ReadonlySet<string>;
  /** Options that take every following word up to the next option (yargs arrays, as Jest reads them). */
  array?: ReadonlySet<string>;
  /** Options that never take a value; `--no-x` negations are flags too. */
  flag?: ReadonlySet<string>;
  /** How an option in none of the sets is read: yargs (Jest) gives it the next word, others treat it as a flag. */
  unknownTakesValue?: boolean;
  /** How an option's name is compared: Jest and Vitest accept `--test-name-pattern` for `--testNamePattern`. */
  camelCase?: boolean;
}

/** `--test-name-pattern` → `--testNamePattern`; short options and camel-case names are unchanged. */
function camel(name: string): string {
  if (!name.startsWith("--")) return name;
  return `--${name.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())}`;
}

/** An option word's name without its `=value`, normalised as the table wants; null for a positional word. */
export function optionName(word: string, table: OptionTable): string | null {
  if (!word.startsWith("-") || word === "-") return null;
  const eq = word.indexOf("=");
  const name = eq > 0 ? word.slice(0, eq) : word;
  return table.camelCase ? camel(name) : name;
}

function takesValue(name: string, table: OptionTable): boolean {
  if (table.value.has(name)) return true;
  if (table.flag?.has(name) || name.startsWith("--no-") || /^--no[A-Z]/.test(name)) return false;
  return table.unknownTakesValue === true;
}

/** One word of a runner's argv as the runner reads it. */
export interface ArgWord {
  index: number;
  kind: "option" | "value" | "positional";
  /** For options: the normalised name. */
  name?: string;
}

/** Classifies every word of `args` (the runner's own arguments). After `--` every word is positional. */
export function readArgs(args: readonly string[], table: OptionTable): ArgWord[] {
  const out: ArgWord[] = [];
  let i = 0;
  while (i < args.length) {
    const word = args[i] ?? "";
    if (word === "--") {
      out.push({ index: i, kind: "option", name: "--" });
      for (let j = i + 1; j < args.length; j++) out.push({ index: j, kind: "positional" });
      break;
    }
    const name = optionName(word, table);
    if (name === null) {
      out.push({ index: i, kind: "positional" });
      i++;
      continue;
    }
    out.push({ index: i, kind: "option", name });
    i++;
    if (word.includes("=")) continue;
    const next = args[i];
    if (table.array?.has(name)) {
      while (i < args.length && optionName(args[i] ?? "", table) === null)
        out.push({ index: i++, kind: "value" });
    } else if (next !== undefined && takesValue(name, table) && optionName(next, table) === null) {
      out.push({ index: i++, kind: "value" });
    }
  }
  return out;
}

/** The positional words of `args`, in order. */
export function positionals(args: readonly string[], table: OptionTable): string[] {
  return readArgs(args, table)
    .filter((w) => w.kind === "positional")
    .map((w) => args[w.index] ?? "");
}

/** The first option of `names` present in `args`, as written (with its `=value` when it has one), or null. */
export function findOption(
  args: readonly string[],
  table: OptionTable,
  names: readonly string[],
): string | null {
  const wanted = new Set(names.map((n) => (table.camelCase ? camel(n) : n)));
  const hit = readArgs(args, table).find((w) => w.kind === "option" && wanted.has(w.name ?? ""));
  return hit ? (args[hit.index] ?? null) : null;
}

/** The value given to the last of the options `names` (`--x v` or `--x=v`), or null. */
export function optionValue(
  args: readonly string[],
  table: OptionTable,
  names: readonly string[],
): string | null {
  const wanted = new Set(names.map((n) => (table.camelCase ? camel(n) : n)));
  const words = readArgs(args, table);
  let value: string | null = null;
  words.forEach((w, k) => {
    if (w.kind !== "option" || !wanted.has(w.name ?? "")) return;
    const word = args[w.index] ?? "";
    const eq = word.indexOf("=");
    if (eq > 0) value = word.slice(eq + 1);
    else if (words[k + 1]?.kind === "value") value = args[w.index + 1] ?? null;
  });
  return value;
}

/**
 * `argv` with `flags` added where the runner still reads them as options (before a `--`, else at the
 * end) and `paths` added as positional words: right after the first positional word of the runner's
 * arguments when there is one (so no option before them can take them as its value), else at the end.
 */
export function withArgs(
  argv: readonly string[],
  offset: number,
  table: OptionTable,
  flags: readonly string[],
  paths: readonly string[] = [],
): string[] {
  const args = argv.slice(offset);
  const words = readArgs(args, table);
  const dashdash = words.find((w) => w.kind === "option" && w.name === "--");
  const out = [...argv];
  const flagAt = dashdash ? offset + dashdash.index : out.length;
  out.splice(flagAt, 0, ...flags);
  if (!paths.length) return out;
  const first = words.find((w) => w.kind === "positional");
  if (first === undefined) {
    out.push(...paths);
    return out;
  }
  const at = offset + first.index + 1;
  out.splice(at + (at > flagAt ? flags.length : 0), 0, ...paths);
  return out;
}
