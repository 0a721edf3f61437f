// The handoff reachable through the CLI, on both stores: a claim (a routing signal another claimant is
// refused), a CLI-added blocker that holds back the todo it names (--unblocks), a person's step recorded
// with its evidence (todo done --note --evidence-url|--evidence-file; its gate first), a blocker cleared
// without a successor (an obligation) until one is added (--successor-of), and an honest negative closure:
// a blocked todo whose blocker is accepted with evidence (todo accept-blocker) closes the goal as blocked,
// never achieved, with acceptance never run. On today's main none of these commands or flags existed
// (todo claim/accept-blocker: unknown subcommand; --unblocks, --evidence-url, --outcome: unknown flags).
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
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

/** A goal: one advancement todo whose gate the workspace already passes, a publish gate and a person's step. */
function handoffGoal(id: string): string {
  const dir = tempDir("loopgate-handoff-");
  mkdirSync(join(dir, "repo"));
  writeFileSync(join(dir, "repo", "greeting.txt"), "hello, world\n");
  writeFileSync(
    join(dir, "task.yaml"),
    "id: greet\nprompt: say hello to the world\nworkspace: ./repo\ngates:\n  - id: says-world\n    static: { path: greeting.txt, match: world }\n",
  );
  writeFileSync(
    join(dir, "goal.yaml"),
    `id: ${id}
objective: greet the world and publish the greeting
workspace: ./repo
builder: noop
acceptance: [{ task: task.yaml }]
todos:
  - { id: todo_greet, class: advancement_task, content: greet, task: task.yaml }
  - { id: todo_gate, class: user_gate, content: may we publish?, decision_scope: publish }
  - { id: todo_publish, class: user_action, content: publish it, required_decision_scopes: [publish], depends_on: [todo_greet] }
`,
  );
  writeFileSync(join(dir, "release-notes.txt"), "v1: the world is greeted\n");
  return dir;
}

interface Status {
  closed: boolean;
  closureOutcome: string | null;
  runtimeState: string;
  frontierGaps: string[];
  acceptance: { id: string; proved: boolean }[];
  todos: {
    id: string;
    status: string;
    claimedBy: string | null;
    handoff: string | null;
    attestation: { outcome: string; by: string | null; evidence: Record<string, unknown>[] } | null;
  }[];
}

