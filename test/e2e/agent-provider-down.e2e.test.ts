// A model provider that is down is infrastructure, not the agent's graded work: the real Claude Code and
// Codex pointed at a refused port, or at a server answering 401 or 503, end the run TOOL_FAILURE naming the
// provider's URL and the error, long before the attempt's 10-minute timeout and without running the gates.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "../../src/agent/models/model-server/server.js";
import { agentBinary } from "../support/agent-binaries.js";
import { addTask } from "./claude-support.js";
import { type CliResult, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

const claude = agentBinary("claude");
const codex = agentBinary("codex");
let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(removeTemps);

/** A local port nothing listens on (bound once, then closed): a connection to it is refused. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** The attempt's own timeout in these tasks: a run that waits it out takes ten minutes. */
const ATTEMPT_TIMEOUT_S = 600;

interface Env {
  run_id: string;
  status: string;
  reason: string;
  gates: unknown[];
}

async function events(
  runId: string,
  store: string,
): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const r = await loopgate(["events", runId, "--store", store, "--json"]);
  expect(r.code, show(r)).toBe(0);
  return r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

/**
 * Checks the verdict: TOOL_FAILURE naming the provider and `error`, no gate run, well inside the timeout.
 * `url` is how the reason names the provider: Claude's comes from the caller's ANTHROPIC_BASE_URL, whose
 * value the log redacts like any passed variable's, so it is named by the variable.
 */
async function expectProviderDown(r: CliResult, store: string, url: string, error: RegExp, seconds: number) {
  console.log(
    `provider down at ${url}: ${r.code} after ${seconds.toFixed(1)} s: ${parseStdout<Env>(r).reason}`,
  );
  expect(r.code, show(r)).toBe(2);
  const env = parseStdout<Env>(r);
  expect(env.status).toBe("TOOL_FAILURE");
  expect(env.reason).toContain(`the model provider at ${url} failed`);
  expect(env.reason).toMatch(error);
  expect(env.gates).toEqual([]);
  // Far sooner than the attempt's timeout: the agent's first failed request and a short retry budget.
  expect(seconds).toBeLessThan(ATTEMPT_TIMEOUT_S / 4);
  const ev = await events(env.run_id, store);
  expect(ev.find((e) => e.type === "infrastructure_failed")?.data.interrupted).toBeUndefined();
}

/** The Claude task with the attempt's timeout written out. */
function claudeTask(): string {
  const task = addTask({ attempts: 3 });
  writeFileSync(task, `${readFileSync(task, "utf8")}builder: { timeout: ${ATTEMPT_TIMEOUT_S}s }\n`);
  return task;
}

/** `loopgate claude TASK` against `url`, timed. */
async function runClaude(url: string, extra: string[] = [], env: Record<string, string> = {}) {
  const store = join(tempDir("loopgate-down-"), "store");
  const t0 = Date.now();
  const r = await loopgate(
    ["claude", claudeTask(), "--json", "--store", store, ...extra, "--", "--allowedTools", "Bash"],
    {
      env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: "sk-model-server-dummy-key", ...env },
      timeoutMs: 280_000,
    },
  );
  return { r, store, seconds: (Date.now() - t0) / 1000 };
}

/** A task for Codex (its gate is a file check), with the attempt's timeout written out. */
function codexTask(): string {
  const dir = tempDir("loopgate-down-codex-");
  mkdirSync(join(dir, "repo"));
  writeFileSync(join(dir, "repo", "greeting.txt"), "hello\n");
  writeFileSync(
    join(dir, "task.yaml"),
    [
      "id: codex-provider-down",
      "prompt: Make greeting.txt say bye.",
      "workspace: ./repo",
      "gates:",
      "  - id: says-bye",
      '    static: { path: greeting.txt, match: "^bye$" }',
      "budget: { attempts: 3 }",
      `builder: { timeout: ${ATTEMPT_TIMEOUT_S}s }`,
      "",
    ].join("\n"),
  );
  return join(dir, "task.yaml");
}

/** `loopgate run TASK --agent codex:scripted --base-url BASE`, timed. */
async function runCodex(base: string) {
  const store = join(tempDir("loopgate-down-"), "store");
  const t0 = Date.now();
  const r = await loopgate(
    ["run", codexTask(), "--agent", "codex:scripted", "--base-url", base, "--json", "--store", store],
    { timeoutMs: 280_000 },
  );
  return { r, store, seconds: (Date.now() - t0) / 1000 };
}

const LONG = { timeout: 300_000 };
const CLAUDE_URL = "$ANTHROPIC_BASE_URL";

describe.skipIf("missing" in claude)("loopgate claude with its provider down (real Claude Code)", () => {
  it(
    "a refused port: TOOL_FAILURE naming it, after a few of Claude's retries, not its minutes of them",
    LONG,
    async () => {
      const url = `http://127.0.0.1:${await closedPort()}`;
      const { r, store, seconds } = await runClaude(url);
      await expectProviderDown(r, store, CLAUDE_URL, /no answer on 3 tries in a row/, seconds);
    },
  );

  it("a provider refusing the key (401): TOOL_FAILURE at its first refusal", LONG, async () => {
    server = await startModelServer({ protocol: "anthropic", script: [], failWith: { status: 401 } });
    const { r, store, seconds } = await runClaude(server.url);
    await expectProviderDown(r, store, CLAUDE_URL, /HTTP 401/, seconds);
  });

  it(
    "a provider answering 503 until Claude gives up: TOOL_FAILURE with Claude's own API error",
    LONG,
    async () => {
      server = await startModelServer({ protocol: "anthropic", script: [], failWith: { status: 503 } });
      // Claude's own retry budget, made short for the test (its default is ten retries over about three minutes).
      const { r, store, seconds } = await runClaude(
        server.url,
        ["--builder-env", "CLAUDE_CODE_MAX_RETRIES"],
        {
          CLAUDE_CODE_MAX_RETRIES: "1",
        },
      );
      await expectProviderDown(r, store, CLAUDE_URL, /API Error: 503/, seconds);
      expect(server.requests.filter((q) => q.kind === "failed").length).toBeGreaterThan(0);
    },
  );
});

describe.skipIf("missing" in codex)("loopgate run --agent codex with its provider down (real codex)", () => {
  it("a refused port: TOOL_FAILURE naming it, not Codex's endless wait for the network", LONG, async () => {
    const base = `http://127.0.0.1:${await closedPort()}/v1`;
    const { r, store, seconds } = await runCodex(base);
    await expectProviderDown(r, store, base, /no answer on 3 tries in a row/, seconds);
  });

  it("a provider refusing the key (401): TOOL_FAILURE with Codex's failed turn", LONG, async () => {
    server = await startModelServer({ protocol: "openai-responses", script: [], failWith: { status: 401 } });
    const base = `${server.url}/v1`;
    const { r, store, seconds } = await runCodex(base);
    await expectProviderDown(r, store, base, /401/, seconds);
  });
});
