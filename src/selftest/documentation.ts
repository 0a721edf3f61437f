// Dimension 6, documentation: the README documents every command and option of the CLI's own
// help, the set-up commands, the exit codes and every top-level task-file field, and nothing stale.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { TaskSchema } from "../core/task.js";
import { check, must, type SelftestContext } from "./check.js";
import { commandExamples, exampleProblems } from "./readme-examples.js";
import { type DimensionResult, dimensionFromChecks } from "./verdict.js";

/** The commands a new user runs first (the README's opening block): what a fresh Debian/Ubuntu machine needs. */
export const SETUP_COMMANDS = [
  "sudo apt-get install -y bubblewrap git && npm install && npx loopgate demo",
  "npm test",
] as const;

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

/** The top-level fields named in the first cell of each row of the README's task-file table. */
export function documentedFields(md: string): string[] {
  const rows = section(md, "A task file")
    .split("\n")
    .filter((l) => l.startsWith("| `"));
  const names = rows.flatMap((r) =>
    [...(r.split("|")[1] ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? ""),
  );
  return [...new Set(names.map((n) => n.split(/[.[]/)[0] ?? n))];
}

/** The documentation dimension. */
export async function documentationDimension(ctx: SelftestContext): Promise<DimensionResult> {
  const md = existsSync(ctx.readme) ? readFileSync(ctx.readme, "utf8") : null;
  const readme = () => {
    must(md !== null, `no README at ${ctx.readme}`);
    return md;
  };
  const commands = helpCommands(ctx.help);
  const checks = [
    await check("README exists", () => `${readme().split("\n").length} lines at ${ctx.readme}`),
    await check("README shows every command of `loopgate --help`", () => {
      const text = readme();
      must(commands.length > 0, "no command lines found in the help text");
      const missing = commands.filter((c) => !new RegExp(`${reEscape(c.synopsis)}(?![\\w-])`).test(text));
      must(missing.length === 0, `missing: ${missing.map((c) => c.synopsis).join("; ")}`);
      return `${commands.length} command synopses found`;
    }),
    await check("README documents every option of `loopgate --help`", () => {
      const text = readme();
      const all = [...new Set([...helpOptions(ctx.help), ...commands.flatMap((c) => c.flags)])];
      const missing = all.filter((f) => !new RegExp(`${reEscape(f)}(?![\\w-])`).test(text));
      must(missing.length === 0, `missing: ${missing.join(", ")}`);
      return `${all.length} options found`;
    }),
    await check("README's command reference names only commands the CLI has", () => {
      const block = /```\n([\s\S]*?)```/.exec(section(readme(), "Commands"))?.[1] ?? "";
      const listed = block.split("\n").filter((l) => l.startsWith("loopgate "));
      must(listed.length > 0, "no `## Commands` block with `loopgate ...` lines");
      const known = new Set(commands.map((c) => c.words));
      const stale = listed.filter((l) => !known.has(helpCommands(`  ${l}`)[0]?.words ?? ""));
      must(stale.length === 0, `not in --help: ${stale.join("; ")}`);
      return `${listed.length} reference lines, all in --help`;
    }),
    await check("README shows the set-up commands and the exit codes of --help", () => {
      const text = readme();
      const missing = SETUP_COMMANDS.filter((c) => !text.includes(c));
      must(missing.length === 0, `missing set-up commands: ${missing.join("; ")}`);
      const exit = /^Exit codes: .*$/m.exec(ctx.help)?.[0];
      must(exit, "the help states no exit codes");
      must(text.replace(/\*\*/g, "").includes(exit), `README does not say: ${exit}`);
      return `${SETUP_COMMANDS.join("; ")}; ${exit}`;
    }),
    await check("every `loopgate …` command the README shows matches --help (command, flags, files)", () => {
      const examples = commandExamples(readme());
      must(examples.length > 0, "the README shows no loopgate command");
      const flags = [
        ...new Set([...GENERIC_FLAGS, ...helpOptions(ctx.help), ...commands.flatMap((c) => c.flags)]),
      ];
      // Bundled files (examples/…) are looked up in the installation, wherever the README is read from.
      const root = ctx.root;
      const surface = {
        commands: commands.map((c) => c.words),
        flags,
        exists: (p: string) => existsSync(join(root, p)),
      };
      const problems = examples.flatMap((ex) => exampleProblems(ex, surface));
      must(problems.length === 0, problems.slice(0, 5).join("; "));
      return `${examples.length} command examples, each a command, flags and files the CLI has`;
    }),
    await check("README does not call a documented flag or field later work", () => {
      const text = readme();
      const later = [
        section(text, "Not yet here"),
        ...text
          .split(/(?<=\.)\s/)
          .filter((sentence) => /later version|not yet (here|supported|implemented)/i.test(sentence)),
      ].join("\n");
      const known = [...helpOptions(ctx.help), ...commands.flatMap((c) => c.flags)];
      const flagged = known.filter((f) => new RegExp(`${reEscape(f)}(?![\\w-])`).test(later));
      const fields = [...later.matchAll(/`([a-z_]+(?:\.[a-z_]+)?)`/g)]
        .map((m) => m[1] ?? "")
        .filter((f) => isTaskField(f));
      must(
        flagged.length + fields.length === 0,
        `said to be later work, yet documented: ${[...flagged, ...fields].join(", ")}`,
      );
      return "nothing documented is called later work";
    }),
    await check(
      "README's task-file table has a row for every top-level field, and none for unknown ones",
      () => {
        const fields = taskFields();
        const rows = documentedFields(readme());
        const missing = fields.filter((f) => !rows.includes(f));
        const unknown = rows.filter((r) => !fields.includes(r));
        const problems = [
          ...(missing.length ? [`no row for: ${missing.join(", ")}`] : []),
          ...(unknown.length ? [`rows for fields the schema lacks: ${unknown.join(", ")}`] : []),
        ];
        must(problems.length === 0, problems.join("; "));
        return `${fields.length} fields documented: ${fields.join(", ")}`;
      },
    ),
  ];
  return dimensionFromChecks("documentation", checks);
}
