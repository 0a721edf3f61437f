// Builders and oracles that cannot start end the run as TOOL_FAILURE at once, and the files a
// builder command names are mounted for it (real bubblewrap, real SQLite).
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Builder } from "../../src/builders/builder.js";
import { commandBuilder, oracleBuilder } from "../../src/builders/command-builder.js";
import { InputError } from "../../src/core/kernel/errors.js";
import type { Envelope } from "../../src/core/run/envelope.js";
import { mountGuards, planBuilderMounts } from "../../src/runner/run/context/builder-mounts.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { RunJournal } from "../../src/runner/stream/run-journal.js";
import { type LoadedTask, loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { runTree } from "../support/run-tree.js";
import { makeTask } from "./task-fixture.js";

const SECRET = "HELDOUT-MARKER-51b3";
const taskYaml = (gateProgram = '"sh"') => `id: answer
prompt: Make lib/answer.sh print 42.
workspace: ./repo
deliverables: ["lib/**"]
gates:
  - id: hidden
    run: [${gateProgram}, "hidden/check.sh"]
    heldout: ./heldout
    timeout: 10s
budget: { attempts: 3 }
oracle: ./solution.sh
`;
const repo = { "lib/answer.sh": "echo 41\n" };
const heldout = {
  "hidden/check.sh": `# ${SECRET}\n[ "$(sh lib/answer.sh)" = 42 ] || { echo "${SECRET} wrong"; exit 1; }\n`,
};
// Reports what it can see next to itself and writes the fix; used as `bash ./fix.sh` from the task folder.
const probe = (dirExpr: string) => `
d=${dirExpr}
if [ -e "$d/heldout/hidden/check.sh" ]; then echo HELDOUT >> lib/seen.txt; fi
if [ -e "$d/task.yaml" ]; then echo TASKFOLDER >> lib/seen.txt; fi
if [ -e "$d/.loopgate/runs/older/secret.txt" ]; then echo OTHER-RUNS >> lib/seen.txt; fi
echo ok >> lib/seen.txt
`;

let localDir: string;
let agents: string;
let store: SqliteEventStore;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-start-"));
  agents = await mkdtemp(join(tmpdir(), "loopgate-agents-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  await rm(localDir, { recursive: true, force: true });
  await rm(agents, { recursive: true, force: true });
});

async function task(gateProgram?: string, oracle = "#!/bin/sh\necho 'echo 42' > lib/answer.sh\n") {
  const t = await makeTask({ taskYaml: taskYaml(gateProgram), repo, heldout });
  writeFileSync(join(t.dir, "solution.sh"), oracle);
  chmodSync(join(t.dir, "solution.sh"), 0o755);
  // An older run's files in the default log beside the task: never for the builder's eyes.
  mkdirSync(join(t.dir, ".loopgate", "runs", "older"), { recursive: true });
  writeFileSync(join(t.dir, ".loopgate", "runs", "older", "secret.txt"), "older run");
  return { ...t, loaded: loadTask(t.file) };
}

const run = (loaded: LoadedTask, builder: Builder, mounts: string[] = []) =>
  runTask({ loaded, builder, store, localDir, sandbox: "bubblewrap", mounts });

const events = (env: Envelope) => store.readStream(RunJournal.stream(env.run_id));
const workspaceFile = async (env: Envelope, p: string) => join(await runTree(localDir, env.run_id), p);

/** An agent folder apart from the task, as a user keeps their own agent script. */
function agentFolder(files: Record<string, string>): string {
  const dir = join(agents, `agent-${Math.random().toString(16).slice(2)}`);
  mkdirSync(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe("a builder command's own files are mounted", () => {
  it("`bash ./fix.sh` next to the task file runs; the task folder, held-out files and other runs stay hidden", async () => {
    const t = await task();
    writeFileSync(join(t.dir, "fix.sh"), `${probe('"$(dirname "$0")"')}echo 'echo 42' > lib/answer.sh\n`);
    const notes: string[] = [];
    const env = await runTask({
      loaded: t.loaded,
      builder: commandBuilder("bash ./fix.sh {prompt}", t.dir),
      store,
      localDir,
      sandbox: "bubblewrap",
      reporter: { note: (s) => notes.push(s) },
    });
    expect(env.status, env.reason).toBe("SUCCESS");
    expect(env.attempts).toBe(1);
    expect(readFileSync(await workspaceFile(env, "lib/seen.txt"), "utf8")).toBe("ok\n");
    // The script's folder is the task folder, so only the script is mounted, and the user is told.
    expect(notes.join("\n")).toContain("not mounted");
  });

  it("`node agent.js` (a bare name) runs with its folder mounted, so it can require a sibling", async () => {
    const t = await task();
    const dir = agentFolder({
      "agent.js":
        'const fs = require("node:fs"); fs.writeFileSync("lib/answer.sh", require("./answer.js"));\n',
      "answer.js": 'module.exports = "echo 42\\n";\n',
    });
    const env = await run(t.loaded, commandBuilder("node agent.js {prompt}", dir));
    expect(env.status, env.reason).toBe("SUCCESS");
  });

  it("`python3 bin/solve.py` runs and reads a data file beside itself", async () => {
    const t = await task();
    const dir = agentFolder({});
    mkdirSync(join(dir, "bin"));
    writeFileSync(
      join(dir, "bin", "solve.py"),
      "import os\nhere = os.path.dirname(os.path.abspath(__file__))\n" +
        "open('lib/answer.sh', 'w').write(open(os.path.join(here, 'answer.txt')).read())\n",
    );
    writeFileSync(join(dir, "bin", "answer.txt"), "echo 42\n");
    const env = await run(t.loaded, commandBuilder("python3 bin/solve.py", dir));
    expect(env.status, env.reason).toBe("SUCCESS");
  });

  it("a command naming a held-out file is refused before anything runs", async () => {
    const t = await task();
    const builder = commandBuilder(`cat ${join(t.dir, "heldout", "hidden", "check.sh")}`);
    await expect(run(t.loaded, builder)).rejects.toThrow(InputError);
    await expect(run(t.loaded, builder)).rejects.toThrow(/heldout/);
  });

  it("the oracle reads a file beside it, but not the held-out folders or the log beside it", async () => {
    const t = await task(
      undefined,
      `#!/bin/sh\n${probe('"$(dirname "$0")"')}cp "$(dirname "$0")/answer.txt" lib/answer.sh\n`,
    );
    writeFileSync(join(t.dir, "answer.txt"), "echo 42\n");
    const env = await run(t.loaded, oracleBuilder(t.loaded.oracle as string));
    expect(env.status, env.reason).toBe("SUCCESS");
    expect(readFileSync(await workspaceFile(env, "lib/seen.txt"), "utf8")).toBe("TASKFOLDER\nok\n");
  });
});

describe("a builder that cannot start is TOOL_FAILURE at once", () => {
  it("a --builder-mount that does not exist: TOOL_FAILURE naming it, before the builder ran", async () => {
    const t = await task();
    const missing = join(agents, "no-such-agent-install");
    const env = await run(t.loaded, commandBuilder("sh -c 'echo ran > lib/ran.txt'"), [missing]);
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toContain(missing);
    expect(env.reason).toContain("--builder-mount");
    expect(env.attempts).toBe(0);
    expect((await events(env)).some((e) => e.type === "builder_finished")).toBe(false);
  });

  it("a gate program that is not installed: TOOL_FAILURE before the builder ran", async () => {
    const t = await task('"no-such-checker-8812"');
    const env = await run(t.loaded, commandBuilder("sh -c 'echo ran > lib/ran.txt'"));
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toContain("no-such-checker-8812");
    expect(env.reason).toContain("install");
    expect((await events(env)).some((e) => e.type === "builder_finished")).toBe(false);
    expect(existsSync(await workspaceFile(env, "lib/ran.txt"))).toBe(false);
  });

  it("a builder program that is not found: TOOL_FAILURE before any attempt", async () => {
    const t = await task();
    const env = await run(t.loaded, commandBuilder("no-such-agent-5521 {prompt}"));
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toContain("no-such-agent-5521");
    expect(env.attempts).toBe(0);
  });

  it.each([
    ["bash ./missing-agent.sh {prompt}", "missing-agent.sh"],
    ["python3 missing_agent.py", "missing_agent.py"],
    ["node missing-agent.js", "missing-agent.js"],
    ["sh -c 'no-such-tool-7781 --fix'", "no-such-tool-7781"],
  ])(
    "`%s` changes nothing and fails to start: TOOL_FAILURE after one attempt, naming %s",
    async (cmd, name) => {
      const t = await task();
      const env = await run(t.loaded, commandBuilder(cmd, agents));
      expect(env.status).toBe("TOOL_FAILURE");
      expect(env.attempts).toBe(1);
      expect(env.reason).toContain(name);
      expect(env.reason).toContain("--builder-mount");
    },
  );

  it("a builder that runs but fails (exit 1) without changes is the work's failure, not TOOL_FAILURE", async () => {
    const t = await task();
    const env = await runTask({
      loaded: t.loaded,
      builder: commandBuilder("sh -c 'echo cannot fix this; exit 1'"),
      store,
      localDir,
      sandbox: "bubblewrap",
      maxAttempts: 2,
    });
    expect(env.status).toBe("ESCALATED");
    expect(env.attempts).toBe(2);
  });
});

describe("the final reason names a builder timeout", () => {
  it("a builder killed at builder.timeout: the reason says so and how long it ran", async () => {
    const t = await makeTask({
      taskYaml: `${taskYaml().replace("oracle: ./solution.sh\n", "")}builder: { timeout: 1s }\n`,
      repo,
      heldout,
    });
    const env = await runTask({
      loaded: loadTask(t.file),
      builder: commandBuilder("sleep 30"),
      store,
      localDir,
      sandbox: "bubblewrap",
      maxAttempts: 1,
    });
    expect(env.status).toBe("ESCALATED");
    // How long it ran is measured, so only its form is asserted (load may stretch it).
    expect(env.reason).toMatch(/the builder timed out after \d+ s \(builder\.timeout in the task\)/);
  });
});

describe("the mount plan keeps the refusal rules", () => {
  it("a --builder-mount symlink to a held-out folder is refused like the folder itself", async () => {
    const t = await task();
    const link = join(agents, `link-${Math.random().toString(16).slice(2)}`);
    symlinkSync(join(t.dir, "heldout"), link);
    expect(() => planBuilderMounts(commandBuilder("true"), [link], mountGuards(t.loaded, localDir))).toThrow(
      /would expose .*heldout/,
    );
  });

  it("a script in the temp root itself: its folder is too broad, only the script is mounted", async () => {
    const t = await task();
    const script = join(tmpdir(), `loopgate-script-${Math.random().toString(16).slice(2)}.sh`);
    writeFileSync(script, "echo hi\n");
    try {
      const plan = planBuilderMounts(commandBuilder(`bash ${script}`), [], mountGuards(t.loaded, localDir));
      expect(plan.mounts).toEqual([script]);
      expect(plan.notes.join("\n")).toContain("too broad");
    } finally {
      rmSync(script);
    }
  });

  it("an oracle inside a held-out folder gets only itself, never the held-out folder", async () => {
    const t = await task();
    const oracle = join(t.dir, "heldout", "solve.sh");
    writeFileSync(oracle, "#!/bin/sh\n");
    const guards = { ...mountGuards(t.loaded, localDir), oracle };
    const plan = planBuilderMounts(oracleBuilder(oracle), [], guards);
    expect(plan.mounts).toEqual([oracle]);
    expect(plan.masked).toEqual([]);
  });
});
