// Dimension 1, deterministic contracts: the task schema, the run decider and the envelope, pure.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { LoopgateEvent } from "../core/events/loopgate-event.js";
import { Envelope, projectEnvelope } from "../core/run/envelope.js";
import {
  decide,
  type EventBody,
  evolve,
  foldRun,
  initialState,
  type RunCommand,
} from "../core/run/run-decider.js";
import { parseTask } from "../core/task/task.js";
import { check, must, type SelftestContext } from "./check.js";
import { checkDeciderProperty } from "./decider-property.js";
import { type DimensionResult, dimensionFromChecks } from "./verdict.js";

/** How many generated sequences the decider property is checked on, and from which seed. */
export const PROPERTY_SEQUENCES = 400;
export const PROPERTY_SEED = 0x10096a7e;

/** parseTask must refuse `text`; returns the error message. */
function refused(text: string): string {
  try {
    parseTask(text, "t.yaml");
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  throw new Error(`accepted an invalid task:\n${text}`);
}

const BASE = "id: t\nprompt: p\nworkspace: ./w\n";

const gateData = {
  attempt: 1,
  gate_id: "unit",
  passed: true,
  exit_code: 0,
  timed_out: false,
  error: null,
  duration_ms: 12,
  log_excerpt: "ok",
  summary: "unit: passed",
};

/** A finished, successful run as the decider produces it, wrapped as stored events. */
export function successfulRun(): LoopgateEvent[] {
  let state = initialState();
  const bodies: EventBody[] = [];
  const commands: RunCommand[] = [
    {
      type: "start_run",
      data: {
        task_id: "t",
        task_path: "/t/task.yaml",
        task_digest: "d",
        builder: { kind: "command", command: "fix.sh" },
        max_attempts: 2,
        gates: [{ id: "unit", kind: "subprocess" }],
        sandbox: "bubblewrap",
        run_dir: "/r",
      },
    },
    { type: "start_attempt", requiredFix: null },
    {
      type: "record_claim",
      data: { attempt: 1, origin: "model", text: "Fixed, should work.", hedged: true },
    },
    { type: "record_gate", data: gateData },
    { type: "finish_attempt" },
    { type: "finish_run" },
  ];
  for (const c of commands)
    for (const e of decide(c, state)) {
      state = evolve(state, e);
      bodies.push(e);
    }
  return bodies.map((b, i) =>
    LoopgateEvent.parse({
      ...b,
      id: `e${i}`,
      meta: { at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), origin: "runtime" },
    }),
  );
}

/** The deterministic-contracts dimension. */
export async function contractsDimension(ctx: SelftestContext): Promise<DimensionResult> {
  const checks = [
    await check("task schema rejects a task without gates", () => {
      const empty = refused(`${BASE}gates: []\n`);
      must(/gates/.test(empty) && /at least one gate/.test(empty), `unexpected message: ${empty}`);
      const missing = refused(BASE);
      must(/gates/.test(missing), `a task with no gates key: unexpected message: ${missing}`);
      return "gates: [] and a missing gates key are refused, naming the field";
    }),
    await check(
      "task schema rejects a shell string, an unknown field and a bad duration, with line and field",
      () => {
        refused(`${BASE}gates:\n  - id: a\n    run: node --test\n`);
        refused(`${BASE}gates:\n  - id: a\n    run: [node]\ntypo_field: 1\n`);
        const m = refused(`${BASE}gates:\n  - id: a\n    run: [node]\n    timeout: soon\n`);
        must(/t\.yaml:7: gates\[0\]\.timeout/.test(m), `the error does not name line and field: ${m}`);
        return "refused; e.g. t.yaml:7: gates[0].timeout";
      },
    ),
    await check("task schema accepts every bundled example", () => {
      const dir = join(ctx.root, "examples");
      const files = readdirSync(dir)
        .map((d) => join(dir, d, "task.yaml"))
        .filter((f) => existsSync(f));
      must(files.length > 0, `no example task under ${dir}`);
      for (const f of files) {
        const task = parseTask(readFileSync(f, "utf8"), f);
        must(task.gates.length > 0, `${f}: parsed without gates`);
      }
      return `${files.length} example tasks parse`;
    }),
    await check(
      "run decider: SUCCESS only when every gate passed on the final attempt (generated sequences)",
      () => {
        const r = checkDeciderProperty(PROPERTY_SEED, PROPERTY_SEQUENCES);
        must(r.violations.length === 0, r.violations.slice(0, 3).join("; "));
        must(r.successes > 0 && r.failedFinalGate > 0, `vacuous sweep: ${JSON.stringify(r)}`);
        return `${r.sequences} sequences (seed ${PROPERTY_SEED}): ${r.successes} SUCCESS, ${r.failedFinalGate} with a failed final gate, ${r.refused} out-of-order commands refused`;
      },
    ),
    await check("run decider: a green gate from attempt 1 is never reused on attempt 2", () => {
      let state = foldRun(successfulRun().slice(0, -1) as EventBody[]);
      const gate = (passed: boolean): RunCommand => ({
        type: "record_gate",
        data: { ...gateData, attempt: 2, passed, exit_code: passed ? 0 : 1 },
      });
      for (const c of [
        { type: "start_attempt", requiredFix: null },
        gate(false),
        { type: "finish_attempt" },
      ] as RunCommand[])
        for (const e of decide(c, state)) state = evolve(state, e);
      const [finished] = decide({ type: "finish_run" }, state);
      must(
        finished?.type === "run_finished" && finished.data.status !== "SUCCESS",
        `attempt 1 passed, attempt 2 failed, yet the run finished ${finished?.type === "run_finished" ? finished.data.status : "?"}`,
      );
      return `attempt 1 green, attempt 2 red: ${finished.data.status}`;
    }),
    await check(
      "envelope: projected from events, survives a JSON round trip, refuses a forged status",
      () => {
        const events = successfulRun();
        const env = projectEnvelope("run-1", events);
        must(env !== null, "no envelope for a finished run");
        must(env.status === "SUCCESS" && env.audit.hedge_warning, `unexpected envelope: ${env.status}`);
        const back = Envelope.parse(JSON.parse(JSON.stringify(env)));
        must(isDeepStrictEqual(back, env), "the envelope changed through JSON");
        must(!Envelope.safeParse({ ...env, status: "DONE" }).success, "status DONE was accepted");
        must(projectEnvelope("run-1", events.slice(0, -1)) === null, "an unfinished run has an envelope");
        must(
          !LoopgateEvent.safeParse({ ...events[0], type: "run_done" }).success,
          "an unknown event type was accepted",
        );
        return "SUCCESS envelope round-trips; DONE, unknown event types and unfinished runs are refused";
      },
    ),
  ];
  return dimensionFromChecks("contracts", checks);
}
