/**
 * `python -m unittest` command lines, read the way Python 3.11's unittest reads them (argparse: long
 * options may be abbreviated, short ones clustered, values attached or separate) and written back in a
 * form argparse accepts: every option first, then `-v`, then the test names. argparse takes the names
 * as one run of positional words, so a name after an option (`tests.test_x -v extra`) is an error.
 */

/** One option as argparse reads it: a flag (`-v`) or an option and its value. */
export interface UnittestOption {
  flag: string;
  value?: string;
}

/** A unittest command line, read. */
export interface UnittestArgs {
  /** `discover` given explicitly (discovery also runs when no names are given). */
  discover: boolean;
  /** The options to pass on as they are: everything but -k, -s, -p, -t and -f. */
  options: UnittestOption[];
  /** `-k` patterns, in order. */
  patterns: string[];
  /** The word that asked to stop at the first failure (`-f`, `--failfast`), if any. */
  failfast: string | null;
  /** discover's start folder, file pattern and top-level folder, when given. */
  start: string | null;
  pattern: string | null;
  top: string | null;
  /** Test names (modules, classes, methods or paths); empty under discovery. */
  names: string[];
}

const MAIN_LONG: Record<string, string> = {
  "--help": "-h",
  "--verbose": "-v",
  "--quiet": "-q",
  "--locals": "--locals",
  "--failfast": "-f",
  "--catch": "-c",
  "--buffer": "-b",
};
const DISCOVER_LONG: Record<string, string> = {
  ...MAIN_LONG,
  "--start-directory": "-s",
  "--pattern": "-p",
  "--top-level-directory": "-t",
};
const VALUED = new Set(["-k", "-s", "-p", "-t"]);

/** Reads the words after `python -m unittest`; a string says why they cannot be read. */
export function parseUnittestArgs(args: readonly string[]): UnittestArgs | string {
  const discover = (args[0] ?? "").toLowerCase() === "discover";
  const words = discover ? args.slice(1) : args;
  const longs = discover ? DISCOVER_LONG : MAIN_LONG;
  const shortValued = discover ? "kspt" : "k";
  const out: UnittestArgs = {
    discover,
    options: [],
    patterns: [],
    failfast: null,
    start: null,
    pattern: null,
    top: null,
    names: [],
  };
  let positional = 0;
  const take = (flag: string, word: string, value?: string) => {
    if (flag === "-k" && value !== undefined) out.patterns.push(value);
    else if (flag === "-s" && value !== undefined) out.start = value;
    else if (flag === "-p" && value !== undefined) out.pattern = value;
    else if (flag === "-t" && value !== undefined) out.top = value;
    else if (flag === "-f") out.failfast = word;
    else out.options.push(value === undefined ? { flag } : { flag, value });
  };
  const place = (w: string): string | null => {
    if (!discover) {
      out.names.push(w);
      return null;
    }
    // discover's positional start, pattern and top share their destinations with -s, -p and -t.
    const slot = (["start", "pattern", "top"] as const)[positional++];
    if (!slot) return `unittest discover takes at most three positional arguments, not ${w}`;
    out[slot] = w;
    return null;
  };
  let dashdash = false;
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? "";
    if (dashdash || w === "-" || !w.startsWith("-")) {
      const problem = place(w);
      if (problem) return problem;
    } else if (w === "--") dashdash = true;
    else if (w.startsWith("--")) {
      const eq = w.indexOf("=");
      const name = eq < 0 ? w : w.slice(0, eq);
      const hits = Object.keys(longs).filter((l) => l.startsWith(name));
      const full = hits.includes(name) ? name : hits.length === 1 ? hits[0] : undefined;
      const flag = full === undefined ? undefined : longs[full];
      // An option unittest does not know stays as it is: argparse refuses it and the run fails.
      if (flag === undefined) out.options.push({ flag: w });
      else if (VALUED.has(flag)) {
        const value = eq >= 0 ? w.slice(eq + 1) : words[++i];
        if (value === undefined) return `${w} needs a value`;
        take(flag, w, value);
      } else take(flag, w);
    } else {
      // A cluster of short options: `-vb`, `-kfast`, `-vk fast`, `-s=tests`.
      for (let j = 1; j < w.length; j++) {
        const c = w[j] ?? "";
        if (!shortValued.includes(c)) {
          take(`-${c}`, w);
          continue;
        }
        let value: string | undefined = w.slice(j + 1).replace(/^=/, "");
        if (!value) value = words[++i];
        if (value === undefined) return `-${c} needs a value`;
        take(`-${c}`, w, value);
        break;
      }
    }
  }
  return out;
}

/**
 * The words to run: the user's options, the -k patterns (with `patterns` added), `-v` last among the
 * options so verbosity ends at 2 whatever -q came before, then the names (with `names` added).
 */
export function renderUnittestArgs(
  a: UnittestArgs,
  extra: { patterns: readonly string[]; names: readonly string[] },
): string[] {
  const options = a.options.flatMap((o) => (o.value === undefined ? [o.flag] : [o.flag, o.value]));
  const patterns = [...a.patterns, ...extra.patterns].flatMap((p) => ["-k", p]);
  if (a.discover) {
    const where = [
      ...(a.start !== null ? ["-s", a.start] : []),
      ...(a.pattern !== null ? ["-p", a.pattern] : []),
      ...(a.top !== null ? ["-t", a.top] : []),
    ];
    return ["discover", ...options, ...patterns, "-v", ...where];
  }
  const names = [...a.names, ...extra.names];
  // A name that starts with `-` (given after `--`) must stay a name.
  const guard = names.some((n) => n.startsWith("-")) ? ["--"] : [];
  return [...options, ...patterns, "-v", ...guard, ...names];
}

/** The words after `-m unittest` in a planned argv (the launcher words before it vary). */
export function unittestWords(argv: readonly string[]): string[] {
  for (let i = 0; i + 1 < argv.length; i++)
    if (argv[i] === "-m" && argv[i + 1] === "unittest") return argv.slice(i + 2);
  return [];
}
