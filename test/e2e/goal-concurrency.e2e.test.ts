// Two real loopgate processes write to one goal with the same expected revision: exactly one wins, the
// other exits needs_rebase (3) naming the current revision, and the stream holds only the winner's write.
import { afterAll, describe, expect, it } from "vitest";
import { removeTemps, show } from "./cli.js";
import { GOAL, lg, newGoal, status } from "./goal-support.js";

afterAll(removeTemps);

describe("needs_rebase on a concurrent write", () => {
  it("two processes, one expected revision: exactly one wins", async () => {
    const store = await newGoal();
    for (let round = 0; round < 3; round++) {
      const rev = (await status(store)).streamRevision;
      const ids = [`todo_race_${round}_a`, `todo_race_${round}_b`];
      const results = await Promise.all(
        ids.map((id) =>
          lg(
            store,
            "todo",
            "add",
            GOAL,
            id,
            "--class",
            "user_action",
            "--content",
            `race ${id}`,
            "--expect-revision",
            String(rev),
          ),
        ),
      );
      const codes = results.map((r) => r.code).sort();
      expect(codes, results.map(show).join("\n")).toEqual([0, 3]);
      const loser = results.find((r) => r.code === 3);
      expect(loser?.stderr).toContain(`needs_rebase: goal ${GOAL} is at revision ${rev + 1}, not ${rev}`);
      const s = await status(store);
      expect(s.streamRevision).toBe(rev + 1);
      const present = ids.filter((id) => s.todos.some((t) => t.id === id));
      expect(present).toHaveLength(1);
    }
  });
});
