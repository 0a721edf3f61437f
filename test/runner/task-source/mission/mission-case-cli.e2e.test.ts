// `loopgate run --case FILE`, as a user runs it (needs `npm run build`).
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Envelope, loopgate, parseStdout, removeTemps, show, tempDir } from "../../../e2e/cli.js";

afterAll(removeTemps);

const SUM = {
  prompt: "Add the numbers in input.json and write the sum to answer.json.",
  goal: "task:sum",
  files: { "input.json": "[2,3]\n" },
  artifacts: { "answer.json": { sum: 5 } },
  preserve: ["input.json"],
};

function setup(body: object = SUM) {
  const dir = tempDir("loopgate-e2e-case-");
  const file = join(dir, "sum.json");
  writeFileSync(file, JSON.stringify(body, null, 2));
  const builder = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, `#!/bin/sh\n${text}\n`);
    chmodSync(p, 0o755);
    return p;
  };
  return { dir, file, store: join(dir, "store"), builder };
}

describe("loopgate run --case FILE", () => {
  it("exits 0 with a SUCCESS envelope when the builder writes the expected artifact", async () => {
    const s = setup();
    const cmd = s.builder("right.sh", `echo '{"sum": 5}' > answer.json`);
    const r = await loopgate(["run", "--case", s.file, "--builder", cmd, "--json", "--store", s.store]);
    expect(r.code, show(r)).toBe(0);
    const env = parseStdout<Envelope>(r);
    expect(env.status).toBe("SUCCESS");
    expect(env.task_id).toBe("case-sum");
    expect(env.gates.map((g) => g.id)).toEqual(["artifact-answer-json", "preserve-input-json"]);
  });

  it("exits 1, naming the artifact gate, on a wrong answer", async () => {
    const s = setup();
    const cmd = s.builder("wrong.sh", `echo '{"sum": 23}' > answer.json`);
    const r = await loopgate([
      "run",
      "--case",
      s.file,
      "--builder",
      cmd,
      "--json",
      "--store",
      s.store,
      "--max-attempts",
      "1",
    ]);
    expect(r.code, show(r)).toBe(1);
    const env = parseStdout<Envelope>(r);
    expect(env.status).toBe("ESCALATED");
    expect(env.reason).toContain("artifact-answer-json");
  });

  it("binds to --workspace DIR and refuses an unlisted file there (exit 2)", async () => {
    const s = setup();
    const ws = join(s.dir, "repo");
    mkdirSync(ws);
    writeFileSync(join(ws, "input.json"), "[2,3]\n");
    const cmd = s.builder("right.sh", `echo '{"sum": 5}' > answer.json`);
    const args = ["run", "--case", s.file, "--workspace", ws, "--builder", cmd, "--json", "--store", s.store];
    const ok = await loopgate(args);
    expect(ok.code, show(ok)).toBe(0);
    writeFileSync(join(ws, "extra.txt"), "x\n");
    const refused = await loopgate(args);
    expect(refused.code, show(refused)).toBe(2);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("extra.txt is not listed in files");
  });

  it("prints a note that criteria are recorded, not enforced", async () => {
    const s = setup({ ...SUM, criteria: ["the sum is correct"] });
    const cmd = s.builder("right.sh", `echo '{"sum": 5}' > answer.json`);
    const r = await loopgate(["run", "--case", s.file, "--builder", cmd, "--json", "--store", s.store]);
    expect(r.code, show(r)).toBe(0);
    expect(r.stderr).toContain("1 criteria recorded as local metadata, not enforced");
  });

  it("refuses TASK together with --case, --case on other commands, and a malformed fixture", async () => {
    const s = setup();
    const both = await loopgate(["run", "task.yaml", "--case", s.file, "--noop", "--store", s.store]);
    expect(both.code, show(both)).toBe(2);
    expect(both.stderr).toContain("give either TASK or --case FILE, not both");
    const verify = await loopgate(["verify", "task.yaml", "--case", s.file, "--workspace", s.dir]);
    expect(verify.code, show(verify)).toBe(2);
    expect(verify.stderr).toContain("--case applies only to loopgate run");
    const bad = join(s.dir, "bad.yaml");
    writeFileSync(bad, "prompt: p\ngoal: g\nfiles:\n  ../x: y\nartifacts: { a.json: 1 }\n");
    const malformed = await loopgate(["run", "--case", bad, "--noop", "--store", s.store]);
    expect(malformed.code, show(malformed)).toBe(2);
    expect(malformed.stderr).toContain(`${bad}:4: files["../x"]: a path may not contain a .. segment`);
  });
});
