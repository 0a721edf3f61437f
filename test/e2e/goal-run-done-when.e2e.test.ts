// Governed goal runs, end to end through the CLI with no key: the goal example (a private copy, so
// the test can edit what its monitor reads) driven by `loopgate goal run` one governed turn at a time.
// The builder is a command (the reference fix; for the unknown-column todo it also drops the CR handling,
// a regression the todo's own gates cannot see), the planner a scripted model (--planner-model).
//   run A: three fixes (t1-t3), the acceptance turn (t4: CRLF fails → a replan obligation), the monitor's
//          baseline while the goal waits (t5), then exit 1 at the publish gate, naming who must act;
//   gate approve; the person publishes (todo_publish); a new user report lands in monitor/reports.txt;
//   a goal tick whose planner says nothing (t6): replan_noop, the obligation stays;
//   run B: the planner turn (t7: a fix todo + a vision patch), that todo (t8), acceptance again (t9:
//          holds), the monitor's material change (t10: one successor), exit 1 (the successor is a
//          person's); the person closes it and the monitor; goal close; run C: terminal, exit 0.
// Asserted from the goal stream and the goal workspace's git log: the turns and their phases in order,
// the goal facts in order, one commit per accepted code writeback (trailer = the turn), and the budget
// spent = the turns this test counted, with the planner's tokens from its own script.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { loopgate, ROOT, removeTemps, show, tempDir } from "./cli.js";
import {
  ACCEPTANCE,
  commits,
  FIXES,
  GOAL,
  goalEvents,
  identity,
  jsonLines,
  SETTLED,
} from "./goal-support.js";

afterAll(removeTemps);

const MONITOR = "todo_watch_reports";
const FIX_AGAIN = "todo_crlf_again";
/** The monitor's cadence in the test's copy (the example polls hourly); see the comment at its use. */
const CADENCE_S = 45;

/** The planner's answer to the failed acceptance: a fix todo for the regression and the new route. */
const PLANNER = [
  {
    tool_calls: [
      {
        name: "propose_todos",
        args: {
          todos: [
            {
              id: FIX_AGAIN,
              content: "CRLF input broke again after the unknown-column fix: accept CRLF, never print a CR.",
              class: "advancement_task",
              task: "tasks/crlf/task.yaml",
            },
          ],
        },
      },
    ],
    usage: { input_tokens: 400, output_tokens: 60 },
  },
  {
    tool_calls: [
      {
        name: "patch_vision",
        args: {
          kind: "patch",
          route: "quoted fields, CRLF, unknown columns, then CRLF once more after the regression",
          patch: "a CRLF fix after the unknown-column change",
          reason: "acceptance failed on heldout-crlf",
        },
      },
    ],
    usage: { input_tokens: 300, output_tokens: 40 },
  },
  { text: "planned", usage: { input_tokens: 100, output_tokens: 5 } },
];
const PLANNER_TOKENS = 400 + 60 + 300 + 40 + 100 + 5;
/** A planner that answers with no delta at all. */
const NOOP = [{ text: "the route looks fine to me", usage: { input_tokens: 70, output_tokens: 3 } }];
const NOOP_TOKENS = 73;

/** The builder: the reference fix; on the unknown-column task it also drops the CR stripping. */
const BUILDER = `#!/bin/sh
set -eu
sh "$(dirname "$0")/solution.sh"
if grep -q "An unknown column name" "$LOOPGATE_PROMPT_FILE"; then
  sed -i '/sub(\\/\\\\r\\$\\/, "")/d' bin/csvcol
fi
`;

interface Fixture {
  root: string;
  goalFile: string;
  store: string;
  builder: string;
  planner: string;
  noop: string;
}

