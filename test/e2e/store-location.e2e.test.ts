// One rule for where the store is, for every command: --store, else the nearest .loopgate/ walking up
// from the current folder, else $LOOPGATE_STORE, else ./.loopgate/. A run started from a folder is found
// by every other command started from that folder (or below it), whatever folder the task lives in.
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BIN,
  type CliResult,
  copyExample,
  type Envelope,
  loopgate,
  parseStdout,
  ROOT,
  removeTemps,
  show,
  tempDir,
} from "./cli.js";

afterAll(removeTemps);

/** The environment of a user's shell: no store of the caller's, nothing npm set. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith("npm_") && k !== "LOOPGATE_STORE") env[k] = v;
  return { ...env, ...extra };
}

/** `node bin/loopgate.js ARGS` in `cwd` with exactly `env` (an empty LOOPGATE_STORE stays set). */
function lg(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = userEnv()): Promise<CliResult> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    child.on("error", rej);
    child.on("close", (code, signal) => res({ code, signal, stdout, stderr }));
  });
}

const lastLine = (s: string) => s.trimEnd().split("\n").at(-1);

beforeAll(() => {
  // The walk goes up to the filesystem root: a store above the temporary folders would be found instead.
  for (let d = dirname(tempDir()); ; d = dirname(d)) {
    if (existsSync(join(d, ".loopgate", "events.db")))
      throw new Error(`a store at ${d}/.loopgate lies above the test's folders; remove it to run this test`);
    if (dirname(d) === d) break;
  }
});

describe("a run started from a folder is found from that folder by every command", () => {
  let folder = "";
  let taskRel = "";
  let runId = "";
  beforeAll(async () => {
    const task = copyExample("js-slugify");
    folder = dirname(dirname(task));
    taskRel = join(basename(dirname(task)), "task.yaml");
    const r = await lg(["run", taskRel, "--oracle"], folder);
    expect(r.code, show(r)).toBe(0);
    runId = /run (\S+) ·/.exec(r.stdout)?.[1] ?? "";
    expect(runId, show(r)).not.toBe("");
    // The verdict's last line names the store, relative to the folder it was started from.
    expect(lastLine(r.stdout), show(r)).toBe("store: ./.loopgate");
    expect(existsSync(join(folder, ".loopgate", "events.db"))).toBe(true);
    // Not beside the task file any more.
    expect(existsSync(join(dirname(join(folder, taskRel)), ".loopgate"))).toBe(false);
  });

  it("runs, status, events and report find it without --store", async () => {
    const runs = await lg(["runs", "--json"], folder);
    expect(runs.code, show(runs)).toBe(0);
    expect(parseStdout<{ run_id: string }[]>(runs).map((x) => x.run_id)).toEqual([runId]);
    const status = await lg(["status", runId, "--json"], folder);
    expect(status.code, show(status)).toBe(0);
    expect(parseStdout<Envelope>(status)).toMatchObject({ run_id: runId, status: "SUCCESS" });
    const events = await lg(["events", runId, "--json"], folder);
    expect(events.code, show(events)).toBe(0);
    expect(
      events.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).type),
    ).toContain("run_finished");
    const junit = join(folder, "report.xml");
    const report = await lg(["report", runId, "--junit", junit], folder);
    expect(report.code, show(report)).toBe(0);
    expect(readFileSync(junit, "utf8")).toContain("<testsuite");
  });

  it("doctor, health and gc --dry-run look at the same store", async () => {
    const doctor = await lg(["doctor", "--json"], folder);
    expect(doctor.stdout, show(doctor)).toContain(join(folder, ".loopgate"));
    const health = await lg(["health", "--json"], folder);
    expect(health.code, show(health)).toBe(0);
    const gc = await lg(["gc", "--dry-run", "--older-than", "30m", "--json"], folder);
    expect(gc.code, show(gc)).toBe(0);
    // Found the run (it is kept: too young), rather than an empty or missing store.
    expect(gc.stdout, show(gc)).toContain(runId);
  });

  it("from a folder below, the walk up finds the parent's .loopgate", async () => {
    const below = join(folder, "deep", "er");
    mkdirSync(below, { recursive: true });
    const status = await lg(["status", runId], below);
    expect(status.code, show(status)).toBe(0);
    expect(status.stdout).toContain(`SUCCESS · run ${runId}`);
    // The task's own folder is below too: a run started there lands in the same store.
    const again = await lg(["verify", "task.yaml", "--workspace", "repo"], dirname(join(folder, taskRel)));
    expect(again.code, show(again)).toBe(1);
    expect(lastLine(again.stdout)).toBe(`store: ${join(folder, ".loopgate")}`);
    const runs = parseStdout<{ run_id: string }[]>(await lg(["runs", "--json"], folder));
    expect(runs).toHaveLength(2);
  });

  it("--store still wins, and the verdict names that store", async () => {
    const other = join(tempDir(), "elsewhere");
    const r = await lg(
      ["verify", taskRel, "--workspace", join(dirname(taskRel), "repo"), "--store", other],
      folder,
    );
    expect(r.code, show(r)).toBe(1);
    expect(lastLine(r.stdout)).toBe(`store: ${other}`);
    // The hint names it, so that it finds the run when pasted here.
    expect(r.stdout).toContain(`--store ${other}`);
    expect(parseStdout<unknown[]>(await lg(["runs", "--json", "--store", other], folder))).toHaveLength(1);
  });
});

