// The task folder `task from-commit` writes, read back from disk, and its oracle run as a plain
// process: it patches the folder it runs in, never a git repository around it.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GitRepo } from "../../src/runner/from-commit/git.js";
import { type CommitTaskPlan, planCommit } from "../../src/runner/from-commit/plan-commit.js";
import { writeCommitTask } from "../../src/runner/from-commit/write-task.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "loopgate-fromcommit-"));
  temps.push(d);
  return d;
};

const git = (repo: string, ...args: string[]) =>
  execFileSync("git", ["-C", repo, ...args], { encoding: "utf8" }).trim();

function commit(repo: string, files: Record<string, string | null>, message: string): string {
  for (const [path, text] of Object.entries(files)) {
    if (text === null) rmSync(join(repo, path));
    else {
      mkdirSync(join(repo, path, ".."), { recursive: true });
      writeFileSync(join(repo, path), text);
    }
  }
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", message);
  return git(repo, "rev-parse", "HEAD");
}

function history() {
  const repo = temp();
  git(repo, "init", "-q");
  git(repo, "config", "user.email", "dev@example.com");
  git(repo, "config", "user.name", "Dev");
  commit(
    repo,
    {
      "lib/calc.py": "def add(a, b):\n    return a - b\n",
      "lib/old.py": "x = 1\n",
      "tests/test_calc.py": "# v1\n",
    },
    "calc",
  );
  const fix = commit(
    repo,
    {
      "lib/calc.py": "def add(a, b):\n    return a + b\n",
      "lib/old.py": null,
      "lib/new.py": "y = 2\n",
      "tests/test_calc.py": "# v2\n",
      "tests/data/case.txt": "1 2 3\n",
    },
    "Fix add\n\nIt subtracted.",
  );
  return { repo, fix };
}

const opts = { testGlobs: [], pytestAvailable: true };

describe("writeCommitTask", () => {
  it("writes the parent tree, the held-out tests at their paths, and an oracle that replays the fix", async () => {
    const { repo, fix } = history();
    const g = new GitRepo(repo);
    const plan = planCommit(g, fix, opts) as CommitTaskPlan;
    expect(plan.tests).toEqual(["tests/data/case.txt", "tests/test_calc.py"]);
    expect(plan.fix.sort()).toEqual(["lib/calc.py", "lib/new.py", "lib/old.py"]);
    expect(plan.prompt).toBe("Fix add\n\nIt subtracted.");
    const out = temp();
    const { dir } = await writeCommitTask(g, plan, out, false);
    expect(readFileSync(join(dir, "repo", "lib", "calc.py"), "utf8")).toContain("a - b");
    expect(readFileSync(join(dir, "repo", "tests", "test_calc.py"), "utf8")).toBe("# v1\n");
    expect(existsSync(join(dir, "repo", "tests", "data"))).toBe(false);
    expect(readFileSync(join(dir, "heldout", "tests", "test_calc.py"), "utf8")).toBe("# v2\n");
    expect(readFileSync(join(dir, "heldout", "tests", "data", "case.txt"), "utf8")).toBe("1 2 3\n");
    // The fix holds none of the tests.
    expect(readFileSync(join(dir, "fix.patch"), "utf8")).not.toContain("tests/");

    // The oracle runs in a copy of the workspace that sits inside the source repository's work tree:
    // it must patch that copy, and leave the repository around it alone.
    const ws = join(repo, "ws-copy");
    cpSync(join(dir, "repo"), ws, { recursive: true });
    execFileSync(join(dir, "solution.sh"), { cwd: ws, env: { PATH: "/usr/bin:/bin" } });
    expect(readFileSync(join(ws, "lib", "calc.py"), "utf8")).toContain("a + b");
    expect(existsSync(join(ws, "lib", "old.py"))).toBe(false);
    expect(readFileSync(join(ws, "lib", "new.py"), "utf8")).toBe("y = 2\n");
    expect(readFileSync(join(ws, "tests", "test_calc.py"), "utf8")).toBe("# v1\n");
    expect(git(repo, "status", "--porcelain", "--untracked-files=no")).toBe("");
  });

  it("refuses an existing task folder unless forced", async () => {
    const { repo, fix } = history();
    const g = new GitRepo(repo);
    const plan = planCommit(g, fix, opts) as CommitTaskPlan;
    const out = temp();
    await writeCommitTask(g, plan, out, false);
    await expect(writeCommitTask(g, plan, out, false)).rejects.toThrow(/already exists/);
    writeFileSync(join(out, plan.id, "stray.txt"), "x");
    await writeCommitTask(g, plan, out, true);
    expect(existsSync(join(out, plan.id, "stray.txt"))).toBe(false);
  });
});

describe("planCommit", () => {
  it("skips a commit that changes only tests, and one without tests, saying why", () => {
    const { repo } = history();
    const onlyTests = commit(repo, { "tests/test_more.py": "# more\n" }, "more tests");
    const noTests = commit(repo, { "lib/calc.py": "def add(a, b):\n    return b + a\n" }, "style");
    const g = new GitRepo(repo);
    expect(planCommit(g, onlyTests, opts)).toMatchObject({ skip: expect.stringMatching(/only tests/) });
    expect(planCommit(g, noTests, opts)).toMatchObject({ skip: expect.stringMatching(/no test files/) });
  });
});
