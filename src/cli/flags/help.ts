import { InputError } from "../../core/kernel/errors.js";
import type { CommandSpec } from "./command-spec.js";
import { FLAGS, type FlagName, type FlagSpec, GLOBAL_FLAGS } from "./flags.js";
import { didYouMean } from "./suggest.js";

const EXIT_CODES = "Exit codes: 0 SUCCESS, 1 ESCALATED, 2 TOOL_FAILURE or bad input.";
const indent = (text: string, n: number) =>
  text
    .split("\n")
    .map((l) => `${" ".repeat(n)}${l}`)
    .join("\n");

/** `  --name VALUE   help` lines for these flags, the help's continuation lines aligned under it. */
function optionLines(names: readonly FlagName[]): string {
  const specs: Record<string, FlagSpec> = FLAGS;
  const heads = names.map((n) => {
    const s = specs[n] as FlagSpec;
    return `${s.short ? `-${s.short}, ` : ""}--${n}${s.value ? ` ${s.value}` : ""}`;
  });
  const width = Math.max(22, ...heads.map((h) => h.length + 1));
  return names
    .map((n, i) => {
      const [first, ...more] = (specs[n] as FlagSpec).help.split("\n");
      const pad = " ".repeat(width + 3);
      return [`  ${(heads[i] as string).padEnd(width)} ${first}`, ...more.map((m) => `${pad}${m}`)].join(
        "\n",
      );
    })
    .join("\n");
}

const usageBlock = (c: CommandSpec) => `${c.usage.map((u) => `  ${u}`).join("\n")}\n${indent(c.about, 6)}`;

/** The text of `loopgate --help` for this command table; docs/reference/cli.md mirrors it. */
export function helpText(commands: readonly CommandSpec[]): string {
  return `loopgate — the model may suggest it finished; only external evidence may declare DONE.

Usage:
${commands.map(usageBlock).join("\n")}

Options:
${optionLines([...new Set([...commands.flatMap((c) => c.flags), ...GLOBAL_FLAGS])])}

Gate kinds (task.yaml gates[]): run (a subprocess; exit 0 passes), static (one deterministic file check),
differential (cases run on the oracle's tree and the builder's, each in its own sandbox, outputs compared;
the expected outputs never exist where the builder's code runs). See docs/reference/task-file.md#differential-gates.

Limits (task.yaml limits:): files 50000, total_bytes 1GiB, file_bytes 256MiB bound what the builder may
leave in the workspace (past one: a blocking limit_exceeded finding, the attempt fails); processes 1024,
file_size 1GiB, memory 4GiB are rlimits of every builder and gate process. See docs/explanation/sandbox.md#limits.

${EXIT_CODES}
`;
}

/** `loopgate help COMMAND` / `loopgate COMMAND --help`: its synopsis, what it does, its flags, its exit codes. */
export function commandHelp(commands: readonly CommandSpec[], name: string): string {
  const c = commands.find((x) => x.name === name);
  if (!c)
    throw new InputError(
      `unknown command${didYouMean(
        name,
        commands.map((x) => x.name),
      )}; loopgate --help lists them`,
      `loopgate help ${name}`,
    );
  return `Usage:
${usageBlock(c)}

Options:
${optionLines([...new Set([...c.flags, ...GLOBAL_FLAGS])])}

${c.exit ?? EXIT_CODES}
`;
}
