// loopgate goal vision show|patch|unchanged|close: the operator's answer to a replan, with the real-delta rule.
import { afterAll, describe, expect, it } from "vitest";
import { parseStdout, removeTemps, show } from "./cli.js";
import { GOAL, lg, newGoal, refused, status } from "./goal-support.js";

afterAll(removeTemps);

interface VisionJson {
  visions: { agent_id: string; route: string; last: string; stale: boolean }[];
  obligations: { id: string }[];
  replan_noops: unknown[];
}

describe("goal vision", () => {
  it("a patch needs a todo with it; with one it records the route and the todo in one write; unchanged keeps the route", async () => {
    const store = await newGoal();
    const empty = await lg(store, "goal", "vision", "show", GOAL, "--json");
    expect(empty.code, show(empty)).toBe(0);
    expect(parseStdout<VisionJson>(empty).visions).toEqual([]);
    // The first route is a delta of its own (a missing checkpoint); a second record is refused.
    const first = await lg(store, "goal", "vision", "record", GOAL, "--route", "R0", "--json");
    expect(first.code, show(first)).toBe(0);
    expect(parseStdout<{ events: string[] }>(first).events).toEqual(["vision_recorded"]);
    const again = await lg(store, "goal", "vision", "record", GOAL, "--route", "R0b");
    expect(again.code, show(again)).toBe(2);
    expect(again.stderr).toMatch(/already follows a route/);
    const before = (await status(store)).streamRevision;
    const bare = await lg(
      store,
      "goal",
      "vision",
      "patch",
      GOAL,
      "--route",
      "R1",
      "--patch",
      "p",
      "--reason",
      "r",
    );
    await refused(store, bare, /patch_without_delta/);
    expect((await status(store)).streamRevision).toBe(before);
    const ok = await lg(
      store,
      "goal",
      "vision",
      "patch",
      GOAL,
      "todo_ask_reporters",
      "--content",
      "ask the reporters which CSV dialect they use",
      "--class",
      "user_action",
      "--route",
      "quoted fields, then CRLF, then ask the reporters",
      "--patch",
      "ask the reporters first",
      "--reason",
      "two reports disagree",
      "--json",
    );
    expect(ok.code, show(ok)).toBe(0);
    expect(parseStdout<{ events: string[] }>(ok).events).toEqual(["vision_patched", "todo_added"]);
    const todo = (await status(store)).todos.find((t) => t.id === "todo_ask_reporters");
    expect(todo?.class).toBe("user_action");
    const same = await lg(
      store,
      "goal",
      "vision",
      "unchanged",
      GOAL,
      "--reason",
      "the route holds",
      "--json",
    );
    expect(same.code, show(same)).toBe(0);
    expect(parseStdout<{ events: string[] }>(same).events).toEqual(["vision_unchanged_recorded"]);
    const v = parseStdout<VisionJson>(await lg(store, "goal", "vision", "show", GOAL, "--json"));
    expect(v.visions).toEqual([
      expect.objectContaining({
        route: "quoted fields, then CRLF, then ask the reporters",
        last: "unchanged",
        stale: false,
      }),
    ]);
    const text = await lg(store, "goal", "vision", "show", GOAL);
    expect(text.stdout).toMatch(/vision of .* \(unchanged/);
  }, 120_000);
  it("retire ends the route, supersede hands it to another agent's; closure reads the replacement", async () => {
    const store = await newGoal();
    expect((await lg(store, "goal", "vision", "record", GOAL, "--route", "R0")).code).toBe(0);
    const noBy = await lg(store, "goal", "vision", "supersede", GOAL, "--reason", "r");
    expect(noBy.code, show(noBy)).toBe(2);
    const sup = await lg(
      ...[
        store,
        "goal",
        "vision",
        "supersede",
        GOAL,
        "--by",
        "maintainer",
        "--route",
        "R1",
        "--reason",
        "handed over",
        "--json",
      ],
    );
    expect(sup.code, show(sup)).toBe(0);
    expect(parseStdout<{ events: string[] }>(sup).events).toEqual(["vision_recorded", "vision_retired"]);
    const v = parseStdout<VisionJson & { checkpoint: { agent_id: string; standing: string } }>(
      await lg(store, "goal", "vision", "show", GOAL, "--json"),
    );
    expect(v.checkpoint).toEqual({ agent_id: "maintainer", standing: "fresh" });
    expect(v.visions.map((x) => [x.agent_id, x.last])).toEqual([
      ["oracle", "superseded"],
      ["maintainer", "recorded"],
    ]);
    // The goal's own agent follows no route now: retiring it again is refused, naming the rule's reason.
    const retire = await lg(store, "goal", "vision", "retire", GOAL, "--reason", "again");
    await refused(store, retire, /no followed vision to end \(superseded\)/);
  }, 120_000);
  it("close needs NEW_TODO (bad input, exit 2); a missing --reason is bad input; --help lists vision", async () => {
    const store = await newGoal();
    const noTodo = await lg(store, "goal", "vision", "close", GOAL, "--reason", "stage done");
    expect(noTodo.code, show(noTodo)).toBe(2);
    expect(noTodo.stderr).toMatch(/NEW_TODO/);
    const noReason = await lg(store, "goal", "vision", "unchanged", GOAL);
    expect(noReason.code, show(noReason)).toBe(2);
    expect(noReason.stderr).toMatch(/--reason/);
    const help = await lg(store, "goal", "--help");
    expect(help.stdout).toMatch(/loopgate goal vision patch GOAL/);
  }, 120_000);
});
