import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/cli/output/context.js";
import type { RecordedEvent } from "../../src/core/events/loopgate-event.js";
import { goalStream } from "../../src/runner/goal/goal-store.js";
import { revertAcceptedChange } from "../../src/runner/goal/turn/compensation.js";
import { loopgate, parseStdout, removeTemps, show } from "./cli.js";
import { GOAL, GOAL_DIR, head, holdLease, lg, newGoal, refused, status } from "./goal-support.js";

// `goal revert`: a rollback of an accepted change is a compensation (a revert commit, the successor, the
// receipt), never a rewrite of history; and a revert killed after its commit is finished by running it again.
afterAll(removeTemps);

const ws = (store: string) => join(store, "goals", GOAL, "workspace");
const git = (store: string, ...args: string[]) =>
  execFileSync("git", args, { cwd: ws(store), encoding: "utf8" }).trim();
const SUCCESSOR = [
  "todo_quoted_again",
  "--content",
  "quoted fields, done again after the revert",
  "--class",
  "advancement_task",
  "--task",
  join(GOAL_DIR, "tasks", "quoted-fields", "task.yaml"),
  "--reason",
  "the quoted-fields change broke a downstream consumer",
];

async function events(store: string): Promise<RecordedEvent[]> {
  const s = await openStore(store, "read");
  try {
    return await s.readStream(goalStream(GOAL));
  } finally {
    await s.close();
  }
}

/** The example goal with its first todo done by a governed turn: returns the store and that revision. */
async function oneAcceptedChange(): Promise<{ store: string; initial: string; accepted: string }> {
  const store = await newGoal();
  const initial = head(store);
  const r = await lg(store, "goal", "tick", GOAL);
  expect(r.code, show(r)).toBe(0);
  const accepted = head(store);
  expect(accepted).not.toBe(initial);
  return { store, initial, accepted };
}

