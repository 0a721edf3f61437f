// `loopgate task from-commit`, end to end on a real git history the test builds: a commit that fixes a
// bug and adds the test that catches it becomes a task whose held-out test fails before the fix and
// passes after; commits without tests, or whose tests pass before, are skipped or refused with why.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Envelope, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);

interface Result {
  sha: string;
  status: "kept" | "skipped" | "refused";
  reason: string | null;
  task: string | null;
  task_id: string | null;
  oracle: { status: string } | null;
  noop: { status: string } | null;
}
interface FromCommitJson {
  results: Result[];
  summary: { commits: number; kept: number; skipped: number; refused: number };
}

const BUGGY = 'def clamp(x, lo, hi):\n    """Clamp x into [lo, hi]."""\n    return max(lo, x)\n';
const FIXED = 'def clamp(x, lo, hi):\n    """Clamp x into [lo, hi]."""\n    return max(lo, min(x, hi))\n';
const TEST_A = "from mathx import clamp\n\n\ndef test_clamp_low():\n    assert clamp(-5, 0, 10) == 0\n";
const TEST_B = `${TEST_A}\n\ndef test_clamp_high():\n    assert clamp(15, 0, 10) == 10\n`;

function git(repo: string, ...args: string[]): string {
  return execFileSync("git", ["-C", repo, ...args], { encoding: "utf8" }).trim();
}

function commitAll(repo: string, files: Record<string, string>, message: string): string {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(repo, path, ".."), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", message);
  return git(repo, "rev-parse", "HEAD");
}

/** A tiny Python project's history: A (bug + a test), B (fix + the test that catches it), C (docs), D (a test that passes before). */
function buildHistory() {
  const repo = join(tempDir("loopgate-e2e-history-"), "proj");
  mkdirSync(repo);
  git(repo, "init", "-q");
  git(repo, "config", "user.email", "dev@example.com");
  git(repo, "config", "user.name", "Dev");
  const a = commitAll(repo, { "mathx.py": BUGGY, "tests/test_mathx.py": TEST_A }, "clamp: first version");
  const b = commitAll(
    repo,
    { "mathx.py": FIXED, "tests/test_mathx.py": TEST_B },
    "Fix clamp ignoring the upper bound\n\nclamp(15, 0, 10) returned 15.",
  );
  const c = commitAll(repo, { "README.md": "# mathx\n\nclamp(x, lo, hi).\n" }, "docs: a README");
  const d = commitAll(
    repo,
    {
      "mathx.py": FIXED.replace("[lo, hi].", "[lo, hi] (lo <= hi)."),
      "tests/test_mid.py":
        "from mathx import clamp\n\n\ndef test_clamp_mid():\n    assert clamp(5, 0, 10) == 5\n",
    },
    "clamp: say lo <= hi, test the middle",
  );
  return { repo, a, b, c, d };
}

function script(text: string): string {
  const file = join(tempDir("loopgate-e2e-builder-"), "builder.sh");
  writeFileSync(file, text);
  chmodSync(file, 0o755);
  return file;
}

let h: ReturnType<typeof buildHistory>;
let work: string;
let taskFile: string;

beforeAll(async () => {
  h = buildHistory();
  work = tempDir("loopgate-e2e-fromcommit-");
  const r = await loopgate(
    [
      "task",
      "from-commit",
      h.b,
      "--repo",
      h.repo,
      "--out",
      join(work, "tasks"),
      "--store",
      tempDir(),
      "--json",
    ],
    { cwd: work, timeoutMs: 240_000 },
  );
  expect(r.code, show(r)).toBe(0);
  const out = parseStdout<FromCommitJson>(r);
  expect(out.results).toHaveLength(1);
  const kept = out.results[0] as Result;
  expect(kept, show(r)).toMatchObject({ sha: h.b, status: "kept", oracle: { status: "SUCCESS" } });
  expect(kept.noop?.status).not.toBe("SUCCESS");
  taskFile = kept.task as string;
});

describe("task from-commit REV", () => {
  it("starts the builder from the parent tree, without .git and without the commit's new test", () => {
    const dir = join(taskFile, "..");
    expect(readFileSync(join(dir, "repo", "mathx.py"), "utf8")).toBe(BUGGY);
    expect(readFileSync(join(dir, "repo", "tests", "test_mathx.py"), "utf8")).toBe(TEST_A);
    expect(existsSync(join(dir, "repo", ".git"))).toBe(false);
    // The commit's version of the test is held out, at its own path, for the gate environment only.
    expect(readFileSync(join(dir, "heldout", "tests", "test_mathx.py"), "utf8")).toBe(TEST_B);
    const yaml = readFileSync(taskFile, "utf8");
    expect(yaml).toContain("Fix clamp ignoring the upper bound");
    expect(yaml).toContain(`id: ${h.b.slice(0, 7)}-fix-clamp-ignoring-the-upper-bound`);
  });

  it("is a task `task check` accepts on its own: the oracle passes, the no-op does not", async () => {
    const r = await loopgate(["task", "check", taskFile, "--json", "--store", tempDir()], {
      timeoutMs: 240_000,
    });
    expect(r.code, show(r)).toBe(0);
    const c = parseStdout<{ ok: boolean; oracle: { status: string }; noop: { status: string } }>(r);
    expect(c.ok).toBe(true);
    expect(c.oracle.status).toBe("SUCCESS");
    expect(c.noop.status).toBe("ESCALATED");
  });

  it("refuses a builder that does nothing, and one that makes the module exit 0 on import", async () => {
    const noop = await loopgate(["run", taskFile, "--noop", "--json", "--store", tempDir()], {
      timeoutMs: 240_000,
    });
    expect(noop.code, show(noop)).toBe(1);
    expect(parseStdout<Envelope>(noop).status).toBe("ESCALATED");
    const forger = script("#!/bin/sh\nprintf 'import sys\\nsys.exit(0)\\n' > mathx.py\n");
    const f = await loopgate(["run", taskFile, "--builder", forger, "--json", "--store", tempDir()], {
      timeoutMs: 240_000,
    });
    expect(parseStdout<Envelope>(f).status, show(f)).not.toBe("SUCCESS");
  });

  it("passes a builder that makes the fix itself", async () => {
    const honest = script(`#!/bin/sh\ncat > mathx.py <<'PY'\n${FIXED}PY\n`);
    const r = await loopgate(["run", taskFile, "--builder", honest, "--json", "--store", tempDir()], {
      timeoutMs: 240_000,
    });
    expect(r.code, show(r)).toBe(0);
    expect(parseStdout<Envelope>(r).status).toBe("SUCCESS");
  });
});

