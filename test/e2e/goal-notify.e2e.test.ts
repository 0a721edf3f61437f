// Notifications through the CLI: the bundled example goal, copied with a notify: list (a command target
// writing a file, a real local webhook answering 500 twice then 200, and a dead webhook), run with
// `goal run` to its publish gate, then to terminal closure. Asserted from what the targets received and
// from the goal stream's notification facts; the run's exit and per-turn outcomes are those of the same
// goal without notify (as goal-run-closure.e2e.test.ts asserts them).
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { loopgate, ROOT, removeTemps, show, tempDir } from "./cli.js";
import { GOAL, jsonLines } from "./goal-support.js";

afterAll(removeTemps);

interface Hit {
  body: Record<string, unknown>;
  key: string | undefined;
}
const hits: Hit[] = [];
let server: Server;
let url = "";
let deadUrl = "";

beforeAll(async () => {
  // The webhook: 500 on its first two requests, 200 after.
  server = createServer((req, res) => {
    let data = "";
    req.on("data", (c) => {
      data += c;
    });
    req.on("end", () => {
      hits.push({ body: JSON.parse(data), key: req.headers["idempotency-key"] as string | undefined });
      res.statusCode = hits.length <= 2 ? 500 : 200;
      res.end(hits.length <= 2 ? "try later" : "ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  // A dead target: a port that was just listened on and closed (connection refused).
  const dead = createServer();
  await new Promise<void>((r) => dead.listen(0, "127.0.0.1", r));
  deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}/hook`;
  await new Promise<void>((r) => dead.close(() => r()));
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** The example goal copied beside its repository, with `notify` appended to its goal file. */
function exampleWith(notify: string): { dir: string; goalFile: string } {
  const dir = tempDir("loopgate-notify-");
  cpSync(join(ROOT, "examples", "goal-csvcol"), join(dir, "goal-csvcol"), { recursive: true });
  cpSync(join(ROOT, "examples", "sh-csvcol"), join(dir, "sh-csvcol"), { recursive: true });
  const goalFile = join(dir, "goal-csvcol", "goal.yaml");
  writeFileSync(goalFile, `${readFileSync(goalFile, "utf8")}\n${notify}`);
  return { dir, goalFile };
}

type Ev = { type: string; data: Record<string, unknown> };
async function events(store: string): Promise<Ev[]> {
  const s = SqliteEventStore.open(join(store, "events.db"), { readonly: true });
  try {
    return (await s.readStream(`goal-${GOAL}`)) as never;
  } finally {
    await s.close();
  }
}
const ofType = (es: Ev[], t: string, target?: string) =>
  es.filter(
    (e) => e.type === t && (target === undefined || String(e.data.notification_id).endsWith(`/${target}`)),
  );
const lines = (file: string) =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];

describe("goal notifications", () => {
  it("the publish gate notifies once (command and webhook, retried after two 500s); a dead target blocks nothing; closure notifies once", async () => {
    const { dir, goalFile } = exampleWith(
      [
        "notify:",
        "  - id: file",
        '    command: ["sh", "-c", "cat >> notified.jsonl"]',
        "  - id: hook",
        `    url: ${url}`,
        "    retry: { attempts: 4, backoff: 1s }",
        "  - id: dead",
        `    url: ${deadUrl}`,
        "    on: [gate_waiting]",
        "    retry: { attempts: 2, backoff: 1s }",
        "",
      ].join("\n"),
    );
    const store = join(dir, "store");
    const lg = (...a: string[]) => loopgate([...a, "--store", store]);
    expect((await lg("goal", "new", goalFile, "--json")).code).toBe(0);

    // 1. To the publish gate: the same exit and turns as without notify (goal-run-closure's figures).
    const first = await lg("goal", "run", GOAL, "--json");
    expect(first.code, show(first)).toBe(1);
    const out = jsonLines(first.stdout);
    expect(out.at(-1)).toMatchObject({ exit_code: 1, stop: "waiting_person", turns: 6 });
    expect(out.slice(0, -1).map((l) => l.outcome)).toEqual([
      "advanced",
      "advanced",
      "advanced",
      "advanced",
      "advanced",
      "waiting_person",
    ]);

    // The command target got exactly one gate notification, its body the structured fields.
    const file = join(dir, "goal-csvcol", "notified.jsonl");
    const got = lines(file);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({
      goal: GOAL,
      kind: "gate_waiting",
      gate_id: "todo_publish_gate",
      todo_ids: ["todo_publish"],
      attempt: 1,
    });
    expect(String(got[0]?.text)).toMatch(/todo_publish_gate/);
    expect(String(got[0]?.command)).toMatch(new RegExp(`gate approve ${GOAL} todo_publish_gate --store`));

    // The webhook: three attempts with one idempotency key, the third answered 200; recorded as such.
    expect(hits).toHaveLength(3);
    expect(new Set(hits.map((h) => h.key)).size).toBe(1);
    expect(hits.map((h) => h.body.attempt)).toEqual([1, 2, 3]);
    expect(hits[2]?.body).toMatchObject({ kind: "gate_waiting", gate_id: "todo_publish_gate", goal: GOAL });
    expect(typeof hits[2]?.body.text).toBe("string");
    let es = await events(store);
    expect(ofType(es, "notification_due", "hook")).toHaveLength(1);
    expect(ofType(es, "notification_attempted", "hook")).toHaveLength(3);
    expect(ofType(es, "notification_failed", "hook").map((e) => e.data.attempt)).toEqual([1, 2]);
    expect(ofType(es, "notification_sent", "hook").map((e) => e.data.attempt)).toEqual([3]);

    // The dead target: both attempts failed and were recorded, the cap with them, never silent.
    const dead = ofType(es, "notification_failed", "dead");
    expect(dead.map((e) => e.data.attempt)).toEqual([1, 2]);
    expect(dead.at(-1)?.data).toMatchObject({ max_attempts: 2, next_retry_at: null });
    expect(ofType(es, "notification_sent", "dead")).toHaveLength(0);
    expect(first.stderr).toMatch(/notify: dead failed \(attempt 2\).*given up/);

    // 2. Run again while the gate still waits: nothing is sent twice.
    const again = await lg("goal", "run", GOAL, "--json");
    expect(again.code, show(again)).toBe(1);
    expect(lines(file)).toHaveLength(1);
    expect(hits).toHaveLength(3);

    // 3. To terminal closure (as goal-run-closure does): one terminal notification, then none again.
    expect((await lg("gate", "approve", GOAL, "todo_publish_gate", "--note", "ship it")).code).toBe(0);
    expect((await lg("goal", "run", GOAL, "--json")).code).toBe(1);
    for (const [todo, why] of [
      ["todo_publish", "tagged v1"],
      ["todo_watch_reports", "reports are closed"],
    ] as const)
      expect((await lg("todo", "close-no-followup", GOAL, todo, "--rationale", why)).code).toBe(0);
    // Closure includes the agent's vision checkpoint: record the route, then the closure intent.
    const vision = await lg("goal", "vision", "record", GOAL, "--route", "three fixes, then acceptance");
    expect(vision.code, show(vision)).toBe(0);
    expect((await lg("goal", "close", GOAL, "--rationale", "all three fixes proved")).code).toBe(0);
    const done = await lg("goal", "run", GOAL, "--json");
    expect(done.code, show(done)).toBe(0);
    expect(jsonLines(done.stdout).at(-1)).toMatchObject({ exit_code: 0, stop: "terminal" });
    expect((await lg("goal", "run", GOAL, "--json")).code).toBe(0);

    const terminal = lines(file).filter((l) => l.kind === "terminal");
    expect(terminal).toHaveLength(1);
    expect(terminal[0]).toMatchObject({ goal: GOAL, kind: "terminal", gate_id: null });
    expect(hits.filter((h) => h.body.kind === "terminal")).toHaveLength(1);
    expect(lines(file).filter((l) => l.kind === "gate_waiting")).toHaveLength(1);
    es = await events(store);
    // The dead target listens to gate_waiting only: nothing terminal is owed to it.
    expect(ofType(es, "notification_due", "dead")).toHaveLength(1);
  }, 240_000);
});
