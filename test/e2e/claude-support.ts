// A small task for the real Claude Code: add.js subtracts; a held-out node test wants a sum.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ModelServer, startModelServer } from "../../src/agent/models/model-server/server.js";
import { type ScriptedResponseInput, ScriptedResponseSchema } from "../../src/agent/models/script-file.js";
import { type CliResult, loopgate, tempDir } from "./cli.js";

export const FIX = "printf 'module.exports = (a, b) => a + b;\\n' > add.js";

/** Writes the task into a fresh folder; `gate` overrides the held-out gate's argv/timeout. */
export function addTask(o: { attempts?: number; gateRun?: string[]; gateTimeout?: string } = {}): string {
  const dir = tempDir("loopgate-claude-");
  mkdirSync(join(dir, "repo", "test"), { recursive: true });
  mkdirSync(join(dir, "heldout", "test"), { recursive: true });
  writeFileSync(join(dir, "repo", "add.js"), "module.exports = (a, b) => a - b;\n");
  writeFileSync(
    join(dir, "repo", "test", "visible.test.js"),
    "const { test } = require('node:test');\nconst assert = require('node:assert');\nconst add = require('../add.js');\ntest('adds', () => assert.strictEqual(add(1, 1), 2));\n",
  );
  writeFileSync(
    join(dir, "heldout", "test", "add.heldout.test.js"),
    "const { test } = require('node:test');\nconst assert = require('node:assert');\nconst add = require('../add.js');\ntest('adds two', () => assert.strictEqual(add(2, 3), 5));\ntest('adds negatives', () => assert.strictEqual(add(-2, -3), -5));\n",
  );
  const gate = o.gateRun ?? ["node", "--test", "test/"];
  writeFileSync(
    join(dir, "task.yaml"),
    [
      "id: claude-add",
      "prompt: add.js should add its two arguments; make it so.",
      "workspace: ./repo",
      'deliverables: ["add.js"]',
      'protected: ["test/**"]',
      "gates:",
      "  - id: heldout",
      `    run: ${JSON.stringify(gate)}`,
      "    heldout: ./heldout",
      `    timeout: ${o.gateTimeout ?? "60s"}`,
      "    feedback: summary",
      `budget: { attempts: ${o.attempts ?? 3} }`,
      "",
    ].join("\n"),
  );
  return join(dir, "task.yaml");
}

/** Starts the scripted anthropic model server. */
export function modelServer(responses: ScriptedResponseInput[]): Promise<ModelServer> {
  return startModelServer({
    protocol: "anthropic",
    script: responses.map((r) => ScriptedResponseSchema.parse(r)),
  });
}

/** `loopgate claude TASK --json --store STORE [extra] -- --allowedTools Bash` against the server. */
export function loopgateClaude(
  task: string,
  url: string,
  extra: string[] = [],
  claudeArgs: string[] = [],
): Promise<CliResult & { store: string }> {
  const store = tempDir("loopgate-claude-store-");
  return loopgate(
    ["claude", task, "--json", "--store", store, ...extra, "--", "--allowedTools", "Bash", ...claudeArgs],
    {
      env: {
        ANTHROPIC_BASE_URL: url,
        ANTHROPIC_API_KEY: "sk-model-server-dummy-key",
      },
      timeoutMs: 280_000,
    },
  ).then((r) => ({ ...r, store }) as CliResult & { store: string });
}
