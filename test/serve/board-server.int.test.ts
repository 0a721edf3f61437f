import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { goalNewCommand } from "../../src/cli/commands/goal/goal.js";
import { cliReaders } from "../../src/cli/commands/serve.js";
import { openStore } from "../../src/cli/output/context.js";
import type { CommandIO } from "../../src/cli/output/io.js";
import { locateStore } from "../../src/cli/output/store-location.js";
import { goalStream } from "../../src/runner/goal/goal-store.js";
import { type Board, startBoard } from "../../src/serve/board-server.js";
import type { EventStore } from "../../src/store/kernel/event-store.js";

// The board's write path over HTTP, against a real SQLite store holding the bundled example goal: a
// defer with its machine-checkable condition, a cancel, the refusals (a bad condition, a stale revision,
// an unknown decision, a foreign Host), each checked against the goal's stream itself.
const GOAL = "csvcol-rfc4180";
const GATE = "todo_publish_gate";
const SECRET = "0123456789abcdef-secret";
const quiet: CommandIO = { out: () => {}, err: () => {}, stderr: process.stderr };

let dir: string;
let store: EventStore;
let board: Board;
let cookie: string;
/** The session's CSRF token, as the first form gave it (it is the session's, whatever the page). */
let sessionCsrf = "";

beforeAll(async () => {
  dir = join(mkdtempSync(join(tmpdir(), "loopgate-board-")), "store");
  expect(await goalNewCommand(quiet, resolve("examples/goal-csvcol/goal.yaml"), { store: dir })).toBe(0);
  store = await openStore(dir, false);
  board = await startBoard({
    store,
    localDir: dir,
    storeLabel: dir,
    readers: cliReaders(locateStore(dir), dir),
    host: "127.0.0.1",
    port: 0,
    credential: { name: "carol", secret: SECRET },
  });
  const signIn = await fetch(`${board.url}login?token=${SECRET}`, { redirect: "manual" });
  expect(signIn.status).toBe(303);
  cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0] as string;
}, 60_000);

afterAll(async () => {
  await board?.close();
  await store?.close();
  rmSync(join(dir, ".."), { recursive: true, force: true });
});

const events = () => store.readStream(goalStream(GOAL));
/** The goal page's form fields as a signed-in person gets them. */
async function form(): Promise<{ revision: string; csrf: string; html: string }> {
  const html = await (await fetch(`${board.url}goals/${GOAL}`, { headers: { cookie } })).text();
  const revision = /name="revision" value="(\d+)"/.exec(html)?.[1];
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!revision || !csrf) throw new Error(`no gate form on the page:\n${html.slice(0, 2000)}`);
  return { revision, csrf, html };
}
const post = (verb: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${board.url}goals/${GOAL}/gates/${GATE}/${verb}`, {
    method: "POST",
    body: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", cookie, ...headers },
    redirect: "manual",
  });

describe("the board's gate actions", () => {
  it("the goal page offers the four decisions on the open gate, with the stream revision it was rendered from", async () => {
    const { revision, html, csrf } = await form();
    sessionCsrf = csrf;
    expect(Number(revision)).toBe((await events()).at(-1)?.revision);
    for (const verb of ["approve", "reject", "cancel", "defer"])
      expect(html).toContain(`action="/goals/${GOAL}/gates/${GATE}/${verb}"`);
  });

  it("a defer without a machine-checkable condition is refused and nothing is written", async () => {
    const before = (await events()).length;
    const { revision, csrf } = await form();
    const r = await post("defer", { revision, csrf, until: "when it feels right" });
    expect(r.status).toBe(400);
    expect(await r.text()).toMatch(/not a machine-readable resume condition/);
    expect((await events()).length).toBe(before);
  });

  it("an unknown decision and a foreign Host are refused", async () => {
    const { revision, csrf } = await form();
    expect((await post("merge", { revision, csrf })).status).toBe(400);
    // A page of another name that resolves to 127.0.0.1 (DNS rebinding) gets nothing.
    const foreign = await new Promise<number>((done, fail) => {
      const u = new URL(`${board.url}goals/${GOAL}`);
      request(
        { host: u.hostname, port: u.port, path: u.pathname, headers: { host: "evil.example" } },
        (res) => {
          res.resume();
          done(res.statusCode ?? 0);
        },
      )
        .on("error", fail)
        .end();
    });
    expect(foreign).toBe(403);
  });

  it("defer records the condition, origin operator and who; the page then says so", async () => {
    const { revision, csrf } = await form();
    const r = await post("defer", {
      revision,
      csrf,
      until: "todo:todo_crlf=done",
      note: "after the CRLF fix",
    });
    expect(r.status).toBe(303);
    const last = (await events()).at(-1);
    expect(last).toMatchObject({
      type: "todo_deferred",
      data: {
        todo_id: GATE,
        resume_when: { kind: "todo_status", todo_id: "todo_crlf", status: "done" },
        note: "after the CRLF fix",
      },
      meta: { origin: "operator", by: "carol" },
    });
    const page = await (await fetch(`${board.url}goals/${GOAL}`, { headers: { cookie } })).text();
    expect(page).toMatch(
      /gate todo_publish_gate: deferred by carol \(recorded todo_deferred, origin operator/,
    );
  });

  it("a form rendered before the last write is refused with needs_rebase, naming what changed", async () => {
    const stale = String(((await events()).at(-1)?.revision as number) - 1);
    const before = (await events()).length;
    const r = await post("cancel", { revision: stale, csrf: sessionCsrf });
    expect(r.status).toBe(409);
    const text = await r.text();
    expect(text).toContain("needs_rebase");
    expect(text).toContain(`rendered from stream revision ${stale}`);
    expect(text).toMatch(/todo_deferred \(operator by carol\)/);
    expect((await events()).length).toBe(before);
  });
});
