import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { agentBuilder } from "../../src/agent/agent-builder.js";
import type { ScriptedResponseInput } from "../../src/agent/models/script-file.js";
import { commandBuilder } from "../../src/builders/command-builder.js";
import { runTask } from "../../src/runner/run/run-task.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { makeTask } from "../runner/task-fixture.js";

// The envelope reports the built-in agent's real usage: the tokens and cost its (scripted) responses carried.

const taskYaml = `id: usage-answer
prompt: Make answer.txt say 42.
workspace: ./repo
gates:
  - id: answer
    static: { path: answer.txt, match: "^42$" }
budget: { attempts: 1 }
`;

let localDir: string;
let store: SqliteEventStore;
const dirs: string[] = [];
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-usage-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  for (const d of [localDir, ...dirs]) await rm(d, { recursive: true, force: true });
});

async function run(builder: (dir: string) => Promise<Parameters<typeof runTask>[0]["builder"]>) {
  const t = await makeTask({ taskYaml, repo: { "answer.txt": "41\n" } });
  dirs.push(t.dir);
  const b = await builder(t.dir);
  return runTask({ loaded: loadTask(t.file), builder: b, store, localDir, sandbox: "bubblewrap" });
}

describe("audit.tokens and audit.cost", () => {
  it("are the sums of the usage the agent's responses reported", async () => {
    const script: ScriptedResponseInput[] = [
      {
        text: "Writing.",
        tool_calls: [{ name: "write_file", args: { path: "answer.txt", content: "42\n" } }],
        usage: { input_tokens: 1200, output_tokens: 80, cost_usd: 0.004 },
      },
      { text: "Done.", usage: { input_tokens: 1500, output_tokens: 20, cost_usd: 0.0051 } },
    ];
    const env = await run(async (dir) => {
      const file = join(dir, "script.yaml");
      await writeFile(file, stringify(script));
      return agentBuilder(`scripted:${file}`);
    });
    expect(env.status).toBe("SUCCESS");
    // 1200 + 80 + 1500 + 20 tokens; $0.004 + $0.0051.
    expect(env.audit.tokens).toBe(2800);
    expect(env.audit.cost).toBeCloseTo(0.0091, 10);
  });
  it("are null for an external builder, whose usage loopgate cannot see", async () => {
    const env = await run(async () => commandBuilder("sh -c 'echo 42 > answer.txt'"));
    expect(env.status).toBe("SUCCESS");
    expect(env.audit).toMatchObject({ tokens: null, cost: null });
  });
});
