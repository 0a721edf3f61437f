// Dimension 6, documentation: the README and the pages of docs/ beside it document every command and
// option of the CLI's own help, the set-up commands, the exit codes and every top-level task-file field,
// call nothing documented later work, and link only to files that exist inside the repository.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { TaskSchema } from "../core/task/task.js";
import { check, must, type SelftestContext } from "./check.js";
import { type DocPage, linkProblems, loadDocSet, page, unlinkedPages } from "./doc-pages.js";
import { commandExamples, exampleProblems } from "./readme-examples.js";
import { type DimensionResult, dimensionFromChecks } from "./verdict.js";

/** The commands a new user runs first (the README's install block): a fresh Debian/Ubuntu machine, as root or with sudo. */
export const SETUP_COMMANDS = [
  "apt-get install -y bubblewrap git python3-pytest",
  "sudo apt-get install -y bubblewrap git python3-pytest",
  "npm install && npx loopgate demo",
  "npm test",
] as const;

/** The reference pages the dimension reads for the command synopsis and the task-file fields. */
export const CLI_PAGE = "docs/reference/cli.md";
export const TASK_FILE_PAGE = "docs/reference/task-file.md";

/** The README may grow to this many lines; past it, the text belongs in docs/. */
export const README_MAX_LINES = 400;

/** Options every program has that the README need not repeat. */
const GENERIC_FLAGS = new Set(["--help", "--version"]);

/** One command line of the help: its words (`task check`), its synopsis up to the first bracket, its flags. */
export interface HelpCommand {
  words: string;
  synopsis: string;
  flags: string[];
}

