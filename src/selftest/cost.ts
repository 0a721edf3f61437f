// Dimension 4, cost policy: budgets are hard caps applied by loopgate, and no gate can call a paid
// model (no provider key reaches a gate or a builder, and a gate has no network).
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentBuilder } from "../agent/agent-builder.js";
import { commandBuilder } from "../builders/command-builder.js";
import type { RecordedEvent } from "../core/events/loopgate-event.js";
import type { Envelope } from "../core/run/envelope.js";
import type { BuilderChoice } from "../runner/run/context/builder-choice.js";
import { runTask } from "../runner/run/run-task.js";
import { RunJournal } from "../runner/stream/run-journal.js";
import { loadTask } from "../runner/task-source/load-task.js";
import { SqliteEventStore } from "../store/sqlite/sqlite-event-store.js";
import { check, must, type SelftestContext, withTemp } from "./check.js";
import { runExample } from "./end-to-end.js";
import { type DimensionResult, dimensionFromChecks } from "./verdict.js";

/** The provider keys a gate or builder must never receive unless the user names them. */
export const PROVIDER_KEYS = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_COMPATIBLE_API_KEY"] as const;

const TASK = `id: selftest-cost
prompt: Print the environment.
workspace: ./repo
gates:
  - id: env-probe
    run: ["sh", "-c", "echo GATE-ENV; env; cat builder-env.txt; echo NETDEV; cat /proc/net/dev"]
    timeout: 20s
    feedback: log
budget: { attempts: 1, turns: 1, steps_per_turn: 20, tokens: 1000 }
`;

/** A scripted model file whose every response lists files and reports usage. */
function script(responses: number, usage: { input_tokens: number; output_tokens: number; cost_usd: number }) {
  return Array.from({ length: responses }, (_, i) => ({
    text: `Step ${i + 1}.`,
    tool_calls: [{ name: "list_files", args: { path: "." } }],
    usage,
  }));
}

/** Runs the temporary env-probe task with `builder` in `dir`. */
async function runProbe(dir: string, makeBuilder: (dir: string) => BuilderChoice) {
  mkdirSync(join(dir, "task", "repo"), { recursive: true });
  writeFileSync(join(dir, "task", "repo", "README.md"), "selftest\n");
  writeFileSync(join(dir, "task", "task.yaml"), TASK);
  const store = SqliteEventStore.open(join(dir, "store", "events.db"));
  try {
    const env = await runTask({
      loaded: loadTask(join(dir, "task", "task.yaml")),
      builder: makeBuilder(dir),
      store,
      localDir: join(dir, "store"),
      sandbox: "bubblewrap",
    });
    return { env, events: await store.readStream(RunJournal.stream(env.run_id)) };
  } finally {
    await store.close();
  }
}

/** The budget_exhausted event that stopped a run, checked to name `cap`. */
function capEvent(env: Envelope, events: RecordedEvent[], cap: string) {
  must(env.status === "ESCALATED", `${env.status}: ${env.reason}`);
  const e = events.find((x) => x.type === "budget_exhausted");
  must(e?.type === "budget_exhausted" && e.data.cap === cap, `no budget_exhausted naming ${cap}`);
  must(env.reason.includes(cap), `the reason does not name the cap: ${env.reason}`);
  must(e.data.used >= e.data.limit, `stopped below the cap: ${e.data.used} of ${e.data.limit}`);
  const requests = events.filter((x) => x.type === "model_responded").length;
  return { e, requests };
}

/** Sets fake provider keys in this process's environment while `fn` runs. */
async function withFakeKeys<T>(fn: (secret: string) => Promise<T>): Promise<T> {
  const secret = `sk-selftest-${randomBytes(8).toString("hex")}`;
  const saved = PROVIDER_KEYS.map((k) => [k, process.env[k]] as const);
  for (const k of PROVIDER_KEYS) process.env[k] = secret;
  try {
    return await fn(secret);
  } finally {
    for (const [k, v] of saved)
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
}

/** The cost-policy dimension. */
export async function costDimension(ctx: SelftestContext): Promise<DimensionResult> {
  const checks = [
    await check(
      "--max-cost: a scripted agent that spends $0.60 a request stops at the $1 cap → ESCALATED",
      () =>
        withTemp("cost", async (dir) => {
          const file = join(dir, "spend.json");
          writeFileSync(
            file,
            JSON.stringify(script(6, { input_tokens: 10, output_tokens: 10, cost_usd: 0.6 })),
          );
          const { env, events } = await runExample(
            ctx.root,
            "js-slugify",
            () => agentBuilder(`scripted:${file}`, { maxCostUsd: 1 }),
            1,
          );
          const { e, requests } = capEvent(env, events, "cost_usd");
          must(requests <= 2, `${requests} model requests were made; the cap allows 2`);
          return `budget_exhausted cost_usd (${e.data.used} of ${e.data.limit}) after ${requests} requests; ${env.status}`;
        }),
    ),
    await check("budget.tokens in the task file stops the agent → ESCALATED", () =>
      withTemp("tokens", async (dir) => {
        const file = join(dir, "tokens.json");
        writeFileSync(file, JSON.stringify(script(6, { input_tokens: 600, output_tokens: 0, cost_usd: 0 })));
        const { env, events } = await runProbe(dir, () => agentBuilder(`scripted:${file}`));
        const { e, requests } = capEvent(env, events, "tokens");
        must(requests <= 2, `${requests} model requests were made; the cap allows 2`);
        return `budget_exhausted tokens (${e.data.used} of ${e.data.limit}) after ${requests} requests`;
      }),
    ),
    await check(
      "no provider key reaches a gate or a builder; a gate has no network (it cannot call a paid model)",
      () =>
        withFakeKeys((secret) =>
          withTemp("keys", async (dir) => {
            const { env } = await runProbe(dir, () =>
              commandBuilder("sh -c '{ echo BUILDER-ENV; env; } > builder-env.txt'"),
            );
            const gate = env.gates.find((g) => g.id === "env-probe");
            must(gate, `the env-probe gate did not run: ${env.reason}`);
            const log = gate.log_excerpt;
            must(
              /GATE-ENV/.test(log) && /BUILDER-ENV/.test(log) && /PATH=/.test(log),
              `no environment printed:\n${log}`,
            );
            must(!log.includes(secret), "a provider key's value reached the gate or the builder");
            const leaked = PROVIDER_KEYS.filter((k) => log.includes(`${k}=`));
            must(leaked.length === 0, `variables reached the gate or builder: ${leaked.join(", ")}`);
            const net = log.slice(log.indexOf("\nNETDEV\n") + 1);
            must(net.startsWith("NETDEV"), "the gate did not list its network interfaces");
            const ifaces = [...net.matchAll(/^\s*([\w.-]+):/gm)].map((m) => m[1]);
            must(
              ifaces.length > 0 && ifaces.every((i) => i === "lo"),
              `the gate sees interfaces: ${ifaces.join(", ")}`,
            );
            return `fake ${PROVIDER_KEYS.join(", ")} set in loopgate's environment; absent from builder and gate; gate interfaces: ${ifaces.join(", ")}`;
          }),
        ),
    ),
  ];
  return dimensionFromChecks("cost", checks);
}
