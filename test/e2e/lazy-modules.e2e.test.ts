// Builder families and the PostgreSQL store are loaded only when a run chooses them: `run --oracle` on a
// folder store loads no module of the built-in agent, of the PostgreSQL store, nor the `ai` or `pg`
// packages; a run that does choose the agent, or a postgres:// store, loads them and still succeeds (from
// the compiled modules with the loader hook of bench/modules-hook.mjs, and from the bundle bin/loopgate.js
// starts, where esbuild turns each dynamic import() into a module evaluated on first use).
import { spawn } from "node:child_process";
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { type Envelope, exampleDir, loopgate, parseStdout, ROOT, removeTemps, show, tempDir } from "./cli.js";

const DIST = `${join(ROOT, "dist")}/`;
const CHILD = join(ROOT, "bench", "modules-child.mjs");

/** What one CLI start loaded: its exit, its output, and every file the ES module loader loaded. */
interface Traced {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Paths under dist/, relative to it (`cli/main.js`). */
  dist: string[];
  /** Package names under node_modules/ (`pg`, `@ai-sdk/openai`). */
  packages: Set<string>;
}

/** Runs the compiled CLI (dist/cli/main.js) with `args`, recording every module it loads. */
function traced(args: readonly string[], cwd: string): Promise<Traced> {
  const out = join(tempDir(), "modules.txt");
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.LOOPGATE_STORE;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CHILD, out, ROOT, ...args], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const paths = readFileSync(out, "utf8")
        .split("\n")
        .filter((u) => u.startsWith("file://"))
        .map((u) => fileURLToPath(u));
      const packages = new Set<string>();
      for (const p of paths) {
        const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(p);
        if (m?.[1]) packages.add(m[1]);
      }
      const dist = paths
        .filter((p) => p.startsWith(DIST) && !p.includes("/node_modules/"))
        .map((p) => p.slice(DIST.length));
      resolvePromise({ code, stdout, stderr, dist, packages });
    });
  });
}

const under = (t: Traced, folder: string) => t.dist.filter((f) => f.startsWith(folder));
const aiPackages = (t: Traced) => [...t.packages].filter((p) => p === "ai" || p.startsWith("@ai-sdk/"));

/** A private copy of an example (its run folders and lock stay in a temp folder). */
function exampleCopy(name: "sh-csvcol" | "js-slugify"): string {
  const dir = join(tempDir(), name);
  cpSync(exampleDir(name), dir, { recursive: true });
  return join(dir, "task.yaml");
}

const honestAgent = () => `scripted:${join(exampleDir("js-slugify"), "agent", "honest.yaml")}`;

afterAll(removeTemps);

describe("run --oracle on a folder store", () => {
  let t: Traced;
  let cwd: string;
  beforeAll(async () => {
    cwd = tempDir();
    t = await traced(["run", exampleCopy("sh-csvcol"), "--oracle", "--json", "--store", join(cwd, "s")], cwd);
  });

  it("succeeds, and the trace saw the CLI and the SQLite store it used", () => {
    expect(t.code, `${t.stdout}\n${t.stderr}`).toBe(0);
    expect(
      parseStdout<Envelope>({ code: t.code, signal: null, stdout: t.stdout, stderr: t.stderr }).status,
    ).toBe("SUCCESS");
    // Without these the assertions below would pass on a trace that recorded nothing.
    expect(t.dist).toContain("cli/main.js");
    expect(t.dist).toContain("store/sqlite/sqlite-event-store.js");
    expect(t.packages.has("better-sqlite3")).toBe(true);
  });

  it("loads no module of the built-in agent, the Claude Code or Codex builders, or the PostgreSQL store", () => {
    expect(under(t, "agent/")).toEqual([]);
    expect(under(t, "builders/claude/")).toEqual([]);
    expect(under(t, "builders/codex/")).toEqual([]);
    expect(under(t, "store/postgres/")).toEqual([]);
  });

  it("loads neither pg nor the AI SDK, nor the JavaScript parser (the example has no JavaScript test to twin)", () => {
    expect(t.packages.has("pg")).toBe(false);
    expect(aiPackages(t)).toEqual([]);
    expect(t.packages.has("@babel/parser")).toBe(false);
  });

  it("reading the run back (status, events) loads no task-file code: its events are built per type as read", async () => {
    const runId = parseStdout<Envelope>({
      code: t.code,
      signal: null,
      stdout: t.stdout,
      stderr: t.stderr,
    }).run_id;
    for (const command of ["status", "events"]) {
      const r = await traced([command, runId, "--store", join(cwd, "s")], cwd);
      expect(r.code, `${command}: ${r.stdout}\n${r.stderr}`).toBe(0);
      // status names the run; events lists its facts, the first of which starts it.
      expect(r.stdout, command).toContain(command === "status" ? runId : "run_started");
      expect(r.dist, command).toContain("core/events/loopgate-event.js");
      expect(r.dist, command).not.toContain("core/task/task.js");
      expect(r.dist, command).not.toContain("runner/task-source/load-task.js");
    }
  });
});

