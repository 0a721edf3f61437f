// Who made a write, through the CLI as a person runs it, on SQLite and on PostgreSQL: `gate approve --as ana`
// is recorded as ana's (meta.by, goal history's `by`), $LOOPGATE_ACTOR stands in when no flag is given, and
// a bad name is refused (exit 2, naming where it came from) with nothing written.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, storeFrom } from "../../src/cli/output/context.js";
import type { RecordedEvent } from "../../src/core/events/loopgate-event.js";
import { goalStream } from "../../src/runner/goal/goal-store.js";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";
import { GOAL, GOAL_FILE } from "./goal-support.js";

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
}, 60_000);
afterAll(async () => {
  removeTemps();
  await db?.drop();
});

/** Each case: its own store; the actor's variable set to a known value unless the case sets it. */
const run = (store: string, args: string[], env: Record<string, string> = {}) =>
  loopgate([...args, "--store", store], { env: { LOOPGATE_ACTOR: "", ...env } });

async function stored(store: string): Promise<RecordedEvent[]> {
  const s = await openStore(storeFrom(store), "read");
  try {
    return await s.readStream(goalStream(GOAL));
  } finally {
    await s.close();
  }
}

type HistoryJson = { entries: { kind: string; type?: string; origin?: string; by?: string | null }[] };

describe.each([
  ["SQLite", () => tempDir("loopgate-actor-")],
  ["PostgreSQL", () => db.url],
])("the actor of a person's write (%s)", (_kind, storeOf) => {
  let store: string;
  beforeAll(async () => {
    store = storeOf();
    const made = await run(store, ["goal", "new", GOAL_FILE, "--json"], { LOOPGATE_ACTOR: "maker" });
    expect(made.code, show(made)).toBe(0);
  }, 120_000);

  it("gate approve --as ana: by ana in goal history --json and text, and in the stored event's meta", async () => {
    const r = await run(
      store,
      ["gate", "approve", GOAL, "todo_publish_gate", "--as", "ana", "--note", "ship it"],
      {
        LOOPGATE_ACTOR: "not-ana",
      },
    );
    expect(r.code, show(r)).toBe(0);
    const h = await run(store, ["goal", "history", GOAL, "--json"]);
    expect(h.code, show(h)).toBe(0);
    const gate = parseStdout<HistoryJson>(h).entries.find((e) => e.type === "gate_decided");
    expect(gate).toMatchObject({ kind: "write", origin: "operator", by: "ana" });
    const text = await run(store, ["goal", "history", GOAL]);
    expect(text.stdout).toMatch(/operator +gate todo_publish_gate approved: ship it · by ana\n/);
    const e = (await stored(store)).find((x) => x.type === "gate_decided");
    expect(e?.meta).toMatchObject({ origin: "operator", by: "ana" });
    expect(e?.data).toMatchObject({ note: "ship it" });
    // goal new ran with $LOOPGATE_ACTOR=maker: every event it recorded is maker's.
    const created = (await stored(store)).filter((x) => x.type === "goal_created" || x.type === "todo_added");
    expect(created.length).toBeGreaterThan(1);
    for (const c of created) expect(c.meta.by).toBe("maker");
  });

  it("no flag: $LOOPGATE_ACTOR names the writer", async () => {
    const r = await run(store, ["todo", "block", GOAL, "todo_crlf", "--reason", "waiting on a spec"], {
      LOOPGATE_ACTOR: "bob the builder",
    });
    expect(r.code, show(r)).toBe(0);
    const blocked = (await stored(store)).filter((x) => x.type === "todo_blocked");
    expect(blocked.at(-1)?.meta).toMatchObject({ origin: "operator", by: "bob the builder" });
    const h = parseStdout<HistoryJson>(await run(store, ["goal", "history", GOAL, "--json"]));
    expect(h.entries.filter((e) => e.type === "todo_blocked").at(-1)?.by).toBe("bob the builder");
  });

  it("a bad name is refused, exit 2, naming the flag or the variable; nothing is written", async () => {
    const before = (await stored(store)).length;
    const flag = await run(store, ["todo", "reopen", GOAL, "todo_crlf", "--as", "ana\nroot"]);
    expect(flag.code, show(flag)).toBe(2);
    expect(flag.stderr).toMatch(/--as: .*not an actor's name/);
    const long = await run(store, ["gate", "reject", GOAL, "todo_publish_gate", "--as", "x".repeat(65)]);
    expect(long.code, show(long)).toBe(2);
    expect(long.stderr).toMatch(/--as: .*at most 64/);
    const env = await run(store, ["goal", "stop", GOAL], { LOOPGATE_ACTOR: "eve\u0007" });
    expect(env.code, show(env)).toBe(2);
    expect(env.stderr).toMatch(/\$LOOPGATE_ACTOR: .*not an actor's name/);
    expect((await stored(store)).length).toBe(before);
  });
});