describe.each(["folder", "postgres"] as const)("the handoff through the CLI (%s store)", (kind) => {
  it("claims, a CLI blocker holding its target, a person's step with evidence, successors, a blocked closure", async () => {
    const goal = `handoff-${kind}`;
    const dir = handoffGoal(goal);
    const store = kind === "postgres" ? db.url : join(dir, ".store");
    const lg = (...a: string[]) => loopgate([...a, "--store", store], { cwd: dir });
    const st = async () => parseStdout<Status>(await lg("goal", "status", goal, "--json"));
    const todo = async (id: string) => (await st()).todos.find((t) => t.id === id);
    const next = async () =>
      parseStdout<{ agent_channel: { selected_todo: string | null }; runtime_state: string; reason: string }>(
        await lg("goal", "next", goal, "--json"),
      );
    const refused = (r: Awaited<ReturnType<typeof lg>>, rule: RegExp) => {
      expect(r.code, show(r)).toBe(1);
      expect(r.stderr).toMatch(rule);
    };
    expect((await lg("goal", "new", "goal.yaml")).code).toBe(0);
    expect((await next()).agent_channel.selected_todo).toBe("todo_greet");

    // A CLI-added blocker holds back the todo it names: nothing is selected while it blocks.
    const blk = await lg(
      ...[
        "todo",
        "add",
        goal,
        "todo_cix",
        "--class",
        "blocker",
        "--content",
        "CI is red",
        "--unblocks",
        "todo_greet",
      ],
    );
    expect(blk.code, show(blk)).toBe(0);
    expect((await next()).agent_channel.selected_todo).toBeNull();
    expect((await todo("todo_cix"))?.handoff).toBe("blocking");

    // A claim: a routing signal, refused to a second claimant, released by its holder.
    expect((await lg("todo", "claim", goal, "todo_greet", "--by", "bob")).code).toBe(0);
    expect((await todo("todo_greet"))?.claimedBy).toBe("bob");
    refused(
      await lg("todo", "claim", goal, "todo_greet", "--by", "carol"),
      /claim_held: todo_greet is claimed by bob/,
    );
    refused(await lg("todo", "release", goal, "todo_greet", "--by", "carol"), /not claimed by carol/);
    expect((await lg("todo", "release", goal, "todo_greet", "--by", "bob")).code).toBe(0);
    expect((await todo("todo_greet"))?.claimedBy).toBeNull();

    // The blocker cleared on a person's word with a link: its target runs (cleared_with_successor).
    const noEvidence = await lg(
      "todo",
      "done",
      goal,
      "todo_cix",
      "--note",
      "green",
      "--evidence-url",
      "ftp://x/y",
    );
    expect(noEvidence.code, show(noEvidence)).toBe(2);
    const cleared = await lg(
      ...[
        "todo",
        "done",
        goal,
        "todo_cix",
        "--note",
        "CI green again",
        "--evidence-url",
        "https://ci.example/run/42",
      ],
    );
    expect(cleared.code, show(cleared)).toBe(0);
    expect(await todo("todo_cix")).toMatchObject({
      status: "done",
      handoff: "cleared_with_successor",
      attestation: { outcome: "done", evidence: [{ kind: "url", url: "https://ci.example/run/42" }] },
    });
    expect((await next()).agent_channel.selected_todo).toBe("todo_greet");
    const tick = await lg("goal", "tick", goal);
    expect(tick.code, show(tick)).toBe(0);
    expect((await todo("todo_greet"))?.status).toBe("done");

    // A person's step: refused while its gate is undecided; with the approval, recorded with its file.
    const step = [
      "todo",
      "done",
      goal,
      "todo_publish",
      "--note",
      "published v1",
      "--evidence-file",
      "release-notes.txt",
      "--by",
      "alice",
    ];
    refused(await lg(...step), /rule decision_scope: todo_publish needs scope publish \(pending\)/);
    expect((await todo("todo_publish"))?.status).toBe("open");
    expect((await lg("gate", "approve", goal, "todo_gate")).code).toBe(0);
    const published = await lg(...step);
    expect(published.code, show(published)).toBe(0);
    const sha256 = createHash("sha256")
      .update(readFileSync(join(dir, "release-notes.txt")))
      .digest("hex");
    expect(await todo("todo_publish")).toMatchObject({
      status: "done",
      attestation: {
        outcome: "done",
        by: "alice",
        evidence: [{ kind: "file", name: "release-notes.txt", sha256, bytes: 25 }],
      },
    });

    // A blocker cleared without a successor owes one; --successor-of adds it and the handoff routes on.
    expect(
      (await lg("todo", "add", goal, "todo_flaky", "--class", "blocker", "--content", "a flaky runner")).code,
    ).toBe(0);
    expect(
      (
        await lg(
          "todo",
          "done",
          goal,
          "todo_flaky",
          "--note",
          "runner replaced",
          "--evidence-url",
          "https://ci.example/r",
        )
      ).code,
    ).toBe(0);
    expect((await todo("todo_flaky"))?.handoff).toBe("cleared_without_successor");
    expect((await next()).reason).toMatch(/todo_flaky was cleared without a successor/);
    const succ = await lg(
      ...[
        "todo",
        "add",
        goal,
        "todo_watch_runner",
        "--class",
        "user_action",
        "--content",
        "watch the new runner",
        "--successor-of",
        "todo_flaky",
      ],
    );
    expect(succ.code, show(succ)).toBe(0);
    expect((await todo("todo_flaky"))?.handoff).toBe("cleared_with_successor");
    expect(
      (await lg("todo", "close-no-followup", goal, "todo_watch_runner", "--rationale", "runner is stable"))
        .code,
    ).toBe(0);

    // An honest negative: a blocker accepted with evidence closes the goal as blocked; acceptance never ran.
    expect(
      (await lg("todo", "add", goal, "todo_upstream", "--class", "blocker", "--content", "the upstream API"))
        .code,
    ).toBe(0);
    refused(
      await lg(
        "todo",
        "accept-blocker",
        goal,
        "todo_upstream",
        "--note",
        "gone",
        "--evidence-url",
        "https://up.example/9",
      ),
      /blocker_accepted_from_blocked/,
    );
    expect(
      (await lg("todo", "block", goal, "todo_upstream", "--reason", "upstream removed the API")).code,
    ).toBe(0);
    const accepted = await lg(
      ...[
        "todo",
        "accept-blocker",
        goal,
        "todo_upstream",
        "--note",
        "confirmed by upstream",
        "--evidence-url",
        "https://up.example/9",
      ],
    );
    expect(accepted.code, show(accepted)).toBe(0);
    refused(
      await lg("goal", "close", goal, "--rationale", "r", "--outcome", "blocked", "--blocker", "todo_cix"),
      /negative_needs_evidence: todo_cix is no verified blocker/,
    );
    expect(
      (await lg("goal", "vision", "record", goal, "--route", "greet, publish; upstream blocks the rest"))
        .code,
    ).toBe(0);
    const close = await lg(
      ...[
        "goal",
        "close",
        goal,
        "--rationale",
        "upstream removed the API",
        "--outcome",
        "blocked",
        "--blocker",
        "todo_upstream",
      ],
    );
    expect(close.code, show(close)).toBe(0);
    expect(close.stdout).toMatch(/closed as blocked \(an honest negative, not achieved\)/);
    const s = await st();
    expect(s).toMatchObject({ closed: true, closureOutcome: "blocked", frontierGaps: [] });
    expect(s.acceptance.every((a) => !a.proved)).toBe(true);
  }, 240_000);
});
