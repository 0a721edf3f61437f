import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import type { ExperimentExport } from "../../src/experiments/run-experiment.js";

// A tiny real experiment through the CLI: oracle vs noop × js-slugify × 2 seeds.
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "loopgate-exp-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: {
      out: (s: string) => void out.push(s),
      err: (s: string) => void err.push(s),
      stderr: process.stderr,
    },
    out: () => out.join(""),
    err: () => err.join(""),
  };
}

const manifest = (task: string) => `name: oracle-vs-noop
control: noop
arms:
  - id: noop
    builder: { noop: true }
  - id: oracle
    builder: { oracle: true }
tasks:
  - id: slug
    task: ${task}
    max_attempts: 1
    meta: { kind: smoke }
seeds: 2
concurrency: 2
`;

describe("loopgate exp run", () => {
  it("runs arms × tasks × seeds, each with its own store, and pairs the outcomes", async () => {
    const file = join(dir, "exp.yaml");
    await writeFile(file, manifest(resolve("examples/js-slugify/task.yaml")));
    const out = join(dir, "result.json");
    const c = capture();
    const code = await main(["exp", "run", file, "--out", out, "--store", join(dir, "store")], c.io);
    expect(code, c.err()).toBe(0);
    const x = JSON.parse(readFileSync(out, "utf8")) as ExperimentExport;
    expect(x.format).toBe("loopgate-experiment/1");
    expect(x.interrupted).toBe(false);
    expect(x.control).toBe("noop");
    expect(x.arms.map((a) => [a.id, a.policy])).toEqual([
      ["noop", "loopgate"],
      ["oracle", "loopgate"],
    ]);
    expect(x.tasks).toEqual([
      expect.objectContaining({
        id: "slug",
        task_id: "js-slugify",
        max_attempts: 1,
        meta: { kind: "smoke" },
      }),
    ]);
    expect(x.runs.map((r) => `${r.task}/${r.seed}/${r.arm}:${r.status}`)).toEqual([
      "slug/1/noop:ESCALATED",
      "slug/1/oracle:SUCCESS",
      "slug/2/noop:ESCALATED",
      "slug/2/oracle:SUCCESS",
    ]);
    // Every run has its own fresh store under the experiment's output folder.
    const stores = new Set(x.runs.map((r) => r.store));
    expect(stores.size).toBe(4);
    for (const s of stores) {
      expect(s.startsWith(x.out_dir)).toBe(true);
      expect(existsSync(join(s, "events.db"))).toBe(true);
    }
    expect(x.runs.every((r) => r.run_id && r.run_status === r.status)).toBe(true);
    expect(x.runs[0]?.gates_failed).toContain("heldout-tests");
    expect(x.pairs).toEqual([
      {
        task: "slug",
        seed: 1,
        status: { noop: "ESCALATED", oracle: "SUCCESS" },
        outcome: { oracle: "improved" },
      },
      {
        task: "slug",
        seed: 2,
        status: { noop: "ESCALATED", oracle: "SUCCESS" },
        outcome: { oracle: "improved" },
      },
    ]);
    expect(x.summary.arms.oracle).toEqual({ runs: 2, SUCCESS: 2, ESCALATED: 0, TOOL_FAILURE: 0 });
    expect(x.summary.paired.oracle).toEqual({ pairs: 2, improved: 2, regressed: 0, tied: 0, unpaired: 0 });
    // The same export sits in the output folder; the report and the progress lines were printed.
    expect(JSON.parse(readFileSync(join(x.out_dir, "experiment.json"), "utf8")).runs).toHaveLength(4);
    expect(c.out()).toMatch(/oracle\s+2\s+0\s+0\s+0\s+2/);
    expect(c.err()).toMatch(/\[4\/4\] slug seed \d (noop|oracle): /);
  });

  it("keeps an execution failure apart from a graded failure, and leaves its pair unpaired", async () => {
    const file = join(dir, "broken.yaml");
    await writeFile(
      file,
      manifest(resolve("examples/js-slugify/task.yaml"))
        .replace("builder: { oracle: true }", "builder: { command: no-such-agent-on-path }")
        .replace("seeds: 2", "seeds: 1"),
    );
    const out = join(dir, "broken.json");
    const c = capture();
    expect(await main(["exp", "run", file, "--out", out, "--store", join(dir, "store")], c.io)).toBe(0);
    const x = JSON.parse(readFileSync(out, "utf8")) as ExperimentExport;
    expect(x.runs.map((r) => r.status)).toEqual(["ESCALATED", "TOOL_FAILURE"]);
    expect(x.runs[1]?.reason).toMatch(/builder command not found: no-such-agent-on-path/);
    expect(x.summary.arms.oracle).toEqual({ runs: 1, SUCCESS: 0, ESCALATED: 0, TOOL_FAILURE: 1 });
    expect(x.pairs[0]?.outcome).toEqual({ oracle: "unpaired" });
    expect(c.out()).toMatch(/oracle\s+loopgate\s+0\s+0\s+1\s+1/);
  });

  it("exits 2 with the file, line and field of a bad manifest, before running anything", async () => {
    const file = join(dir, "bad.yaml");
    await writeFile(
      file,
      manifest(resolve("examples/js-slugify/task.yaml")).replace("seeds: 2", "seeds: many"),
    );
    const c = capture();
    expect(await main(["exp", "run", file], c.io)).toBe(2);
    expect(c.err()).toContain(`${file}:13: seeds: `);
  });

  it("exits 2 naming the manifest field when a task file is missing or has no oracle", async () => {
    const file = join(dir, "missing.yaml");
    await writeFile(file, manifest("./nowhere/task.yaml"));
    const c = capture();
    expect(await main(["exp", "run", file], c.io)).toBe(2);
    expect(c.err()).toMatch(new RegExp(`${file}:10: tasks\\[0\\]\\.task: .*cannot read the task file`));
    const noOracle = join(dir, "task-no-oracle.yaml");
    const text = readFileSync("examples/js-slugify/task.yaml", "utf8")
      .replace(/^oracle: .*$/m, "")
      .replace("workspace: ./repo", `workspace: ${resolve("examples/js-slugify/repo")}`)
      .replace("heldout: ./heldout", `heldout: ${resolve("examples/js-slugify/heldout")}`)
      .replace("canary: ./canary", `canary: ${resolve("examples/js-slugify/canary")}`);
    await writeFile(noOracle, text);
    await writeFile(file, manifest(noOracle));
    const d = capture();
    expect(await main(["exp", "run", file], d.io)).toBe(2);
    expect(d.err()).toMatch(new RegExp(`${file}:7: arms\\[1\\]\\.builder: .*declares no oracle`));
  });

  it("refuses an unknown subcommand", async () => {
    const c = capture();
    expect(await main(["exp", "judge", "x"], c.io)).toBe(2);
    expect(c.err()).toContain("the only subcommand is `run MANIFEST`");
  });
});
