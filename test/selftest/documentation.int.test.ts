import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands-table.js";
import { helpText } from "../../src/cli/help.js";

const HELP = helpText(COMMANDS);

import { TaskSchema } from "../../src/core/task.js";
import { installRoot, type SelftestContext } from "../../src/selftest/check.js";
import {
  documentationDimension,
  documentedFields,
  helpCommands,
  helpOptions,
  taskFields,
} from "../../src/selftest/documentation.js";

const root = installRoot();
const real = readFileSync(join(root, "README.md"), "utf8");
const dir = mkdtempSync(join(tmpdir(), "loopgate-selftest-docs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The documentation dimension over `text` as the README. */
async function measure(text: string | null) {
  const readme = join(dir, `README-${Math.random().toString(36).slice(2)}.md`);
  if (text !== null) writeFileSync(readme, text);
  const ctx: SelftestContext = { root, readme, env: {}, help: HELP };
  return documentationDimension(ctx);
}

const failing = (r: Awaited<ReturnType<typeof measure>>) =>
  r.checks.filter((c) => c.ok !== true).map((c) => `${c.name}: ${c.detail}`);

describe("selftest: documentation dimension", () => {
  it("reads the task-file fields from the schema itself, through its refinement", () => {
    expect(taskFields()).toEqual(Object.keys(TaskSchema.shape));
    expect(taskFields()).toEqual(
      expect.arrayContaining(["id", "prompt", "workspace", "gates", "budget", "oracle"]),
    );
  });

  it("parses every command line of the help, with synopsis and flags", () => {
    const cmds = helpCommands(HELP);
    expect(cmds.map((c) => c.words)).toEqual(
      expect.arrayContaining(["run", "verify", "task check", "selftest"]),
    );
    expect(cmds.find((c) => c.words === "verify")?.synopsis).toBe("loopgate verify TASK --workspace DIR");
    expect(cmds.find((c) => c.words === "selftest")).toMatchObject({
      synopsis: "loopgate selftest",
      flags: ["--json"],
    });
    expect(helpOptions(HELP)).toEqual(expect.arrayContaining(["--json", "--store", "--max-cost"]));
    expect(helpOptions(HELP)).not.toContain("--help");
  });

  it("finds the top-level fields of the README's task-file table", () => {
    const md =
      "# x\n\n## A task file\n\n| field | meaning |\n|---|---|\n| `id` | a |\n| `gates[].run` | b |\n| `budget.turns`, `budget.tokens` | c |\n\n## Next\n| `nope` | d |\n";
    expect(documentedFields(md)).toEqual(["id", "gates", "budget"]);
  });

  it("fails when a command of the help is missing from the README", async () => {
    const r = await measure(real.replaceAll("loopgate verify TASK", "loopgate check-work TASK"));
    expect(r.state).toBe("FAIL");
    expect(failing(r).join("\n")).toMatch(/missing: .*loopgate verify TASK --workspace DIR/);
    expect(failing(r).join("\n")).toMatch(/not in --help: loopgate check-work/);
  });

  it("fails when a task-file field has no row, or a row names an unknown field", async () => {
    const r = await measure(real.replace(/^\| `oracle` \|.*$/m, "| `oracles` | gone |"));
    expect(r.state).toBe("FAIL");
    expect(failing(r).join("\n")).toMatch(/no row for: oracle/);
    expect(failing(r).join("\n")).toMatch(/rows for fields the schema lacks: oracles/);
  });

  it("fails when the set-up commands or the exit codes drift from the help", async () => {
    const r = await measure(
      real
        .replace("sudo apt-get install -y bubblewrap git && npm install", "npm install")
        .replace("**1** ESCALATED", "**3** ESCALATED"),
    );
    expect(failing(r).join("\n")).toMatch(
      /missing set-up commands: sudo apt-get install -y bubblewrap git && npm install && npx loopgate demo/,
    );
    const r2 = await measure(
      real.replace(
        /Exit codes: \*\*0\*\* SUCCESS, \*\*1\*\* ESCALATED/,
        "Exit codes: **0** SUCCESS, **3** ESCALATED",
      ),
    );
    expect(failing(r2).join("\n")).toMatch(/README does not say: Exit codes/);
  });

  it("fails every check when the README is missing", async () => {
    const r = await measure(null);
    expect(r.state).toBe("FAIL");
    expect(r.checks.every((c) => c.ok === false)).toBe(true);
    expect(r.score).toBe(0);
  });

  it("passes on this README", async () => {
    const r = await measure(real);
    expect(failing(r)).toEqual([]);
    expect(r.state).toBe("PASS");
  });

  it("checks every README command example against --help: command, flags, bundled files", async () => {
    const r = await measure(
      `${real}\n\n\`\`\`sh\nnpx loopgate run examples/js-slugify/task.yaml --modle scripted:examples/js-slugify/agent/gone.yaml\nloopgate chek examples/js-slugify/task.yaml\n\`\`\`\n`,
    );
    const text = failing(r).join("\n");
    expect(text).toMatch(/--modle is not a flag of --help/);
    expect(text).toMatch(/examples\/js-slugify\/agent\/gone.yaml does not exist/);
    expect(text).toMatch(/no command "chek" in --help/);
  });

  it("fails when the README calls a documented flag or task field later work", async () => {
    const r = await measure(
      `${real.replace("The Postgres store is later work", "Plan-step escalation (`--step-escalation`) is later work")}\n\n\`budget.repairs\` belongs to a later version.\n`,
    );
    expect(failing(r).join("\n")).toMatch(
      /said to be later work, yet documented: --step-escalation, budget\.repairs/,
    );
  });
});
