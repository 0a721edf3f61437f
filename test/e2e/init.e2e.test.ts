// `loopgate init` as a user runs it, on tiny real projects of every runner it knows: it writes a task
// file, `task check` passes on it (the oracle reaches SUCCESS, doing nothing does not), and a builder
// that makes importing the source exit 0 is refused by the gates it wrote. Plus the refusals: no
// tests, an existing file, a file or held-out folder inside the repository; and --dry-run writes nothing.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type FixtureRunner, writeFixture } from "../runner/init-fixtures.js";
import { type Envelope, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);

interface InitJson {
  path: string;
  written: boolean;
  runner: string;
  gates: { id: string; run: string[]; heldout: string | null }[];
  protected: string[];
  deliverables: string[];
  check: {
    ok?: boolean;
    oracle?: { status: string };
    noop?: { status: string };
    gates?: { id: string; check: string; tests: number | null }[];
    ran?: boolean;
  } | null;
}

// Held-out tests for half the runners (their gate wired by --heldout), the visible tests alone for the
// others: both layouts must discriminate the fix from doing nothing and refuse the forgery.
const CASES: { runner: FixtureRunner; heldout: boolean }[] = [
  { runner: "node-test", heldout: true },
  { runner: "vitest", heldout: true },
  { runner: "jest", heldout: false },
  { runner: "mocha", heldout: true },
  { runner: "tape", heldout: false },
  { runner: "unittest", heldout: true },
  { runner: "pytest", heldout: false },
];

describe.each(CASES)(
  "loopgate init on a $runner project (held-out tests: $heldout)",
  ({ runner, heldout }) => {
    it("writes a task that task check accepts, and whose gates refuse an exit-on-import forgery", async () => {
      const dir = tempDir(`loopgate-e2e-init-${runner}-`);
      const f = writeFixture(dir, runner);
      const store = tempDir();
      const args = ["init", f.repo, "--oracle-file", f.oracle, "--json", "--store", store];
      if (heldout) args.push("--heldout", f.heldout);
      const r = await loopgate(args, { timeoutMs: 400_000 });
      expect(r.code, show(r)).toBe(0);
      const out = parseStdout<InitJson>(r);
      expect(out.path).toBe(join(dir, "repo-loopgate", "task.yaml"));
      expect(out.runner).toBe(runner);
      expect(out.check).toMatchObject({ ok: true, oracle: { status: "SUCCESS" } });
      expect(out.check?.noop?.status).not.toBe("SUCCESS");
      expect(out.gates.map((g) => g.id)).toEqual(heldout ? ["tests", "heldout-tests"] : ["tests"]);
      // Every gate is judged by the identities task check recorded, which the lock beside the task holds.
      for (const g of out.check?.gates ?? []) expect(g.check, g.id).toMatch(/^identity\+/);
      expect(existsSync(join(dir, "repo-loopgate", "task.lock.json"))).toBe(true);
      const task = parseYaml(readFileSync(out.path, "utf8")) as { workspace: string; protected: string[] };
      expect(task.workspace).toBe("../repo");

      const forged = await loopgate(
        ["run", out.path, "--builder", f.forger, "--max-attempts", "1", "--json", "--store", store],
        { timeoutMs: 300_000 },
      );
      const env = parseStdout<Envelope>(forged);
      expect(forged.code, show(forged)).toBe(1);
      expect(env.status).toBe("ESCALATED");
      expect(env.gates.every((g) => !g.passed)).toBe(true);
    }, 900_000);
  },
);

describe("loopgate init refuses and holds back", () => {
  it("--dry-run prints the task file and writes nothing", async () => {
    const f = writeFixture(tempDir(), "unittest");
    const out = join(tempDir(), "task.yaml");
    const r = await loopgate(["init", f.repo, "--dry-run", "--out", out]);
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toMatch(/^id: repo$/m);
    expect(r.stdout).toMatch(/^ {4}run: \["\/usr\/bin\/python3", "-m", "unittest"/m);
    expect(existsSync(out)).toBe(false);
  });

  it("refuses to overwrite an existing task file without --force, and overwrites it with", async () => {
    const f = writeFixture(tempDir(), "unittest");
    const out = join(tempDir(), "mine", "task.yaml");
    mkdirSync(join(out, ".."), { recursive: true });
    writeFileSync(out, "# my own task\n");
    const refused = await loopgate(["init", f.repo, "--out", out, "--no-check"]);
    expect(refused.code, show(refused)).toBe(2);
    expect(refused.stderr).toMatch(/task\.yaml exists; --force overwrites it/);
    expect(readFileSync(out, "utf8")).toBe("# my own task\n");
    const forced = await loopgate(["init", f.repo, "--out", out, "--no-check", "--force"]);
    expect(forced.code, show(forced)).toBe(0);
    expect(readFileSync(out, "utf8")).toMatch(/^workspace: /m);
  });

  it("a folder with no tests is a clear error, exit 2", async () => {
    const repo = join(tempDir(), "docs-only");
    mkdirSync(repo);
    writeFileSync(join(repo, "README.md"), "# nothing to test\n");
    const r = await loopgate(["init", repo]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/no test runner found in .*docs-only: looked for package\.json/);
    expect(existsSync(join(repo, "..", "docs-only-loopgate"))).toBe(false);
  });

  it("refuses a task file or held-out folder inside the repository, where the builder would see them", async () => {
    const f = writeFixture(tempDir(), "node-test");
    const inside = await loopgate(["init", f.repo, "--out", join(f.repo, "loopgate", "task.yaml")]);
    expect(inside.code, show(inside)).toBe(2);
    expect(inside.stderr).toMatch(/--out: .* lies inside the repository/);
    mkdirSync(join(f.repo, "hidden-tests"));
    const heldout = await loopgate(["init", f.repo, "--heldout", join(f.repo, "hidden-tests"), "--dry-run"]);
    expect(heldout.code, show(heldout)).toBe(2);
    expect(heldout.stderr).toMatch(/--heldout: .* lies inside the repository/);
  });
});