/** A private copy of the example (goal and repository side by side, so its relative paths hold). */
function fixture(): Fixture {
  const root = tempDir("loopgate-done-when-");
  cpSync(join(ROOT, "examples", "goal-csvcol"), join(root, "ex", "goal-csvcol"), { recursive: true });
  cpSync(join(ROOT, "examples", "sh-csvcol"), join(root, "ex", "sh-csvcol"), { recursive: true });
  const goalFile = join(root, "ex", "goal-csvcol", "goal.yaml");
  const text = readFileSync(goalFile, "utf8");
  expect(text).toContain("every: 1h");
  writeFileSync(goalFile, text.replace("every: 1h", `every: ${CADENCE_S}s`));
  mkdirSync(join(root, "builder"));
  cpSync(join(ROOT, "examples", "sh-csvcol", "solution.sh"), join(root, "builder", "solution.sh"));
  writeFileSync(join(root, "builder", "regress.sh"), BUILDER);
  writeFileSync(join(root, "planner.json"), JSON.stringify(PLANNER));
  writeFileSync(join(root, "noop.json"), JSON.stringify(NOOP));
  return {
    root,
    goalFile,
    store: join(root, "store"),
    builder: `sh ${join(root, "builder", "regress.sh")}`,
    planner: `scripted:${join(root, "planner.json")}`,
    noop: `scripted:${join(root, "noop.json")}`,
  };
}

const ws = (store: string) => join(store, "goals", GOAL, "workspace");
const lg = (f: Fixture, ...args: string[]) => loopgate([...args, "--store", f.store], { timeoutMs: 240_000 });
const run = (f: Fixture, ...extra: string[]) =>
  lg(f, "goal", "run", GOAL, "--builder", f.builder, "--planner-model", f.planner, "--json", ...extra);
async function state(f: Fixture) {
  const r = await lg(f, "goal", "status", GOAL, "--json");
  expect(r.code, show(r)).toBe(0);
  return JSON.parse(r.stdout) as {
    revision: string;
    todos: { id: string; status: string; successorOf: string | null }[];
  };
}
const head = (f: Fixture) =>
  execFileSync("git", ["rev-parse", "HEAD"], { cwd: ws(f.store), encoding: "utf8" }).trim();