describe("goal revert", () => {
  it("reverts an accepted change as one new commit and one append: revision, successor, receipt", async () => {
    const { store, initial, accepted } = await oneAcceptedChange();
    const before = (await events(store)).length;
    const r = await lg(store, "goal", "revert", GOAL, accepted.slice(0, 10), ...SUCCESSOR, "--json");
    expect(r.code, show(r)).toBe(0);
    const out = parseStdout<{ reverted: string; revert_revision: string; reused_commit: boolean }>(r);
    expect(out.reverted).toBe(accepted);
    expect(out.reused_commit).toBe(false);
    // git itself: a new commit on the accepted one whose tree is the tree before the change.
    expect(git(store, "rev-parse", "HEAD")).toBe(out.revert_revision);
    expect(git(store, "rev-parse", "HEAD^")).toBe(accepted);
    expect(git(store, "rev-parse", "HEAD^{tree}")).toBe(git(store, "rev-parse", `${initial}^{tree}`));
    expect(git(store, "log", "-1", "--format=%(trailers:key=Loopgate-Compensation,valueonly)")).toBe(
      `${GOAL}/${accepted}`,
    );
    expect(git(store, "status", "--porcelain", "--untracked-files=all")).toBe("");
    // History kept: the accepted commit is still an ancestor.
    expect(git(store, "rev-list", "HEAD").split("\n")).toContain(accepted);
    const added = (await events(store)).slice(before).filter((e) => !e.type.startsWith("turn_lease"));
    expect(added.map((e) => e.type)).toEqual(["goal_revision_recorded", "todo_added", "change_compensated"]);
    const st = await status(store);
    expect(st.revision).toBe(out.revert_revision);
    expect(st.todos.find((t) => t.id === "todo_quoted_again")?.status).toBe("open");
    expect(st.runtimeState).not.toBe("blocked_health");

    // The same compensation again replays its receipt and records nothing new.
    const n = (await events(store)).filter((e) => !e.type.startsWith("turn_lease")).length;
    const again = await lg(store, "goal", "revert", GOAL, accepted, ...SUCCESSOR);
    expect(again.code, show(again)).toBe(0);
    expect(again.stdout).toMatch(/already compensated/);
    expect((await events(store)).filter((e) => !e.type.startsWith("turn_lease")).length).toBe(n);
    expect(git(store, "rev-parse", "HEAD")).toBe(out.revert_revision);

    // Another compensation of the same change is refused.
    const other = [...SUCCESSOR];
    other[0] = "todo_another";
    await refused(store, await lg(store, "goal", "revert", GOAL, accepted, ...other), /compensate_once/);
  });

  it("refuses what is no accepted change, a missing reason and a malformed revision, writing nothing", async () => {
    const { store, initial } = await oneAcceptedChange();
    const n = (await events(store)).filter((e) => !e.type.startsWith("turn_lease")).length;
    const h = head(store);
    await refused(
      store,
      await lg(store, "goal", "revert", GOAL, initial, ...SUCCESSOR),
      /compensates_accepted_change/,
    );
    const noReason = await lg(store, "goal", "revert", GOAL, h, ...SUCCESSOR.slice(0, -2));
    expect(noReason.code, show(noReason)).toBe(2);
    expect(noReason.stderr).toMatch(/--reason/);
    const bad = await lg(store, "goal", "revert", GOAL, "HEAD~1", ...SUCCESSOR);
    expect(bad.code, show(bad)).toBe(2);
    expect(bad.stderr).toMatch(/not a revision/);
    expect((await events(store)).filter((e) => !e.type.startsWith("turn_lease")).length).toBe(n);
    expect(head(store)).toBe(h);
  });

  it("a revert killed after its commit, before the goal recorded it, is finished by running it again", async () => {
    const { store, accepted } = await oneAcceptedChange();
    const s = await openStore(store, true);
    try {
      await expect(
        revertAcceptedChange({
          store: s,
          localDir: store,
          goalId: GOAL,
          revision: accepted,
          successor: {
            id: "todo_quoted_again",
            content: "again",
            class: "advancement_task",
            depends_on: [],
          } as never,
          reason: "crash test",
          holder: "operator",
          afterCommit: () => {
            throw new Error("killed after the commit");
          },
        }),
      ).rejects.toThrow(/killed after the commit/);
    } finally {
      await s.close();
    }
    const orphan = head(store);
    expect(orphan).not.toBe(accepted); // the commit is on the branch, the goal has not recorded it
    expect((await events(store)).some((e) => e.type === "change_compensated")).toBe(false);
    const r = await lg(store, "goal", "revert", GOAL, accepted, ...SUCCESSOR, "--json");
    expect(r.code, show(r)).toBe(0);
    const out = parseStdout<{ revert_revision: string; reused_commit: boolean }>(r);
    expect(out).toMatchObject({ revert_revision: orphan, reused_commit: true });
    const trailers = git(store, "log", "--format=%(trailers:key=Loopgate-Compensation,valueonly)")
      .split("\n")
      .filter(Boolean);
    expect(trailers).toEqual([`${GOAL}/${accepted}`]);
    expect((await events(store)).filter((e) => e.type === "change_compensated")).toHaveLength(1);
    expect((await status(store)).revision).toBe(orphan);
  });
  it("waits for the turn: busy while another live owner holds the lease, refused while a turn is unsettled", async () => {
    const { store, accepted } = await oneAcceptedChange();
    // A second tick killed inside its writeback: its turn is bound and not settled.
    const killed = await loopgate(["goal", "tick", GOAL, "--store", store], {
      env: { LOOPGATE_FAULT_KILL_IN_WRITEBACK: "commit_written" },
    });
    expect(killed.signal, show(killed)).toBe("SIGKILL");
    const h = head(store);
    await refused(store, await lg(store, "goal", "revert", GOAL, accepted, ...SUCCESSOR), /is not settled/);
    expect(head(store)).toBe(h);
    // Settle it, then hold the lease as a live owner (this test's own process) until far ahead.
    const settle = await lg(store, "goal", "tick", GOAL);
    expect(settle.code, show(settle)).toBe(0);
    await holdLease(store, "2999-01-01T00:00:00.000Z");
    const busy = await lg(store, "goal", "revert", GOAL, accepted, ...SUCCESSOR);
    expect(busy.code, show(busy)).toBe(1);
    expect(busy.stderr).toMatch(/busy: turn in progress by someone-else/);
    expect((await events(store)).some((e) => e.type === "change_compensated")).toBe(false);
  });
});
