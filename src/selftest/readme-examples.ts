// The `loopgate …` commands a README shows (in code blocks and inline code), and what is wrong with each
// against the CLI's own help: a command it does not have, a flag it does not document, a bundled file
// that is not there. Pure apart from the file-existence probe, which is passed in.
import { posix } from "node:path";

/** One command example: where it is (1-based line) and its words, without `npx` and trailing comments. */
export interface CommandExample {
  line: number;
  text: string;
  words: string[];
}

const START = /^(?:npx\s+)?loopgate(?:\s|$)/;

/** Every `loopgate …` / `npx loopgate …` command of a markdown text: shell lines in fences, inline code. */
export function commandExamples(md: string): CommandExample[] {
  const out: CommandExample[] = [];
  const lines = md.split("\n");
  let fence: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? "";
    const f = /^```(\w*)/.exec(raw);
    if (f) {
      fence = fence === null ? (f[1] ?? "") : null;
      continue;
    }
    if (fence !== null) {
      if (!["", "sh", "bash", "shell", "console"].includes(fence)) continue;
      let text = raw.replace(/^\s*\$\s+/, "").trim();
      const first = i + 1;
      // A shell continuation: the command goes on on the next line.
      while (text.endsWith("\\") && i + 1 < lines.length)
        text = `${text.slice(0, -1)} ${(lines[++i] ?? "").trim()}`;
      for (const part of text.split(/\s*(?:&&|\|\||;)\s*/)) {
        const cmd = part.replace(/\s+#.*$/, "").trim();
        if (START.test(cmd)) out.push({ line: first, text: cmd, words: shellWords(cmd) });
      }
      continue;
    }
    for (const m of raw.matchAll(/`([^`]+)`/g)) {
      const cmd = (m[1] ?? "").trim();
      if (START.test(cmd)) out.push({ line: i + 1, text: cmd, words: shellWords(cmd) });
    }
  }
  return out;
}

/** Words as a shell splits them (quotes kept together, quotes removed); enough for flags and paths. */
function shellWords(s: string): string[] {
  return [...s.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? "");
}

/** What the examples are checked against. */
export interface CliSurface {
  /** Command words of the help (`run`, `task check`, `exp run`). */
  commands: readonly string[];
  /** Every flag the help documents. */
  flags: readonly string[];
  /** Whether a path relative to the README's folder exists. */
  exists(path: string): boolean;
}

/** The problems of one example, empty when it matches the help. */
export function exampleProblems(ex: CommandExample, cli: CliSurface): string[] {
  const words = ex.words[0] === "npx" ? ex.words.slice(2) : ex.words.slice(1);
  const problems: string[] = [];
  const head = words[0];
  // Only a word can name a command: `loopgate …` in prose, or a table row that starts with the name, cannot.
  if (head !== undefined && /^[a-z][a-z-]*$/.test(head) && head !== "help") {
    // A command is its words in the help (`run`, `task check`, `goal vision show`), the example's first words.
    const known = cli.commands.some((c) => c.split(" ").every((w, i) => words[i] === w));
    if (!known) problems.push(`no command "${head}" in --help`);
  }
  // Words after `--` are another program's (`loopgate claude TASK -- --allowedTools Bash`).
  const end = words.indexOf("--");
  for (const w of end < 0 ? words : words.slice(0, end)) {
    // Flags in a synopsis come bracketed (`[--json]`); placeholders and prose (`…`, `RUN`) are not flags.
    const flag = /^\[?(--[a-z][a-z-]*)/.exec(w)?.[1];
    if (flag && !cli.flags.includes(flag)) problems.push(`${flag} is not a flag of --help`);
    const path = /^(?:scripted:|replay:)?((?:\.\/)?examples\/\S+)$/.exec(w)?.[1];
    if (path && !/[A-Z…{}]/.test(path) && !cli.exists(posix.normalize(path)))
      problems.push(`${path} does not exist`);
  }
  return problems.map((p) => `line ${ex.line}: \`${ex.text.slice(0, 80)}\`: ${p}`);
}
