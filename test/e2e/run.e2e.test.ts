// `loopgate run` on the bundled examples, as docs/guides/your-repository.md and docs/reference/envelope.md describe it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type Envelope,
  EXAMPLES,
  exampleDir,
  exampleTask,
  gateIdsOf,
  loopgate,
  parseStdout,
  removeTemps,
  show,
  tempDir,
} from "./cli.js";

afterAll(removeTemps);

/** The one message a demo builder script prints (its `echo "..."` line): what it will claim. */
function claimOf(script: string): string {
  const m = /^echo "(.*)"$/m.exec(readFileSync(script, "utf8"));
  if (!m?.[1]) throw new Error(`no echo line in ${script}`);
  return m[1];
}

describe.concurrent("loopgate run", () => {
  it("--oracle --json on js-slugify prints only a SUCCESS envelope with every field of the contract", async () => {
    const task = exampleTask("js-slugify");
    const r = await loopgate(["run", task, "--oracle", "--json", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(0);
    const env = parseStdout<Envelope>(r);
    expect(Object.keys(env)).toEqual(
      expect.arrayContaining([
        "run_id",
        "task_id",
        "status",
        "reason",
        "attempts",
        "gates",
        "findings",
        "claims",
        "audit",
      ]),
    );
    expect(env.run_id).toMatch(/\S/);
    expect(env.task_id).toBe("js-slugify");
    expect(env.status).toBe("SUCCESS");
    expect(typeof env.reason).toBe("string");
    expect(env.attempts).toBe(1);
    expect(Array.isArray(env.findings)).toBe(true);
    expect(Array.isArray(env.claims)).toBe(true);
    for (const g of env.gates) {
      expect(Object.keys(g)).toEqual(
        expect.arrayContaining([
          "id",
          "attempt",
          "passed",
          "exit_code",
          "timed_out",
          "duration_ms",
          "log_excerpt",
        ]),
      );
      expect(typeof g.duration_ms).toBe("number");
      expect(typeof g.log_excerpt).toBe("string");
      expect(typeof g.timed_out).toBe("boolean");
    }
    const final = env.gates.filter((g) => g.attempt === env.attempts);
    expect(final.map((g) => g.id).sort()).toEqual(gateIdsOf(task).sort());
    expect(final.every((g) => g.passed && !g.timed_out)).toBe(true);
    expect(Object.keys(env.audit)).toEqual(
      expect.arrayContaining([
        "self_correction_count",
        "latency_ms",
        "hedge_warning",
        "cost",
        "tokens",
        "event_count",
      ]),
    );
    expect(env.audit.self_correction_count).toBe(0);
    expect(env.audit.event_count).toBeGreaterThan(0);
    expect(env.audit.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it("--noop --max-attempts 2 escalates at the cap, re-running the gates on attempt 2", async () => {
    const task = exampleTask("js-slugify");
    const r = await loopgate(["run", task, "--noop", "--json", "--max-attempts", "2", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(1);
    const env = parseStdout<Envelope>(r);
    expect(env.status).toBe("ESCALATED");
    expect(env.attempts).toBe(2);
    expect(env.reason).toMatch(/attempt cap/i);
    for (const attempt of [1, 2])
      expect(
        env.gates
          .filter((g) => g.attempt === attempt)
          .map((g) => g.id)
          .sort(),
      ).toEqual(gateIdsOf(task).sort());
    const failedOnLast = env.gates.filter((g) => g.attempt === 2 && !g.passed).map((g) => g.id);
    expect(failedOnLast.length).toBeGreaterThan(0);
    expect(
      failedOnLast.some((id) => env.reason.includes(id)),
      env.reason,
    ).toBe(true);
  });

  for (const name of EXAMPLES)
    it(`the honest builder succeeds on ${name} on attempt 2, after one required fix`, async () => {
      const builder = `examples/${name}/builders/honest.sh {required_fix}`;
      const r = await loopgate([
        "run",
        exampleTask(name),
        "--builder",
        builder,
        "--json",
        "--store",
        tempDir(),
      ]);
      expect(r.code, show(r)).toBe(0);
      const env = parseStdout<Envelope>(r);
      expect(env.status).toBe("SUCCESS");
      expect(env.attempts).toBe(2);
      expect(env.audit.self_correction_count).toBe(1);
      expect(env.gates.some((g) => g.attempt === 1 && !g.passed)).toBe(true);
      const final = env.gates.filter((g) => g.attempt === 2);
      expect(final.map((g) => g.id).sort()).toEqual(gateIdsOf(exampleTask(name)).sort());
      expect(final.every((g) => g.passed)).toBe(true);
    });

  it("a forger's claim of success is recorded but the held-out gates refuse it", async () => {
    const script = join(exampleDir("js-slugify"), "builders", "forger.sh");
    const r = await loopgate([
      "run",
      exampleTask("js-slugify"),
      "--builder",
      script,
      "--json",
      "--max-attempts",
      "2",
      "--store",
      tempDir(),
    ]);
    expect(r.code, show(r)).toBe(1);
    const env = parseStdout<Envelope>(r);
    expect(env.status).not.toBe("SUCCESS");
    const claim = claimOf(script);
    expect(env.claims.some((c) => c.text.includes(claim))).toBe(true);
    expect(env.gates.some((g) => g.attempt === env.attempts && !g.passed)).toBe(true);
  });

  it("a builder that edits the protected tests gets a blocking protected_path_modified finding", async () => {
    const script = join(exampleDir("js-slugify"), "builders", "test-editor.sh");
    const r = await loopgate([
      "run",
      exampleTask("js-slugify"),
      "--builder",
      script,
      "--json",
      "--max-attempts",
      "2",
      "--store",
      tempDir(),
    ]);
    expect(r.code, show(r)).toBe(1);
    const env = parseStdout<Envelope>(r);
    expect(env.status).not.toBe("SUCCESS");
    const found = env.findings.filter((f) => f.code === "protected_path_modified");
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((f) => f.severity === "blocking")).toBe(true);
    expect(found.some((f) => f.path === "test/slugify.test.js")).toBe(true);
    expect(env.claims.some((c) => c.text.includes(claimOf(script)))).toBe(true);
  });

  it("off a terminal, progress goes to stderr as plain lines and the verdict to stdout", async () => {
    const task = exampleTask("js-slugify");
    const store = tempDir();
    const r = await loopgate(["run", task, "--noop", "--max-attempts", "2", "--store", store]);
    expect(r.code, show(r)).toBe(1);
    expect(r.stderr).not.toMatch(/\r/);
    const ESC = "\u001b";
    expect(r.stderr.includes(ESC), "ANSI escape on stderr").toBe(false);
    expect(r.stdout.includes(ESC) || r.stdout.includes("\r"), "\\r or ANSI escape on stdout").toBe(false);
    expect(r.stderr).toContain("attempt 1/2");
    expect(r.stderr).toContain("attempt 2/2");
    for (const id of gateIdsOf(task)) expect(r.stderr).toContain(id);
    expect(r.stdout).toContain("ESCALATED");
    // The human summary names the command that shows the audit trail; it works as printed.
    // (`node …/bin/loopgate.js events RUN_ID --store …`: the store given is not the one found from here.)
    const m = /loopgate(?:\.js)? (events \S+ --store \S+)/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    const events = await loopgate((m?.[1] ?? "").split(" "));
    expect(events.code, show(events)).toBe(0);
    expect(events.stdout).toContain("run_finished");
  });

  it("--builder naming a command that does not exist is a TOOL_FAILURE naming it", async () => {
    const r = await loopgate([
      "run",
      exampleTask("js-slugify"),
      "--builder",
      "no-such-agent-xyz {prompt}",
      "--json",
      "--store",
      tempDir(),
    ]);
    expect(r.code, show(r)).toBe(2);
    const env = parseStdout<Envelope>(r);
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toContain("no-such-agent-xyz");
  });
});