const flagsIn = (text: string) => [...new Set(text.match(/--[a-z][a-z-]*/g) ?? [])];
const reEscape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The commands of a help text: its lines that start with `  loopgate `. */
export function helpCommands(help: string): HelpCommand[] {
  return help
    .split("\n")
    .filter((l) => l.startsWith("  loopgate "))
    .map((line) => {
      const tokens = line.trim().split(/\s+/).slice(1);
      const words = tokens.filter((_, i) => tokens.slice(0, i + 1).every((t) => /^[a-z][a-z-]*$/.test(t)));
      const upTo = tokens.findIndex((t) => /^[([]/.test(t) || /^[A-Z][a-z]/.test(t));
      const synopsis = `loopgate ${tokens.slice(0, upTo < 0 ? tokens.length : upTo).join(" ")}`;
      return { words: words.join(" "), synopsis, flags: flagsIn(line) };
    });
}

/** The flags a help text's Options section lists. */
export function helpOptions(help: string): string[] {
  const start = help.indexOf("\nOptions:");
  const end = help.indexOf("\nExit codes:", start);
  return start < 0
    ? []
    : flagsIn(help.slice(start, end < 0 ? undefined : end)).filter((f) => !GENERIC_FLAGS.has(f));
}

/** The top-level task-file fields, read from the schema itself (zod 4 keeps the shape through refinements). */
export function taskFields(): string[] {
  return Object.keys(TaskSchema.shape);
}

/** Whether `name` (`budget`, `budget.repairs`) is a field of the task schema. */
function isTaskField(name: string): boolean {
  const [top, sub] = name.split(".");
  const shape = TaskSchema.shape as Record<string, unknown>;
  if (!top || !(top in shape)) return false;
  if (sub === undefined) return true;
  // zod 4: unwrap optional/default wrappers down to an object's shape.
  let t = shape[top] as {
    shape?: Record<string, unknown>;
    unwrap?: () => unknown;
    def?: { innerType?: unknown };
  };
  for (let i = 0; i < 4 && !t.shape; i++) {
    const inner = (t.unwrap?.() ?? t.def?.innerType) as typeof t | undefined;
    if (!inner) break;
    t = inner;
  }
  return Boolean(t.shape && sub in t.shape);
}

/** A level-2 section of a markdown text, heading included, up to the next level-2 heading. */
function section(md: string, heading: string): string {
  const start = md.indexOf(`\n## ${heading}`);
  if (start < 0) return "";
  const end = md.indexOf("\n## ", start + 4);
  return md.slice(start, end < 0 ? undefined : end);
}

/** The top-level fields named in the first cell of each row of the task-file reference's `## Fields` table. */
export function documentedFields(md: string): string[] {
  const rows = section(md, "Fields")
    .split("\n")
    .filter((l) => l.startsWith("| `"));
  const names = rows.flatMap((r) =>
    [...(r.split("|")[1] ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? ""),
  );
  return [...new Set(names.map((n) => n.split(/[.[]/)[0] ?? n))];
}

/** `text` with `**` removed, so `**0** SUCCESS` reads as the help's `0 SUCCESS`. */
const plain = (text: string) => text.replace(/\*\*/g, "");

/** The documentation dimension over the README at `ctx.readme` and the `docs/` folder beside it. */
export async function documentationDimension(ctx: SelftestContext): Promise<DimensionResult> {
  const docs = loadDocSet(ctx.readme);
  const readme = (): DocPage => {
    must(docs.readme !== null, `no README at ${ctx.readme}`);
    return docs.readme;
  };
  /** The README and every page of docs/ (the README must exist: it is where a reader starts). */
  const all = (): DocPage[] => [readme(), ...docs.pages];
  const corpus = () =>
    all()
      .map((p) => p.text)
      .join("\n");
  const reference = (path: string): string => {
    readme();
    const p = page(docs, path);
    must(p, `no ${path} beside the README`);
    return p.text;
  };
  const commands = helpCommands(ctx.help);
  const mentions = (text: string, s: string) => new RegExp(`${reEscape(s)}(?![\\w-])`).test(text);
  const checks = [
    await check(
      "README exists",
      () => `${readme().text.split("\n").length} lines at ${ctx.readme}, ${docs.pages.length} pages in docs/`,
    ),
    await check("README and docs show every command of `loopgate --help`", () => {
      const text = corpus();
      must(commands.length > 0, "no command lines found in the help text");
      const missing = commands.filter((c) => !mentions(text, c.synopsis));
      must(missing.length === 0, `missing: ${missing.map((c) => c.synopsis).join("; ")}`);
      return `${commands.length} command synopses found`;
    }),
    await check("README and docs document every option of `loopgate --help`", () => {
      const text = corpus();
      const flags = [...new Set([...helpOptions(ctx.help), ...commands.flatMap((c) => c.flags)])];
      const missing = flags.filter((f) => !mentions(text, f));
      must(missing.length === 0, `missing: ${missing.join(", ")}`);
      return `${flags.length} options found`;
    }),
    await check("the CLI reference's synopsis names only commands the CLI has", () => {
      const block = /```\n([\s\S]*?)```/.exec(section(reference(CLI_PAGE), "Synopsis"))?.[1] ?? "";
      const listed = block.split("\n").filter((l) => l.startsWith("loopgate "));
      must(listed.length > 0, `no \`## Synopsis\` block with \`loopgate ...\` lines in ${CLI_PAGE}`);
      const known = new Set(commands.map((c) => c.words));
      const stale = listed.filter((l) => !known.has(helpCommands(`  ${l}`)[0]?.words ?? ""));
      must(stale.length === 0, `not in --help: ${stale.join("; ")}`);
      return `${listed.length} synopsis lines in ${CLI_PAGE}, all in --help`;
    }),
    await check("README shows the set-up commands and the exit codes of --help", () => {
      const text = plain(readme().text);
      const missing = SETUP_COMMANDS.filter((c) => !text.includes(c));
      must(missing.length === 0, `missing set-up commands: ${missing.join("; ")}`);
      const exit = /^Exit codes: .*$/m.exec(ctx.help)?.[0];
      must(exit, "the help states no exit codes");
      must(text.includes(exit), `README does not say: ${exit}`);
      return `${SETUP_COMMANDS.join("; ")}; ${exit}`;
    }),
    await check(
      "every `loopgate …` command the README and docs show matches --help (command, flags, files)",
      () => {
        const flags = [
          ...new Set([...GENERIC_FLAGS, ...helpOptions(ctx.help), ...commands.flatMap((c) => c.flags)]),
        ];
        // Bundled files (examples/…) are looked up in the installation, wherever the README is read from.
        const surface = {
          commands: commands.map((c) => c.words),
          flags,
          exists: (p: string) => existsSync(join(ctx.root, p)),
        };
        const examples = all().flatMap((p) => commandExamples(p.text).map((ex) => ({ p, ex })));
        must(examples.length > 0, "the README and docs show no loopgate command");
        const problems = examples.flatMap(({ p, ex }) =>
          exampleProblems(ex, surface).map((m) => `${p.path} ${m}`),
        );
        must(problems.length === 0, problems.slice(0, 5).join("; "));
        return `${examples.length} command examples, each a command, flags and files the CLI has`;
      },
    ),
    await check("README and docs do not call a documented flag or field later work", () => {
      const later = all()
        .flatMap((p) => [
          section(p.text, "Not yet here"),
          ...p.text
            .split(/(?<=\.)\s/)
            .filter((s) => /later version|later work|not yet (here|supported|implemented)/i.test(s)),
        ])
        .join("\n");
      const known = [...helpOptions(ctx.help), ...commands.flatMap((c) => c.flags)];
      const flagged = known.filter((f) => mentions(later, f));
      const fields = [...later.matchAll(/`([a-z_]+(?:\.[a-z_]+)?)`/g)]
        .map((m) => m[1] ?? "")
        .filter(isTaskField);
      must(
        flagged.length + fields.length === 0,
        `said to be later work, yet documented: ${[...flagged, ...fields].join(", ")}`,
      );
      return "nothing documented is called later work";
    }),
    await check(
      "the task-file reference has a row for every top-level field, and none for unknown ones",
      () => {
        const fields = taskFields();
        const rows = documentedFields(reference(TASK_FILE_PAGE));
        const missing = fields.filter((f) => !rows.includes(f));
        const unknown = rows.filter((r) => !fields.includes(r));
        const problems = [
          ...(missing.length ? [`no row for: ${missing.join(", ")}`] : []),
          ...(unknown.length ? [`rows for fields the schema lacks: ${unknown.join(", ")}`] : []),
        ];
        must(problems.length === 0, `${TASK_FILE_PAGE}: ${problems.join("; ")}`);
        return `${fields.length} fields documented in ${TASK_FILE_PAGE}: ${fields.join(", ")}`;
      },
    ),
    await check(
      "every link of the README and docs stays in the repository and names a file that exists",
      () => {
        const problems = all().flatMap((p) => linkProblems(p, docs.root, existsSync));
        must(problems.length === 0, problems.slice(0, 5).join("; "));
        return `links of ${all().length} pages resolve inside ${docs.root}`;
      },
    ),
    await check(
      `README is at most ${README_MAX_LINES} lines and docs/README.md links every page of docs/`,
      () => {
        const lines = readme().text.split("\n").length;
        must(
          lines <= README_MAX_LINES,
          `README has ${lines} lines (at most ${README_MAX_LINES}; move reference text to docs/)`,
        );
        const unlinked = unlinkedPages(docs);
        must(unlinked.length === 0, `not linked from docs/README.md: ${unlinked.join(", ")}`);
        return `${lines} lines; ${docs.pages.length} pages, all in the index`;
      },
    ),
  ];
  return dimensionFromChecks("documentation", checks);
}
