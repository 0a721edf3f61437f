import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder } from "../../src/builders/command-builder.js";
import { InputError } from "../../src/core/kernel/errors.js";
import { mountGuards, planBuilderMounts } from "../../src/runner/run/context/builder-mounts.js";
import { resumeRun } from "../../src/runner/run/resume-run.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { RunJournal } from "../../src/runner/stream/run-journal.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { makeTask } from "./task-fixture.js";

const taskYaml = `id: mounts
prompt: Make lib/answer.sh print 42.
workspace: ./repo
deliverables: ["lib/**"]
gates:
  - id: hidden
    run: ["sh", "hidden/check.sh"]
    heldout: ./heldout
    timeout: 10s
budget: { attempts: 1 }
`;
const files = {
  taskYaml,
  repo: { "lib/answer.sh": "echo 41\n" },
  heldout: { "hidden/check.sh": '[ "$(sh lib/answer.sh)" = 42 ]\n' },
};

let localDir: string;
let agents: string;
let store: SqliteEventStore;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-mounts-"));
  agents = await mkdtemp(join(tmpdir(), "loopgate-agents-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  await rm(localDir, { recursive: true, force: true });
  await rm(agents, { recursive: true, force: true });
});

const fresh = (name: string) => join(agents, `${name}-${Math.random().toString(16).slice(2)}`);
const plan = (file: string, mounts: string[]) =>
  planBuilderMounts(commandBuilder("true"), mounts, mountGuards(loadTask(file), localDir));

describe("--builder-mount is checked on the resolved path", () => {
  it("`/` is refused: it holds everything", async () => {
    const t = await makeTask(files);
    expect(() => plan(t.file, ["/"])).toThrow(InputError);
    expect(() => plan(t.file, ["/"])).toThrow(/root folder/);
  });

  it("a symlink to the task folder is refused like the task folder", async () => {
    const t = await makeTask(files);
    const link = fresh("link");
    symlinkSync(t.dir, link);
    expect(() => plan(t.file, [link])).toThrow(/really .*would expose/);
    expect(() => plan(t.file, [link])).toThrow(/really/);
  });

  it("a task opened through a symlinked folder: the real task, held-out and log folders are still refused", async () => {
    const t = await makeTask(files);
    const link = fresh("tasklink");
    symlinkSync(t.dir, link);
    const viaLink = join(link, "task.yaml");
    for (const m of [t.dir, join(t.dir, "heldout"), join(t.dir, "heldout", "hidden"), dirname(t.dir)])
      expect(() => plan(viaLink, [m]), m).toThrow(InputError);
    // The log beside the task does not exist yet; it is still compared through the real folder.
    expect(() => plan(viaLink, [join(t.dir, ".loopgate")])).toThrow(/would expose/);
  });

  it("a folder inside the task folder, the task file, the store and another run's folder are refused", async () => {
    const t = await makeTask(files);
    const otherRun = join(localDir, "runs", "older");
    mkdirSync(otherRun, { recursive: true });
    for (const m of [join(t.dir, "repo"), t.file, localDir, otherRun])
      expect(() => plan(t.file, [m]), m).toThrow(InputError);
  });

  it("a folder of the user's own outside all of that is mounted, and a single file beside the task may be", async () => {
    const t = await makeTask(files);
    const tools = fresh("tools");
    mkdirSync(tools);
    writeFileSync(join(t.dir, "fix.sh"), "echo hi\n");
    expect(plan(t.file, [tools]).mounts).toEqual([tools]);
    const p = planBuilderMounts(
      commandBuilder(`bash ${join(t.dir, "fix.sh")}`),
      [],
      mountGuards(loadTask(t.file), localDir),
    );
    expect(p.mounts).toEqual([join(t.dir, "fix.sh")]);
  });
});

describe("resume checks the recorded mounts again", () => {
  it("a mount whose symlink now points at the task folder: resume refuses it before anything runs", async () => {
    const t = await makeTask(files);
    const tools = fresh("tools");
    mkdirSync(tools);
    const link = fresh("tools-link");
    symlinkSync(tools, link);
    const ac = new AbortController();
    const env = await runTask({
      loaded: loadTask(t.file),
      builder: commandBuilder("sleep 30"),
      store,
      localDir,
      sandbox: "bubblewrap",
      mounts: [link],
      signal: ac.signal,
      reporter: { builderStarted: () => ac.abort("SIGINT") },
    });
    expect(env.status).toBe("TOOL_FAILURE");
    const events = await store.readStream(RunJournal.stream(env.run_id));
    const started = events[0];
    expect(started?.type === "run_started" && started.data.builder_mounts).toEqual([link]);
    rmSync(link);
    symlinkSync(t.dir, link);
    const resume = () =>
      resumeRun({ runId: env.run_id, store, localDir, builder: () => commandBuilder("true") });
    await expect(resume()).rejects.toThrow(InputError);
    await expect(resume()).rejects.toThrow(/really .*would expose/);
    // Nothing was appended by the refused resume.
    expect((await store.readStream(RunJournal.stream(env.run_id))).length).toBe(events.length);
  });
});
