import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands-table.js";
import { helpText } from "../../src/cli/flags/help.js";
import { TaskSchema } from "../../src/core/task/task.js";
import { installRoot, type SelftestContext } from "../../src/selftest/check.js";
import {
  CLI_PAGE,
  documentationDimension,
  documentedFields,
  helpCommands,
  helpOptions,
  README_MAX_LINES,
  TASK_FILE_PAGE,
  taskFields,
} from "../../src/selftest/documentation.js";

const HELP = helpText(COMMANDS);
const root = installRoot();
const base = mkdtempSync(join(tmpdir(), "loopgate-selftest-docs-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Edits to the copied documentation: a path relative to the README's folder → new text (null: delete). */
type Edits = Record<string, string | null | ((text: string) => string)>;

/**
 * The documentation dimension over a copy of this repository's README and docs/, with `edits` applied
 * (`readme: null` leaves the README out). The copy lives in a folder of its own, as
 * `LOOPGATE_SELFTEST_README` would point at it; bundled example files are still looked up in the install.
 */
async function measure(edits: Edits = {}) {
  const dir = mkdtempSync(join(base, "copy-"));
  cpSync(join(root, "README.md"), join(dir, "README.md"));
  cpSync(join(root, "docs"), join(dir, "docs"), { recursive: true });
  // The rest of the repository, by link: the docs link to files beside them (bench/ reports, examples/).
  for (const name of readdirSync(root))
    if (!["README.md", "docs", ".git", "node_modules", ".loopgate"].includes(name))
      symlinkSync(join(root, name), join(dir, name));
  for (const [path, edit] of Object.entries(edits)) {
    const file = join(dir, path);
    if (edit === null) rmSync(file, { force: true });
    else if (typeof edit === "string") {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, edit);
    } else writeFileSync(file, edit(readFileSync(file, "utf8")));
  }
  const ctx: SelftestContext = { root, readme: join(dir, "README.md"), env: {}, help: HELP };
  return documentationDimension(ctx);
}

const failing = (r: Awaited<ReturnType<typeof measure>>) =>
  r.checks.filter((c) => c.ok !== true).map((c) => `${c.name}: ${c.detail}`);

/** Every markdown file of the copy gets the same replacement. */
const everywhere = (from: string, to: string): Edits => {
  const pages = ["README.md", ...docsPages()];
  return Object.fromEntries(pages.map((p) => [p, (t: string) => t.replaceAll(from, to)]));
};
function docsPages(): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      if (e.isDirectory()) walk(`${rel}/${e.name}`);
      else if (e.name.endsWith(".md")) out.push(`${rel}/${e.name}`);
    }
  };
  walk("docs");
  return out;
}

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
    expect(cmds.find((c) => c.words === "selftest")).toMatchObject({
      synopsis: "loopgate selftest",
      flags: ["--json"],
    });
    expect(cmds.find((c) => c.words === "verify")?.synopsis).toMatch(/^loopgate verify TASK --workspace DIR/);
    expect(helpOptions(HELP)).toEqual(expect.arrayContaining(["--json", "--store", "--max-cost"]));
    expect(helpOptions(HELP)).not.toContain("--help");
  });

  it("finds the top-level fields of the task-file reference's Fields table, and no other table's", () => {
    const md =
      "# x\n\n## An example\n| `nope` | a |\n\n## Fields\n\n| field | meaning |\n|---|---|\n| `id` | a |\n| `gates[].run` | b |\n| `budget.turns`, `budget.tokens` | c |\n\n## Next\n| `other` | d |\n";
    expect(documentedFields(md)).toEqual(["id", "gates", "budget"]);
  });

  it("fails when a command of the help is missing from the README and docs, or the synopsis names one the CLI lacks", async () => {
    const r = await measure(everywhere("loopgate verify TASK", "loopgate check-work TASK"));
    expect(r.state).toBe("FAIL");
    const text = failing(r).join("\n");
    expect(text).toMatch(
      /README and docs show every command.*missing: .*loopgate verify TASK --workspace DIR/,
    );
    expect(text).toMatch(/synopsis names only commands the CLI has.*not in --help: loopgate check-work/);
  });

  it("fails when an option of the help appears nowhere in the README and docs", async () => {
    const r = await measure(everywhere("--older-than", "--older"));
    expect(failing(r).join("\n")).toMatch(/document every option.*missing: .*--older-than/);
  });

  it("fails when the CLI reference is missing", async () => {
    const r = await measure({ [CLI_PAGE]: null });
    expect(failing(r).join("\n")).toMatch(/no docs\/reference\/cli\.md beside the README/);
  });

  it("fails when a task-file field has no row in the reference, or a row names an unknown field", async () => {
    const r = await measure({
      [TASK_FILE_PAGE]: (t) => t.replace(/^\| `oracle` \|.*$/m, "| `oracles` | gone |"),
    });
    expect(r.state).toBe("FAIL");
    const text = failing(r).join("\n");
    expect(text).toMatch(/no row for: oracle/);
    expect(text).toMatch(/rows for fields the schema lacks: oracles/);
  });

  it("fails when the README's set-up commands or exit codes drift from the help", async () => {
    const r = await measure({
      "README.md": (t) =>
        t.replaceAll("apt-get install -y bubblewrap git python3-pytest", "apt-get install -y git"),
    });
    expect(failing(r).join("\n")).toMatch(
      /missing set-up commands: apt-get install -y bubblewrap git python3-pytest/,
    );
    const r2 = await measure({
      "README.md": (t) =>
        t.replace("Exit codes: **0** SUCCESS, **1** ESCALATED", "Exit codes: **0** SUCCESS, **3** ESCALATED"),
    });
    expect(failing(r2).join("\n")).toMatch(/README does not say: Exit codes/);
  });

  it("fails every check when the README is missing, docs or not", async () => {
    const r = await measure({ "README.md": null });
    expect(r.state).toBe("FAIL");
    expect(r.checks.every((c) => c.ok === false)).toBe(true);
    expect(r.score).toBe(0);
  });

  it("checks every command example of the README and of docs pages against --help: command, flags, bundled files", async () => {
    const r = await measure({
      "README.md": (t) =>
        `${t}\n\n\`\`\`sh\nnpx loopgate run examples/js-slugify/task.yaml --modle scripted:examples/js-slugify/agent/gone.yaml\n\`\`\`\n`,
      "docs/guides/runs.md": (t) => `${t}\n\`loopgate chek examples/js-slugify/task.yaml\`\n`,
    });
    const text = failing(r).join("\n");
    expect(text).toMatch(/README\.md line \d+: .*--modle is not a flag of --help/);
    expect(text).toMatch(/examples\/js-slugify\/agent\/gone.yaml does not exist/);
    expect(text).toMatch(/docs\/guides\/runs\.md line \d+: .*no command "chek" in --help/);
  });

  it("fails when a page calls a documented flag or task field later work", async () => {
    const r = await measure({
      "docs/guides/runs.md": (t) =>
        `${t}\n## Not yet here\n\nPlan-step escalation (\`--step-escalation\`) is later work.\n\n\`budget.repairs\` belongs to a later version.\n`,
    });
    expect(failing(r).join("\n")).toMatch(
      /said to be later work, yet documented: --step-escalation, budget\.repairs/,
    );
  });

  it("fails on a relative link to a file that does not exist, naming the page, line and target", async () => {
    const r = await measure({
      "docs/guides/ci.md": (t) =>
        `${t}\nSee [the old page](../tamper-checks.md#the-lock) and [fine](runs.md).\n`,
    });
    const text = failing(r).join("\n");
    expect(text).toMatch(/docs\/guides\/ci\.md:\d+: \.\.\/tamper-checks\.md#the-lock: no such file/);
    expect(text).not.toMatch(/runs\.md: no such file/);
  });

  it("fails on a link that leaves the repository: up past its root, an absolute path, another scheme", async () => {
    const r = await measure({
      "README.md": (t) =>
        `${t}\n[design](../outside/design.md) [abs](/etc/passwd) [file](file:///etc/hosts) [web](https://example.org/x) [here](#install)\n`,
    });
    const text = failing(r).join("\n");
    expect(text).toMatch(/README\.md:\d+: \.\.\/outside\/design\.md: points outside the repository/);
    expect(text).toMatch(/\/etc\/passwd: an absolute path points outside the repository/);
    expect(text).toMatch(/file:\/\/\/etc\/hosts: not a web address/);
    expect(text).not.toMatch(/example\.org|#install/);
  });

  it(`fails when the README grows past ${README_MAX_LINES} lines`, async () => {
    const r = await measure({ "README.md": (t) => `${t}${"\nmore text".repeat(README_MAX_LINES)}\n` });
    expect(failing(r).join("\n")).toMatch(new RegExp(`README has \\d+ lines \\(at most ${README_MAX_LINES}`));
  });

  it("fails when a page of docs/ is not linked from docs/README.md", async () => {
    const r = await measure({ "docs/guides/orphan.md": "# An orphan\n\nNobody links here.\n" });
    expect(failing(r).join("\n")).toMatch(/not linked from docs\/README\.md: docs\/guides\/orphan\.md/);
  });

  it("passes on this repository's README and docs", async () => {
    const r = await measure();
    expect(failing(r)).toEqual([]);
    expect(r.state).toBe("PASS");
  });
});