describe("goal run: governed turns on the goal example", () => {
  it("fixes, a failed acceptance, the gate, a monitor's change, one replan, acceptance, terminal closure", async () => {
    const f = fixture();
    const created = await loopgate(["goal", "new", f.goalFile, "--store", f.store, "--json"]);
    expect(created.code, show(created)).toBe(0);

    // Bad planner models are refused before anything runs, naming the flag and what is wrong.
    const badSpec = await lg(f, "goal", "run", GOAL, "--planner-model", "bogus");
    expect(badSpec.code).toBe(2);
    expect(badSpec.stderr).toMatch(/--planner-model: "bogus" names no provider/);
    const noFile = await lg(
      f,
      "goal",
      "tick",
      GOAL,
      "--planner-model",
      `scripted:${join(f.root, "nope.json")}`,
    );
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toMatch(/--planner-model: .*nope\.json/);
    const noKey = await loopgate(
      ["scheduler", "--once", "--store", f.store, "--planner-model", "anthropic:x"],
      {
        env: { ANTHROPIC_API_KEY: "" },
      },
    );
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/--planner-model: .*ANTHROPIC_API_KEY/);
    expect((await goalEvents(f.store)).some((e) => e.type === "turn_bound")).toBe(false);

    // Run A: the three fixes, the acceptance turn (CRLF regressed: it fails), then, with nothing the agent
    // may do before a person decides, the monitor's first poll (its baseline); exit 1 at the publish gate.
    const a = await run(f);
    expect(a.code, show(a)).toBe(1);
    // Six ticks: the five turns and the one after them that says who must act.
    expect(jsonLines(a.stdout).at(-1)).toMatchObject({
      exit_code: 1,
      stop: "waiting_person",
      turns: 6,
      who: expect.stringMatching(/a person deciding publish/),
    });
    const gated = await lg(f, "goal", "run", GOAL);
    expect(gated.code, show(gated)).toBe(1);
    expect(gated.stdout).toMatch(/who must act: a person deciding publish/);
    expect(gated.stdout).toMatch(new RegExp(`gate approve ${GOAL} todo_publish_gate`));
    let events = await goalEvents(f.store);
    const failed = events.filter((e) => e.type === "acceptance_receipt_recorded");
    expect(failed.map((e) => [e.data.acceptance_id, (e.data.receipt as { status: string }).status])).toEqual([
      [ACCEPTANCE[0], "SUCCESS"],
      [ACCEPTANCE[1], "ESCALATED"],
      [ACCEPTANCE[2], "SUCCESS"],
    ]);
    const baseline = events.filter((e) => e.type === "monitor_baseline_recorded");
    expect(baseline).toHaveLength(1);

    // The person: approves, publishes; a new user report comes in (what the monitor's script prints).
    expect((await lg(f, "gate", "approve", GOAL, "todo_publish_gate", "--note", "ship it")).code).toBe(0);
    const published = await lg(
      f,
      "todo",
      "close-no-followup",
      GOAL,
      "todo_publish",
      "--rationale",
      "tagged v1",
    );
    expect(published.code, show(published)).toBe(0);
    writeFileSync(
      join(f.root, "ex", "goal-csvcol", "monitor", "reports.txt"),
      "no open reports\nreport 17: Excel exports print a CR in every column again\n",
    );

    // A planner with no delta: replan_noop, recorded, spent, and the obligation stays open.
    const noop = await lg(f, "goal", "tick", GOAL, "--builder", f.builder, "--planner-model", f.noop);
    expect(noop.code, show(noop)).toBe(0);
    events = await goalEvents(f.store);
    expect(events.filter((e) => e.type === "replan_noop_recorded")).toHaveLength(1);
    const vision = await lg(f, "goal", "vision", "show", GOAL, "--json");
    expect(vision.stdout).toMatch(/replan_acceptance_failed/);

    // The monitor is due again only CADENCE_S after its baseline: wait for that (a load that slows the
    // test only makes it later, which is still due). The cadence is short so the test is quick, and long
    // enough that no second poll can fall inside run A, before the noop tick, or right after the change
    // in run B: those steps take a few seconds, 45 s is many times that even on a loaded 2-core machine.
    const due = Date.parse(String(baseline[0]?.data.at ?? "")) + CADENCE_S * 1000;
    expect(Number.isFinite(due)).toBe(true);
    await sleep(Math.max(0, due - Date.now() + 500));

    // Run B: the planner turn, its fix todo, acceptance again (it holds), the monitor's material change
    // with its one successor; exit 1: the successor is a person's to look at.
    const b = await run(f);
    expect(b.code, show(b)).toBe(1);
    expect(jsonLines(b.stdout).at(-1)).toMatchObject({ exit_code: 1, stop: "waiting_person", turns: 5 });
    let s = await state(f);
    const successors = s.todos.filter((t) => t.successorOf === MONITOR).map((t) => t.id);
    expect(successors).toEqual([`${MONITOR}_g1`]);

    // The person: triages the report (done), stops the monitor, records the closure intent. Run C: terminal.
    for (const [todo, why] of [
      [`${MONITOR}_g1`, "report 17 is the CRLF regression, fixed by todo_crlf_again"],
      [MONITOR, "the release is out; reports go to the issue tracker now"],
    ] as const) {
      const r = await lg(f, "todo", "close-no-followup", GOAL, todo, "--rationale", why);
      expect(r.code, show(r)).toBe(0);
    }
    expect((await lg(f, "goal", "close", GOAL, "--rationale", "all fixes proved, released")).code).toBe(0);
    const c = await run(f);
    expect(c.code, show(c)).toBe(0);
    expect(jsonLines(c.stdout).at(-1)).toMatchObject({ exit_code: 0, stop: "terminal" });

    // Every frontier item proved: every todo done, acceptance SUCCESS on the final revision.
    s = await state(f);
    for (const t of s.todos) expect(t.status, t.id).toBe("done");
    expect(s.revision).toBe(head(f));
    events = await goalEvents(f.store);
    const receipts = events.filter((e) => e.type === "acceptance_receipt_recorded").slice(3);
    expect(receipts.map((e) => e.data.acceptance_id)).toEqual(ACCEPTANCE);
    for (const r of receipts)
      expect(r.data.receipt).toMatchObject({ status: "SUCCESS", goal_revision: s.revision });

    // The turns: t1..t10, each settled through every phase exactly once, bound to this work in this order.
    const turns = [...new Set(events.flatMap((e) => (identity(e) ? [identity(e)?.turn_instance_id] : [])))];
    const TURNS = ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "t10"];
    expect(turns).toEqual(TURNS);
    for (const t of turns)
      expect(
        events.filter((e) => identity(e)?.turn_instance_id === t).map((e) => e.type),
        t,
      ).toEqual(SETTLED);
    const work = events.filter((e) => e.type === "turn_bound").map((e) => e.data.work);
    const replan = { kind: "replan", obligation_id: expect.stringMatching(/^replan_acceptance_failed/) };
    expect(work).toEqual([
      ...FIXES.map((todo_id) => ({ kind: "todo", todo_id })),
      { kind: "acceptance", acceptance_ids: ACCEPTANCE },
      { kind: "todo", todo_id: MONITOR },
      replan,
      replan,
      { kind: "todo", todo_id: FIX_AGAIN },
      { kind: "acceptance", acceptance_ids: ACCEPTANCE },
      { kind: "todo", todo_id: MONITOR },
    ]);

    // The goal facts in order (the turn facts and leases aside).
    const MILESTONES = new Set([
      "todo_completed",
      "todo_closed_no_followup",
      "todo_added",
      "acceptance_receipt_recorded",
      "gate_decided",
      "monitor_baseline_recorded",
      "monitor_no_change_recorded",
      "monitor_poll_failed",
      "monitor_observation_recorded",
      "monitor_successor_created",
      "replan_noop_recorded",
      "vision_recorded",
      "vision_patched",
      "replan_answered",
      "goal_no_followup_declared",
    ]);
    const first = events.findIndex((e) => e.type === "turn_bound");
    const seq = events
      .slice(first)
      .map((e) => e.type)
      .filter((t) => MILESTONES.has(t));
    expect(seq).toEqual([
      ...FIXES.map(() => "todo_completed"), // t1-t3, each on its run's evidence
      ...ACCEPTANCE.map(() => "acceptance_receipt_recorded"), // t4, CRLF failing
      "monitor_baseline_recorded", // t5
      "gate_decided",
      "todo_closed_no_followup", // todo_publish, the person's
      "replan_noop_recorded", // t6: no delta, and its receipt
      "replan_answered",
      "vision_recorded", // t7: the route, the fix todo, the receipt, in one append
      "todo_added",
      "replan_answered",
      "todo_completed", // t8: todo_crlf_again on its run's evidence
      ...ACCEPTANCE.map(() => "acceptance_receipt_recorded"), // t9, all SUCCESS
      "monitor_observation_recorded", // t10: the material change and its one successor
      "todo_added",
      "monitor_successor_created",
      "todo_closed_no_followup", // the successor, the person's
      "todo_closed_no_followup", // the monitor
      "goal_no_followup_declared",
    ]);
    // The noop left the obligation open (the planner turn after it answered the same one).
    const answered = events.filter((e) => e.type === "replan_answered").map((e) => e.data.outcome);
    expect(answered).toEqual(["replan_noop", "delta"]);

    // The commits: one per accepted code writeback (the four fixes), its turn as the trailer.
    const log = commits(f.store);
    expect(log.map((x) => x.trailer)).toEqual(["t1", "t2", "t3", "t8"].map((t) => `${GOAL}/oracle/${t}`));
    for (const [i, x] of log.entries()) expect(x.subject).toContain([...FIXES, FIX_AGAIN][i]);

    // The budget: one turn each for the ten turns this test counted; tokens only from the planners' scripts.
    const spent = events
      .filter((e) => e.type === "quota_spent")
      .map((e) => e.data as { turns: number; tokens: number; cost_usd: number });
    expect(spent).toHaveLength(TURNS.length);
    expect(spent.reduce((n, x) => n + x.turns, 0)).toBe(TURNS.length);
    expect(spent.reduce((n, x) => n + x.tokens, 0)).toBe(NOOP_TOKENS + PLANNER_TOKENS);
  }, 600_000);
});