describe("task from-commit A..D", () => {
  it("keeps B, skips C (no tests) and refuses D (its test passes before), each with its reason", async () => {
    const out = join(tempDir("loopgate-e2e-fromcommit-range-"), "tasks");
    const r = await loopgate(
      [
        "task",
        "from-commit",
        `${h.a}..${h.d}`,
        "--repo",
        h.repo,
        "--out",
        out,
        "--store",
        tempDir(),
        "--json",
      ],
      { timeoutMs: 400_000 },
    );
    expect(r.code, show(r)).toBe(0);
    const j = parseStdout<FromCommitJson>(r);
    expect(j.results.map((x) => [x.sha, x.status])).toEqual([
      [h.b, "kept"],
      [h.c, "skipped"],
      [h.d, "refused"],
    ]);
    expect(j.results[1]?.reason).toMatch(/no test files/);
    expect(j.results[2]?.reason).toMatch(/pass before the fix/);
    expect(j.summary).toMatchObject({ commits: 3, kept: 1, skipped: 1, refused: 1 });
    // A refused task leaves nothing behind; the kept one is there.
    expect(existsSync(join(out, j.results[2]?.task_id as string))).toBe(false);
    expect(existsSync(j.results[0]?.task as string)).toBe(true);
  });

  it("prints a line per commit and a summary", async () => {
    const out = join(tempDir("loopgate-e2e-fromcommit-lines-"), "tasks");
    // B..D holds C (skipped) and D (refused): nothing is kept (exit 1).
    const r = await loopgate(
      ["task", "from-commit", `${h.b}..${h.d}`, "--repo", h.repo, "--out", out, "--store", tempDir()],
      { timeoutMs: 240_000 },
    );
    expect(r.code, show(r)).toBe(1);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^skipped\\s+${h.c.slice(0, 7)} docs: a README: .*no test files`));
    expect(lines[1]).toMatch(new RegExp(`^refused\\s+${h.d.slice(0, 7)} .*pass before the fix`));
    expect(lines[2]).toBe("0 kept, 1 skipped, 1 refused of 2 commit(s)");
  });
});

describe("task from-commit: bad input", () => {
  it("an unknown revision is exit 2 naming it", async () => {
    const r = await loopgate(["task", "from-commit", "no-such-rev", "--repo", h.repo, "--out", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/unknown revision "no-such-rev"/);
  });

  it("a folder that is not a git repository is exit 2", async () => {
    const r = await loopgate(["task", "from-commit", "HEAD", "--repo", tempDir(), "--out", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/is not a git repository/);
  });

  it("a root commit is exit 2: it has no parent tree", async () => {
    const r = await loopgate(["task", "from-commit", h.a, "--repo", h.repo, "--out", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/root commit/);
  });

  it("a merge commit is exit 2 alone, and skipped with its reason in a range", async () => {
    const repo = join(tempDir("loopgate-e2e-merge-"), "m");
    mkdirSync(repo);
    git(repo, "init", "-q", "-b", "main");
    git(repo, "config", "user.email", "dev@example.com");
    git(repo, "config", "user.name", "Dev");
    const base = commitAll(repo, { "a.txt": "a\n" }, "base");
    git(repo, "checkout", "-q", "-b", "side");
    commitAll(repo, { "b.txt": "b\n" }, "side");
    git(repo, "checkout", "-q", "main");
    commitAll(repo, { "c.txt": "c\n" }, "main");
    git(repo, "merge", "-q", "--no-edit", "side");
    const merge = git(repo, "rev-parse", "HEAD");
    const alone = await loopgate(["task", "from-commit", merge, "--repo", repo, "--out", tempDir()]);
    expect(alone.code, show(alone)).toBe(2);
    expect(alone.stderr).toMatch(/merge commit/);
    const range = await loopgate([
      "task",
      "from-commit",
      `${base}..${merge}`,
      "--repo",
      repo,
      "--out",
      tempDir(),
      "--json",
    ]);
    const j = parseStdout<FromCommitJson>(range);
    const m = j.results.find((x) => x.sha === merge);
    expect(m, show(range)).toMatchObject({
      status: "skipped",
      reason: expect.stringMatching(/merge commit/),
    });
  });

  it("task check refuses from-commit's flags", async () => {
    const r = await loopgate(["task", "check", taskFile, "--repo", h.repo]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/--repo/);
  });
});