describe("goal new and the goal commands use the same store", () => {
  it("goal new from a folder, goal status from it and from below, without --store", async () => {
    const folder = tempDir();
    // The goal's workspace is the sh-csvcol example's, beside it.
    for (const name of ["goal-csvcol", "sh-csvcol"])
      cpSync(join(ROOT, "examples", name), join(folder, name), { recursive: true });
    const created = await lg(["goal", "new", join("goal-csvcol", "goal.yaml"), "--json"], folder);
    expect(created.code, show(created)).toBe(0);
    const goal = parseStdout<{ goal: string; store: string }>(created).goal;
    expect(existsSync(join(folder, ".loopgate", "events.db"))).toBe(true);
    expect(existsSync(join(folder, "goal-csvcol", ".loopgate"))).toBe(false);
    const status = await lg(["goal", "status", goal, "--json"], folder);
    expect(status.code, show(status)).toBe(0);
    const below = join(folder, "goal-csvcol");
    const fromBelow = await lg(["goal", "status", goal], below);
    expect(fromBelow.code, show(fromBelow)).toBe(0);
    const goals = await lg(["goals", "--json"], below);
    expect(goals.stdout, show(goals)).toContain(goal);
  });
});

describe("an empty store is refused, never read as the default", () => {
  it("--store '' exits 2 and says so; nothing is created", async () => {
    const folder = tempDir();
    for (const args of [
      ["runs", "--store", ""],
      ["status", "x", "--store="],
      ["goal", "status", "g", "--store", ""],
    ]) {
      const r = await lg(args, folder);
      expect(r.code, show(r)).toBe(2);
      expect(r.stderr).toContain("--store: is empty");
    }
    expect(existsSync(join(folder, ".loopgate"))).toBe(false);
  });
  it("LOOPGATE_STORE= (set, empty) exits 2 and says so", async () => {
    const folder = tempDir();
    const r = await lg(["runs"], folder, userEnv({ LOOPGATE_STORE: "" }));
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain("LOOPGATE_STORE: is set but empty");
  });
  it("a run refuses an empty --store before anything runs", async () => {
    const task = copyExample("js-slugify");
    const r = await loopgate(["run", task, "--noop", "--store", ""], { cwd: dirname(task) });
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain("--store: is empty");
    expect(existsSync(join(dirname(task), ".loopgate"))).toBe(false);
  });
});

describe("a store inside the work it would check is refused", () => {
  it("run from inside the task's workspace: the default ./.loopgate would be in it; exit 2, nothing run", async () => {
    const task = copyExample("js-slugify");
    const repo = join(dirname(task), "repo");
    const r = await lg(["run", task, "--oracle"], repo);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain(`the store ${join(repo, ".loopgate")} lies inside the task's workspace`);
    expect(existsSync(join(repo, ".loopgate"))).toBe(false);
    // The same from outside it, or with a --store outside it, runs.
    const ok = await lg(["run", task, "--noop", "--store", join(tempDir(), "s")], repo);
    expect(ok.code, show(ok)).toBe(1);
  });
  it("verify --workspace . from the work's own folder needs a --store outside it", async () => {
    const task = copyExample("js-slugify");
    const work = tempDir();
    const r = await lg(["verify", task, "--workspace", "."], work);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain("lies inside --workspace");
    expect(existsSync(join(work, ".loopgate"))).toBe(false);
  });
  it("hook install in a project whose store would be inside it: exit 2, nothing written", async () => {
    const task = copyExample("js-slugify");
    const project = tempDir();
    const r = await lg(["hook", "install", task, "--dry-run"], project);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain("lies inside this project");
    expect(existsSync(join(project, ".claude"))).toBe(false);
    const ok = await lg(["hook", "install", task, "--dry-run", "--store", join(tempDir(), "s")], project);
    expect(ok.code, show(ok)).toBe(0);
  });
});
