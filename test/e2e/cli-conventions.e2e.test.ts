// CLI conventions a new user expects: --version, help per command, flag errors that name the flag and
// suggest the closest, `runs` saying when it truncates, `resume` of a finished run saying it finished.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Envelope,
  exampleTask,
  loopgate,
  parseStdout,
  ROOT,
  removeTemps,
  show,
  tempDir,
} from "./cli.js";

afterAll(removeTemps);
const TASK = exampleTask("js-slugify");

describe.concurrent("version and help", () => {
  it("--version prints package.json's version, also after a command", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    for (const args of [["--version"], ["runs", "--version"]]) {
      const r = await loopgate(args);
      expect(r.code, show(r)).toBe(0);
      expect(r.stdout).toBe(`${version}\n`);
    }
  });

  it("`help COMMAND` and `COMMAND --help` print the same per-command help, with its own flags only", async () => {
    const a = await loopgate(["help", "gc"]);
    const b = await loopgate(["gc", "--help"]);
    const c = await loopgate(["gc", "-h"]);
    expect(a.code, show(a)).toBe(0);
    expect(b.stdout).toBe(a.stdout);
    expect(c.stdout).toBe(a.stdout);
    expect(a.stdout).toMatch(/^Usage:\n {2}loopgate gc /);
    for (const f of ["--older-than AGE", "--keep N", "--dry-run", "--store DIR", "--json"])
      expect(a.stdout).toContain(f);
    expect(a.stdout).not.toContain("--max-attempts");
    const run = await loopgate(["run", "--help"]);
    expect(run.code, show(run)).toBe(0);
    for (const f of [
      "--model SPEC",
      "--max-attempts N",
      "--junit FILE",
      "--markdown FILE",
      "--builder-mount PATH",
    ])
      expect(run.stdout).toContain(f);
    expect(run.stdout).not.toContain("--limit");
    expect(run.stdout).not.toContain("--older-than");
  });

  it("every command of --help has its own help", async () => {
    const top = await loopgate(["help"]);
    expect(top.code, show(top)).toBe(0);
    const names = [
      ...new Set([...top.stdout.matchAll(/^ {2}loopgate ([a-z][a-z-]*)/gm)].map((m) => m[1] as string)),
    ];
    expect(names).toEqual(expect.arrayContaining(["run", "resume", "report", "gc", "runs", "help"]));
    for (const n of names) {
      const r = await loopgate([n, "--help"]);
      expect(r.code, `${n}: ${show(r)}`).toBe(0);
      expect(r.stdout).toContain(`loopgate ${n}`);
    }
  });

  it("help of an unknown command exits 2 and suggests the closest", async () => {
    const r = await loopgate(["help", "reprot"]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain("did you mean report?");
    const u = await loopgate(["rnus"]);
    expect(u.code, show(u)).toBe(2);
    expect(u.stderr).toContain("did you mean runs?");
  });
});

describe.concurrent("flag errors", () => {
  it("a misspelt flag is named with the flag it probably meant", async () => {
    const r = await loopgate(["run", TASK, "--noop", "--max-atempts", "2", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("--max-atempts");
    expect(r.stderr).toContain("did you mean --max-attempts?");
    expect(r.stderr).not.toContain("ERR_PARSE_ARGS");
  });

  it("`--max-attempts -1` says the value must be a positive whole number, naming the flag", async () => {
    const r = await loopgate(["run", TASK, "--noop", "--max-attempts", "-1", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain('--max-attempts: expected a positive whole number (1 or more), got "-1"');
    expect(r.stderr).not.toContain("ambiguous");
  });

  it("a flag the command does not take is refused, naming it and the command", async () => {
    const r = await loopgate(["runs", "--model", "scripted:x.yaml", "--store", tempDir()]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain("--model applies only to loopgate run");
    expect(r.stderr).toContain("not to loopgate runs");
    const v = await loopgate(["status", "some-run", "--limt", "3"]);
    expect(v.code, show(v)).toBe(2);
    expect(v.stderr).toContain("did you mean --limit?");
  });
});

describe("runs truncation and resume of a finished run", () => {
  const store = tempDir();
  const envs: Envelope[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) {
      const r = await loopgate(["run", TASK, "--noop", "--max-attempts", "1", "--json", "--store", store]);
      expect(r.code, show(r)).toBe(1);
      envs.push(parseStdout<Envelope>(r));
    }
  }, 180_000);

  it("`runs --limit 2` of 3 runs says 2 of 3 are shown and how to see more", async () => {
    const r = await loopgate(["runs", "--limit", "2", "--store", store]);
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toContain("2 of 3 runs shown");
    expect(r.stdout).toContain("--limit N");
    expect(r.stdout).toContain(envs[2]?.run_id);
    expect(r.stdout).not.toContain(envs[0]?.run_id);
    const j = await loopgate(["runs", "--limit", "2", "--json", "--store", store]);
    expect(parseStdout<unknown[]>(j).length).toBe(2);
    expect(j.stderr).toContain("2 of 3 runs shown");
    const all = await loopgate(["runs", "--store", store]);
    expect(all.stdout).not.toContain("shown");
  });

  it("`resume` of a finished run says it finished, appends nothing and exits with its status", async () => {
    const id = envs[0]?.run_id as string;
    const before = (await loopgate(["events", id, "--json", "--store", store])).stdout;
    const r = await loopgate(["resume", id, "--store", store]);
    expect(r.code, show(r)).toBe(1); // ESCALATED
    expect(r.stderr).toContain(`run ${id} already finished (ESCALATED`);
    expect(r.stderr).toContain("nothing to resume");
    expect(r.stdout).toContain(`ESCALATED · run ${id}`);
    const after = (await loopgate(["events", id, "--json", "--store", store])).stdout;
    expect(after).toBe(before);
    const j = await loopgate(["resume", id, "--json", "--store", store]);
    expect(parseStdout<Envelope>(j).status).toBe("ESCALATED");
  });
});
