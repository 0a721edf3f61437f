// Acceptance that can change after `goal new`, and closure that includes the Vision checkpoint, on both
// stores: the goal file's `vision` is its first checkpoint; `goal acceptance add|retire` (CAS with
// --expect-revision) makes that checkpoint stale, a replan obligation, and the goal is not closed until
// the route is re-read and the new item proved. On today's main `goal acceptance` is an unknown
// subcommand and the goal file's `vision:` an unknown key; a goal closed with no vision at all.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
}, 60_000);
afterAll(async () => {
  removeTemps();
  await db?.drop();
});

const task = (id: string, word: string) =>
  `id: ${id}\nprompt: say ${word}\nworkspace: ./repo\ngates:\n  - id: says-${word}\n    static: { path: greeting.txt, match: ${word} }\n`;

function acceptanceGoal(id: string): string {
  const dir = tempDir("loopgate-acceptance-");
  mkdirSync(join(dir, "repo"));
  writeFileSync(join(dir, "repo", "greeting.txt"), "hello, world\n");
  writeFileSync(join(dir, "world.yaml"), task("world", "world"));
  writeFileSync(join(dir, "hello.yaml"), task("hello", "hello"));
  writeFileSync(
    join(dir, "goal.yaml"),
    `id: ${id}\nobjective: greet the world\nworkspace: ./repo\nbuilder: noop\nvision: greet the world, then prove it\nacceptance: [{ task: world.yaml, id: world }]\ntodos:\n  - { id: todo_greet, class: advancement_task, content: greet, task: world.yaml }\n`,
  );
  return dir;
}

interface View {
  closed: boolean;
  streamRevision: number;
  frontierGaps: string[];
  vision: { standing: string; last: string | null };
  acceptance: { id: string; proved: boolean }[];
}

describe.each(["folder", "postgres"] as const)(
  "acceptance can change; vision in closure (%s store)",
  (kind) => {
    it("add makes the checkpoint stale; re-read and proved it closes again; retire and CAS", async () => {
      const goal = `acc-${kind}`;
      const dir = acceptanceGoal(goal);
      const store = kind === "postgres" ? db.url : join(dir, ".store");
      const lg = (...a: string[]) => loopgate([...a, "--store", store], { cwd: dir });
      const view = async () => parseStdout<View>(await lg("goal", "status", goal, "--json"));
      expect((await lg("goal", "new", "goal.yaml")).code).toBe(0);
      expect((await view()).vision).toEqual({ agentId: "noop", standing: "fresh", last: "recorded" });
      for (let i = 0; i < 2; i++) expect((await lg("goal", "tick", goal)).code).toBe(0); // the todo, then acceptance
      expect((await lg("goal", "close", goal, "--rationale", "greeted")).code).toBe(0);
      expect((await view()).closed).toBe(true);

      // A stale --expect-revision writes nothing (needs_rebase, exit 3).
      const rev = (await view()).streamRevision;
      const stale = await lg(
        ...[
          "goal",
          "acceptance",
          "add",
          goal,
          "hello.yaml",
          "--reason",
          "r",
          "--expect-revision",
          String(rev - 1),
        ],
      );
      expect(stale.code, show(stale)).toBe(3);
      expect((await view()).streamRevision).toBe(rev);

      const add = await lg(
        ...[
          "goal",
          "acceptance",
          "add",
          goal,
          "hello.yaml",
          "--id",
          "hello",
          "--reason",
          "say hello too",
          "--expect-revision",
          String(rev),
          "--json",
        ],
      );
      expect(add.code, show(add)).toBe(0);
      expect(parseStdout<{ events: string[] }>(add).events).toEqual(["goal_acceptance_changed"]);
      let v = await view();
      expect(v.closed).toBe(false);
      expect(v.vision.standing).toBe("stale");
      expect(v.acceptance).toEqual([
        expect.objectContaining({ id: "world", proved: true }),
        expect.objectContaining({ id: "hello", proved: false }),
      ]);
      const owed = parseStdout<{ runtime_state: string; next_cli_actions: { argv: string[] }[] }>(
        await lg("goal", "next", goal, "--json"),
      );
      expect(owed.runtime_state).toBe("focus_wait");
      expect(owed.next_cli_actions[0]?.argv.slice(1, 4)).toEqual(["goal", "vision", "unchanged"]);

      // The route re-read against the new acceptance, the new item proved: closed again.
      expect((await lg("goal", "vision", "unchanged", goal, "--reason", "hello is on the way")).code).toBe(0);
      expect((await lg("goal", "tick", goal)).code).toBe(0); // acceptance again, hello included
      v = await view();
      expect(v).toMatchObject({
        closed: true,
        frontierGaps: [],
        vision: { standing: "fresh", last: "unchanged" },
      });

      // Retire: the list shrinks, the checkpoint is stale again; the last item is never retired.
      expect(
        (await lg("goal", "acceptance", "retire", goal, "hello", "--reason", "hello was not asked for")).code,
      ).toBe(0);
      const shown = parseStdout<{
        items: { id: string }[];
        retired: { id: string }[];
        acceptance_version: number;
      }>(await lg("goal", "acceptance", "show", goal, "--json"));
      expect(shown).toMatchObject({
        items: [{ id: "world" }],
        retired: [{ id: "hello" }],
        acceptance_version: 2,
      });
      expect((await view()).vision.standing).toBe("stale");
      const last = await lg("goal", "acceptance", "retire", goal, "world", "--reason", "r");
      expect(last.code, show(last)).toBe(1);
      expect(last.stderr).toMatch(/acceptance_not_empty/);
    }, 240_000);
  },
);
