// The README's first command (`loopgate demo`), `--help` and `--version`.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EXAMPLES, loopgate, parseStdout, ROOT, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);

interface DemoResult {
  store: string;
  rows: { task: string; builder: string; expected: string; status: string; ok: boolean; run_id: string }[];
}

describe.concurrent("loopgate demo, --help, --version", () => {
  it("demo --json: every example × builder row ends as expected", { timeout: 180_000 }, async () => {
    const store = tempDir();
    const r = await loopgate(["demo", "--json", "--store", store], { timeoutMs: 175_000 });
    expect(r.code, show(r)).toBe(0);
    const demo = parseStdout<DemoResult>(r);
    // README: "an oracle, two forgers and an honest fixer" for each bundled example.
    expect(demo.rows.length).toBe(EXAMPLES.length * 4);
    expect(new Set(demo.rows.map((row) => row.task))).toEqual(new Set(EXAMPLES));
    for (const row of demo.rows) expect(row.ok, JSON.stringify(row)).toBe(true);
    for (const row of demo.rows.filter((x) => /forger|editor/.test(x.builder)))
      expect(row.status, JSON.stringify(row)).not.toBe("SUCCESS");
    // The runs landed in the store we named, and can be read back.
    const runs = await loopgate(["runs", "--store", store, "--json", "--limit", "100"]);
    expect(runs.code, show(runs)).toBe(0);
    const ids = parseStdout<{ run_id: string }[]>(runs).map((x) => x.run_id);
    expect(ids).toEqual(expect.arrayContaining(demo.rows.map((row) => row.run_id)));
  });

  it("demo EXAMPLE runs only the examples named; an unknown one is refused (exit 2) naming the examples", async () => {
    const bad = await loopgate(["demo", "js-slugify", "no-such-example", "--store", tempDir()]);
    expect(bad.code, show(bad)).toBe(2);
    expect(bad.stderr).toContain("no bundled example no-such-example; the examples: ");
    for (const name of EXAMPLES) expect(bad.stderr).toContain(name);
    expect(bad.stdout).toBe("");
  });

  it("--help exits 0 and lists every command", async () => {
    const r = await loopgate(["--help"]);
    expect(r.code, show(r)).toBe(0);
    for (const cmd of ["run", "verify", "task check", "runs", "status", "events", "demo"])
      expect(r.stdout).toMatch(new RegExp(`loopgate ${cmd} `));
  });

  it("--version prints package.json's version", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    const r = await loopgate(["--version"]);
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout.trim()).toBe(version);
  });
});