describe("goal commands on a folder store", () => {
  it("goal new and goal status load neither the PostgreSQL event store nor pg, nor the agent", async () => {
    const cwd = tempDir();
    cpSync(join(ROOT, "examples", "goal-csvcol"), join(cwd, "goal-csvcol"), { recursive: true });
    cpSync(exampleDir("sh-csvcol"), join(cwd, "sh-csvcol"), { recursive: true });
    const store = join(cwd, "s");
    const created = await traced(
      ["goal", "new", join(cwd, "goal-csvcol", "goal.yaml"), "--store", store],
      cwd,
    );
    expect(created.code, `${created.stdout}\n${created.stderr}`).toBe(0);
    const t = await traced(["goal", "status", "csvcol-rfc4180", "--json", "--store", store], cwd);
    expect(t.code, `${t.stdout}\n${t.stderr}`).toBe(0);
    expect(JSON.parse(t.stdout)).toMatchObject({ goalId: "csvcol-rfc4180" });
    // The trace saw the goal commands and the SQLite store they used.
    expect(t.dist).toContain("runner/goal/goal-service.js");
    expect(t.packages.has("better-sqlite3")).toBe(true);
    for (const r of [created, t]) {
      // (The queue's row shapes, store/postgres/run-queue-rows.js, are plain zod: a goal reads its job ids.)
      expect(r.dist).not.toContain("store/postgres/postgres-event-store.js");
      expect(r.packages.has("pg")).toBe(false);
      expect(under(r, "agent/")).toEqual([]);
    }
  });
});

describe("goal tick with a scripted planner", () => {
  it("loads no AI SDK package: the SDK is loaded when a provider model is made", async () => {
    const cwd = tempDir();
    cpSync(join(ROOT, "examples", "goal-csvcol"), join(cwd, "goal-csvcol"), { recursive: true });
    cpSync(exampleDir("sh-csvcol"), join(cwd, "sh-csvcol"), { recursive: true });
    const store = join(cwd, "s");
    const created = await loopgate(["goal", "new", join(cwd, "goal-csvcol", "goal.yaml"), "--store", store], {
      cwd,
    });
    expect(created.code, show(created)).toBe(0);
    // The planner's script is missing: the tick reads its flags, opens the goal, and refuses the model file.
    const missing = join(cwd, "no-such-planner.json");
    const t = await traced(
      ["goal", "tick", "csvcol-rfc4180", "--planner-model", `scripted:${missing}`, "--store", store],
      cwd,
    );
    expect(t.code, `${t.stdout}\n${t.stderr}`).toBe(2);
    expect(t.stderr).toContain(missing);
    // The trace saw the tick's own modules, the planner's among them.
    expect(t.dist).toContain("runner/goal/turn/tick.js");
    expect(t.dist).toContain("agent/models/provider.js");
    expect(aiPackages(t)).toEqual([]);
  });
});

describe("a run that chooses the built-in agent", () => {
  it("loads the agent when --model chooses it (compiled modules), and the run succeeds", async () => {
    const cwd = tempDir();
    const t = await traced(
      ["run", exampleCopy("js-slugify"), "--model", honestAgent(), "--json", "--store", join(cwd, "s")],
      cwd,
    );
    expect(t.code, `${t.stdout}\n${t.stderr}`).toBe(0);
    expect(under(t, "agent/").length).toBeGreaterThan(0);
    expect(t.dist).toContain("runner/run/phases/agent-phase.js");
    // Choosing the agent does not drag in the PostgreSQL store.
    expect(under(t, "store/postgres/")).toEqual([]);
    expect(t.packages.has("pg")).toBe(false);
  });

  it("succeeds from the bundle too", async () => {
    const cwd = tempDir();
    const r = await loopgate(
      ["run", exampleCopy("js-slugify"), "--model", honestAgent(), "--json", "--store", join(cwd, "s")],
      { cwd },
    );
    expect(r.code, show(r)).toBe(0);
    expect(parseStdout<Envelope>(r).status).toBe("SUCCESS");
  });
});

describe("a postgres:// store", () => {
  let db: FreshDatabase;
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("loads the PostgreSQL room and pg (compiled modules), not the agent, and the run succeeds", async () => {
    const cwd = tempDir();
    const t = await traced(["run", exampleCopy("sh-csvcol"), "--oracle", "--json", "--store", db.url], cwd);
    expect(t.code, `${t.stdout}\n${t.stderr}`).toBe(0);
    expect(t.dist).toContain("store/postgres/postgres-event-store.js");
    expect(t.packages.has("pg")).toBe(true);
    expect(under(t, "agent/")).toEqual([]);
    expect(under(t, "store/sqlite/")).toEqual([]);
  });

  it("works from the bundle: a run recorded there is listed by `runs`", async () => {
    const cwd = tempDir();
    const r = await loopgate(["run", exampleCopy("sh-csvcol"), "--oracle", "--json", "--store", db.url], {
      cwd,
    });
    expect(r.code, show(r)).toBe(0);
    const env = parseStdout<Envelope>(r);
    expect(env.status).toBe("SUCCESS");
    const runs = await loopgate(["runs", "--store", db.url, "--json"], { cwd });
    expect(runs.code, show(runs)).toBe(0);
    expect(parseStdout<{ run_id: string }[]>(runs).map((x) => x.run_id)).toContain(env.run_id);
  });
});
