// `loopgate doctor` with bubblewrap present and absent (a PATH that lacks it), and `loopgate demo`
// refusing to print a table of TOOL_FAILUREs when there is no sandbox.
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveProgram } from "../../src/sandbox/environment.js";
import { loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);

/** A PATH holding git (as on a fresh machine with it installed) but no bwrap. */
function pathWithoutBwrap(): string {
  const dir = tempDir("loopgate-path-");
  for (const p of ["git"]) {
    const at = resolveProgram(p, "/", process.env.PATH ?? "");
    if (at) symlinkSync(at, join(dir, p));
  }
  return dir;
}

interface Report {
  exit: number;
  verdict: string;
  checks: { id: string; need: string; state: string; detail: string; remedy: string | null }[];
}

// Provider settings of whoever runs the tests must not change the verdict (the CLI inherits this env).
for (const k of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "LOOPGATE_OPENAI_COMPATIBLE_BASE_URL"])
  delete process.env[k];

describe.concurrent("loopgate doctor", () => {
  it("with bubblewrap on PATH: the sandbox self-test runs and passes; exit 0", async () => {
    const r = await loopgate(["doctor", "--json", "--store", tempDir()], {});
    const report = parseStdout<Report>(r);
    const get = (id: string) => report.checks.find((c) => c.id === id);
    expect(get("bubblewrap")?.state).toBe("ok");
    expect(get("sandbox self-test")?.state, JSON.stringify(get("sandbox self-test"))).toBe("ok");
    expect(get("git")?.state).toBe("ok");
    // Gates look for python3 on the sandbox's own PATH; the e2e machine has it in /usr/bin.
    expect(get("python3")?.state).toBe("ok");
    expect(r.code, show(r)).toBe(0);
    expect(report.exit).toBe(0);
  });

  it("with a PATH lacking bwrap: bubblewrap REQUIRED MISSING with its remedy; exit 2", async () => {
    const r = await loopgate(["doctor", "--store", tempDir()], {
      env: { PATH: pathWithoutBwrap() },
    });
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toMatch(/bubblewrap\s+REQUIRED MISSING: bwrap is not on PATH/);
    expect(r.stdout).toContain("fix: install bubblewrap: sudo apt-get install -y bubblewrap");
    expect(r.stdout).toMatch(/✓ git/);
  });

  it("--json with an empty PATH: bwrap and git named with their fixes, required wins (exit 2)", async () => {
    const r = await loopgate(["doctor", "--json", "--store", tempDir()], {
      env: { PATH: tempDir("loopgate-empty-path-") },
    });
    expect(r.code, show(r)).toBe(2);
    const report = parseStdout<Report>(r);
    const missing = report.checks.filter((c) => c.state === "missing").map((c) => c.id);
    expect(missing).toEqual(expect.arrayContaining(["bubblewrap", "sandbox self-test", "git"]));
    for (const c of report.checks.filter((x) => x.state === "missing")) expect(c.remedy).toBeTruthy();
  });
});

describe("loopgate demo without a sandbox", () => {
  it("prints what doctor says and exits 2, without a table and without the gate sentence", async () => {
    const r = await loopgate(["demo", "--store", tempDir()], { env: { PATH: pathWithoutBwrap() } });
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("the sandbox is not available");
    expect(r.stderr).toContain("fix: install bubblewrap");
    const all = r.stdout + r.stderr;
    expect(all).not.toContain("held-out gates");
    expect(all).not.toContain("ended as expected");
    expect(all).not.toMatch(/TOOL_FAILURE\s+\d/);
  });
});
