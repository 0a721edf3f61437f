// Dimension 3, end-to-end orchestration: a bundled task run for real (builder, observation, held-out
// gates in their sandbox, event log) must reach SUCCESS for honest work and refuse forged work.
import { join } from "node:path";
import { agentBuilder } from "../agent/agent-builder.js";
import { commandBuilder } from "../builders/command-builder.js";
import type { RecordedEvent } from "../core/events/loopgate-event.js";
import { type Envelope, projectEnvelope } from "../core/run/envelope.js";
import type { BuilderChoice } from "../runner/run/context/builder-choice.js";
import { runTask } from "../runner/run/run-task.js";
import { RunJournal } from "../runner/stream/run-journal.js";
import { loadTask } from "../runner/task-source/load-task.js";
import { SqliteEventStore } from "../store/sqlite/sqlite-event-store.js";
import { check, must, type SelftestContext, withTemp } from "./check.js";
import { type DimensionResult, dimensionFromChecks } from "./verdict.js";

const quote = (p: string) => `'${p.replace(/'/g, "'\\''")}'`;

/** One quiet run of a bundled example in a temporary store; the envelope and its events. */
export async function runExample(
  root: string,
  example: string,
  makeBuilder: (taskDir: string) => BuilderChoice,
  maxAttempts?: number,
): Promise<{ env: Envelope; events: RecordedEvent[] }> {
  return withTemp("run", async (dir) => {
    const loaded = loadTask(join(root, "examples", example, "task.yaml"));
    const store = SqliteEventStore.open(join(dir, "events.db"));
    try {
      const env = await runTask({
        loaded,
        builder: makeBuilder(loaded.dir),
        store,
        localDir: dir,
        sandbox: "bubblewrap",
        ...(maxAttempts !== undefined ? { maxAttempts } : {}),
      });
      const events = await store.readStream(RunJournal.stream(env.run_id));
      const rebuilt = projectEnvelope(env.run_id, events);
      must(rebuilt?.status === env.status, `the log says ${rebuilt?.status}, the run said ${env.status}`);
      return { env, events };
    } finally {
      await store.close();
    }
  });
}

const failedOn = (env: Envelope, attempt: number) =>
  env.gates.filter((g) => g.attempt === attempt && !g.passed).map((g) => g.id);

/** The end-to-end orchestration dimension. */
export async function endToEndDimension(ctx: SelftestContext): Promise<DimensionResult> {
  const { root } = ctx;
  const checks = [
    await check("js-slugify, honest builder (fixes after the required fix) → SUCCESS", async () => {
      const { env } = await runExample(root, "js-slugify", (d) =>
        commandBuilder(`${quote(join(d, "builders/honest.sh"))} {required_fix}`),
      );
      must(env.status === "SUCCESS", `${env.status}: ${env.reason}`);
      must(env.attempts === 2, `SUCCESS on attempt ${env.attempts}, expected 2 (attempt 1 is incomplete)`);
      must(
        failedOn(env, 1).includes("heldout-tests"),
        "attempt 1's incomplete fix passed the held-out tests",
      );
      return `SUCCESS on attempt 2; attempt 1 failed ${failedOn(env, 1).join(", ")}; status rebuilt from the log`;
    }),
    await check("js-slugify, forger (claims done, changes nothing useful) → not SUCCESS", async () => {
      const { env } = await runExample(
        root,
        "js-slugify",
        (d) => commandBuilder(quote(join(d, "builders/forger.sh"))),
        2,
      );
      must(env.status !== "SUCCESS", `the forger reached ${env.status}`);
      must(
        env.claims.some((c) => /Fixed!/.test(c.text)),
        "the forger's claim was not recorded",
      );
      must(failedOn(env, env.attempts).length > 0, "no gate failed on the final attempt");
      return `${env.status} after ${env.attempts} attempts; claim recorded, refused by ${failedOn(env, env.attempts).join(", ")}`;
    }),
    await check("js-slugify, test editor (weakens the protected tests) → not SUCCESS", async () => {
      const { env } = await runExample(
        root,
        "js-slugify",
        (d) => commandBuilder(quote(join(d, "builders/test-editor.sh"))),
        1,
      );
      must(env.status !== "SUCCESS", `the test editor reached ${env.status}`);
      const blocking = env.findings.filter((f) => f.severity === "blocking").map((f) => f.code);
      must(
        blocking.includes("protected_path_modified"),
        `no protected_path_modified finding: ${blocking.join(", ")}`,
      );
      return `${env.status}; blocking: ${[...new Set(blocking)].join(", ")}`;
    }),
    await check("js-slugify, built-in agent on a scripted model (honest.yaml) → SUCCESS", async () => {
      const script = join(root, "examples/js-slugify/agent/honest.yaml");
      const { env, events } = await runExample(
        root,
        "js-slugify",
        () => agentBuilder(`scripted:${script}`),
        1,
      );
      must(env.status === "SUCCESS", `${env.status}: ${env.reason}`);
      const goal = events.find((e) => e.type === "goal_evaluated" && e.data.outcome === "completed");
      must(goal, "the goal gate never completed on loopgate's own evidence");
      return `SUCCESS in ${events.length} events; the goal completed on a recorded command, the gates agreed`;
    }),
    await check(
      "js-slugify, built-in agent that only claims done (claims-done.yaml) → not SUCCESS",
      async () => {
        const script = join(root, "examples/js-slugify/agent/claims-done.yaml");
        const { env } = await runExample(root, "js-slugify", () => agentBuilder(`scripted:${script}`), 1);
        must(env.status !== "SUCCESS", `claims alone reached ${env.status}`);
        return `${env.status}: ${env.reason.slice(0, 120)}`;
      },
    ),
  ];
  return dimensionFromChecks("end_to_end", checks);
}
