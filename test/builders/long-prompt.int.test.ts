// A prompt over the argument limit passed as {prompt} used to crash the run with
// `spawn E2BIG` and leave it RUNNING. It now reaches the builder through the prompt file, said in a note.
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fitBuilderArgv, MAX_WORD_BYTES } from "../../src/builders/argument-limits.js";
import { commandBuilder } from "../../src/builders/command-builder.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { RunJournal } from "../../src/runner/stream/run-journal.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { makeTask } from "../runner/task-fixture.js";
import { runTree } from "../support/run-tree.js";

let localDir: string;
let store: SqliteEventStore;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-long-prompt-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  await rm(localDir, { recursive: true, force: true });
});

// Just over 200 KiB of prompt.
const prompt = `${"Make lib/answer.txt say 42. ".repeat(7320)}END`;

describe("a prompt longer than one argument may be", () => {
  it("a 200 KiB {prompt} reaches the builder as the prompt file's path, with a note, and the run ends", async () => {
    expect(Buffer.byteLength(prompt)).toBeGreaterThan(200 * 1024);
    const t = await makeTask({
      taskYaml: `id: long\nprompt: ${JSON.stringify(prompt)}\nworkspace: ./repo\ngates:\n  - id: answer\n    run: ["sh", "-c", "test \\"$(cat lib/answer.txt)\\" = 42"]\nbudget: { attempts: 1 }\n`,
      repo: { "lib/answer.txt": "41\n" },
      // $1 is what {prompt} became: the builder copies the file it names and does the work.
      scripts: {
        "b.sh":
          '#!/bin/sh\nprintf %s "$1" > lib/arg.txt\ncat "$1" > lib/seen.txt\necho 42 > lib/answer.txt\n',
      },
    });
    const notes: string[] = [];
    const env = await runTask({
      loaded: loadTask(t.file),
      builder: commandBuilder(`${t.script("b.sh")} {prompt}`),
      store,
      localDir,
      sandbox: "bubblewrap",
      reporter: { note: (s) => notes.push(s) },
    });
    expect(env.status, env.reason).toBe("SUCCESS");
    const ws = await runTree(localDir, env.run_id);
    expect(readFileSync(join(ws, "lib/arg.txt"), "utf8")).toMatch(/\/prompt-1\/prompt\.md$/);
    expect(readFileSync(join(ws, "lib/seen.txt"), "utf8")).toBe(prompt);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/the prompt \(\d+ KiB\) is too long for a command-line argument/);
    expect(notes[0]).toContain("{prompt} was given the path of the prompt file instead");
    const events = await store.readStream(RunJournal.stream(env.run_id));
    expect(events.at(-1)?.type).toBe("run_finished");
  });

  it("a short {prompt} is passed as it is", () => {
    const r = fitBuilderArgv(["agent", "-p", "{prompt}"], { prompt: "hi", prompt_file: "/p/prompt.md" });
    expect(r).toEqual({ argv: ["agent", "-p", "hi"], note: null, error: null });
  });

  it("a word too long without {prompt} in it is refused before anything starts, naming the word", () => {
    const r = fitBuilderArgv(["agent", "{required_fix}"], {
      prompt: "p",
      prompt_file: "/p/prompt.md",
      required_fix: "x".repeat(MAX_WORD_BYTES),
    });
    expect(r.argv).toBeNull();
    expect(r.error).toMatch(/^the builder cannot be started: word 2 of the builder command would be 101 KiB/);
    expect(r.error).toContain("{prompt_file}");
  });

  it("many words that fit one by one but not together are refused too", () => {
    const words = Array.from({ length: 12 }, () => "{required_fix}");
    const r = fitBuilderArgv(words, { prompt_file: "/p", required_fix: "y".repeat(90 * 1024) });
    expect(r.error).toMatch(/would be \d+ KiB of arguments, more than loopgate passes \(1024 KiB/);
  });
});
