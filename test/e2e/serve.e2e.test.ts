// `loopgate serve` as a person uses it, in Debian's Chromium: the runs page, a forger's run, the example goal
// waiting at its publish gate decided with a click, live updates, a stale tab, a read-only board, and the
// standalone report of `loopgate report --html` opened with the network off.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Envelope } from "../../src/core/run/envelope.js";
import { exampleDir, exampleTask, loopgate, parseStdout, ROOT, removeTemps, show, tempDir } from "./cli.js";
import { GOAL, GOAL_FILE, goalEvents, lg } from "./goal-support.js";
import { launchChromium, SCREENSHOTS, type Served, startServe } from "./serve-support.js";

const VIEWPORT = { width: 1280, height: 800 };
const NAME = "board-tester";

let store: string;
let forger: Envelope;
let runs: { run_id: string; task_id: string; status: string }[];
let board: Served;
let readOnly: Served;
let browser: Browser;
const contexts: BrowserContext[] = [];

const newContext = async (options: Parameters<Browser["newContext"]>[0] = {}) => {
  const c = await browser.newContext({ viewport: VIEWPORT, ...options });
  contexts.push(c);
  return c;
};
const count = async (type: string) => (await goalEvents(store)).filter((e) => e.type === type).length;
const shot = (name: string) => join(ROOT, "docs", "images", name);

beforeAll(async () => {
  store = tempDir("loopgate-serve-");
  // A finished demo (four runs of js-slugify), a forger on the scripted model, and the example goal ticked
  // four turns: its three fixes and its acceptance, so that it waits at its publish gate.
  const demo = await loopgate(["demo", "js-slugify", "--store", store]);
  expect(demo.code, show(demo)).toBe(0);
  const f = await loopgate([
    "run",
    exampleTask("js-slugify"),
    "--model",
    `scripted:${join(exampleDir("js-slugify"), "agent", "claims-done.yaml")}`,
    "--store",
    store,
    "--json",
  ]);
  expect(f.code, show(f)).toBe(1);
  forger = parseStdout<Envelope>(f);
  expect((await loopgate(["goal", "new", GOAL_FILE, "--store", store])).code).toBe(0);
  for (let i = 0; i < 4; i++) {
    const t = await lg(store, "goal", "run", GOAL, "--once");
    expect(t.code, show(t)).toBeLessThanOrEqual(1);
  }
  const listed = await loopgate(["runs", "--store", store, "--json", "--limit", "100"]);
  runs = parseStdout(listed);
  const tokenFile = join(tempDir("loopgate-serve-token-"), "token");
  writeFileSync(tokenFile, `# the board's credential\n${NAME}:a-secret-of-more-than-sixteen-characters\n`);
  board = await startServe(["--store", store, "--token-file", tokenFile]);
  readOnly = await startServe(["--store", store]);
  browser = await launchChromium();
  if (SCREENSHOTS) mkdirSync(join(ROOT, "docs", "images"), { recursive: true });
}, 300_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await board?.stop();
  await readOnly?.stop();
  removeTemps();
});

describe("loopgate serve in Chromium", () => {
  it("prints its URL on 127.0.0.1, actions on only with the credential", () => {
    expect(board.info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(board.info).toMatchObject({ actions: true, name: NAME });
    expect(readOnly.info).toMatchObject({ actions: false, sign_in_url: null });
  });

  it("the runs page lists the finished demo runs with their status", async () => {
    const page = await (await newContext()).newPage();
    await page.goto(board.info.url);
    const success = runs.filter((r) => r.status === "SUCCESS" && r.task_id);
    expect(success.length).toBeGreaterThan(0);
    for (const r of runs.filter((x) => x.task_id)) {
      const row = page.locator("table.runs tr", { has: page.locator(`a[href="/runs/${r.run_id}"]`) });
      await expect.poll(() => row.count()).toBe(1);
      expect(await row.locator(".badge").first().textContent()).toBe(r.status);
    }
    // The status filter keeps only what it names.
    await page.goto(`${board.info.url}?status=ESCALATED`);
    const statuses = await page.locator("table.runs .badge").allTextContents();
    expect(statuses.length).toBe(runs.filter((r) => r.status === "ESCALATED").length);
    expect(new Set(statuses)).toEqual(new Set(["ESCALATED"]));
    if (SCREENSHOTS) {
      await page.goto(board.info.url);
      await page.screenshot({ path: shot("board-runs.png") });
    }
  });

  it("a forger's run page shows its claim beside the held-out gate that failed", async () => {
    const page = await (await newContext()).newPage();
    await page.goto(`${board.info.url}runs/${forger.run_id}`);
    const last = page.locator(`#attempt-${forger.attempts}`);
    const claim = forger.claims.filter((c) => c.attempt === forger.attempts).at(-1)?.text as string;
    expect(claim).toMatch(/done/i);
    expect(await last.locator(".claim").textContent()).toContain(claim);
    const failed = forger.gates.filter((g) => g.attempt === forger.attempts && !g.passed).map((g) => g.id);
    expect(failed).toContain("heldout-tests");
    const evidence = last.locator(".evidence");
    for (const id of failed) {
      const row = evidence.locator("tr", { hasText: id });
      expect(await row.locator(".badge").first().textContent()).toMatch(/failed|not passed|timed out/);
    }
    expect(await page.locator("h1 .badge").textContent()).toBe(forger.status);
    if (SCREENSHOTS) await page.screenshot({ path: shot("board-run.png") });
  });

  it("without a credential the buttons are absent and a hand-made POST is refused (403)", async () => {
    const page = await (await newContext()).newPage();
    await page.goto(`${readOnly.info.url}goals/${GOAL}`);
    expect(await page.locator('[data-gate="todo_publish_gate"]').count()).toBe(1);
    expect(await page.locator("button[data-action]").count()).toBe(0);
    const revision = Number(await page.locator("#revision").getAttribute("data-revision"));
    const post = (base: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${base}goals/${GOAL}/gates/todo_publish_gate/approve`, {
        method: "POST",
        body,
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        redirect: "manual",
      });
    expect((await post(readOnly.info.url, `revision=${revision}`)).status).toBe(403);
    // The board with actions on refuses a POST without its session, and one without the form's CSRF token.
    expect((await post(board.info.url, `revision=${revision}`)).status).toBe(403);
    const signIn = await fetch(board.info.sign_in_url as string, { redirect: "manual" });
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0] as string;
    expect(cookie).toMatch(/^loopgate_board=/);
    expect((await post(board.info.url, `revision=${revision}`, { cookie })).status).toBe(403);
    expect((await post(board.info.url, `revision=${revision}&csrf=forged`, { cookie })).status).toBe(403);
    expect(await count("gate_decided")).toBe(0);
  });

  it("the goal waits at its publish gate; approve advances it, the next turn appears live; a stale tab gets needs_rebase", async () => {
    const context = await newContext();
    const tabA = await context.newPage();
    await tabA.goto(board.info.sign_in_url as string);
    const tabB = await context.newPage();
    // The second tab's live connection is down, so its form stays the one it was rendered with.
    await tabB.route("**/live*", (r) => r.abort());
    await tabB.goto(`${board.info.url}goals/${GOAL}`);
    await tabA.goto(`${board.info.url}goals/${GOAL}`);
    const gate = '[data-gate="todo_publish_gate"]';
    await tabA.waitForSelector(`${gate} button[data-action="approve"]`);
    expect(await tabA.locator("h1").textContent()).toContain("operator_gate");
    if (SCREENSHOTS) await tabA.screenshot({ path: shot("board-goal.png") });

    const revision0 = Number(await tabA.locator("#revision").getAttribute("data-revision"));
    await tabA.click(`${gate} button[data-action="approve"]`);
    await tabA.waitForSelector("#notice");
    expect(await tabA.locator("#notice").textContent()).toMatch(new RegExp(`approved by ${NAME}`));
    const decided = (await goalEvents(store)).filter((e) => e.type === "gate_decided") as unknown as {
      data: { todo_id: string; decision: string; note: string };
      meta: { origin: string; by?: string };
    }[];
    expect(decided).toHaveLength(1);
    // Who decided is the write's actor (the credential's name), not text in the person's note.
    expect(decided[0]).toMatchObject({
      data: { todo_id: "todo_publish_gate", decision: "approved", note: "" },
      meta: { origin: "operator", by: NAME },
    });
    expect(await tabA.locator(gate).count()).toBe(0);
    expect(await tabA.locator("#todo_publish_gate").textContent()).toContain(`approved by ${NAME}`);
    const row = tabA.locator(`#writes tr[data-revision="${revision0 + 1}"]`);
    expect(await row.textContent()).toMatch(new RegExp(`operator${NAME}gate todo_publish_gate approved`));

    // The next turn, driven outside the board, lands on the open page without a reload.
    const turns = await count("turn_bound");
    await tabA.evaluate(() => {
      (globalThis as unknown as { sameDocument: number }).sameDocument = 42;
    });
    const tick = await lg(store, "goal", "tick", GOAL);
    expect(tick.code, show(tick)).toBe(0);
    expect(await count("turn_bound")).toBe(turns + 1);
    await tabA.waitForSelector(`#turns tr[data-turn="t${turns + 1}"]`, { timeout: 60_000 });
    expect(await tabA.evaluate(() => (globalThis as unknown as { sameDocument: number }).sameDocument)).toBe(
      42,
    );

    // The stale tab's approve is refused: needs_rebase, what changed, nothing written.
    await tabB.click(`${gate} button[data-action="approve"]`);
    await tabB.waitForSelector("#notice");
    const notice = (await tabB.locator("#notice").textContent()) ?? "";
    expect(notice).toContain("needs_rebase");
    expect(notice).toContain("gate_decided");
    expect(notice).toContain("Nothing was written");
    expect(await count("gate_decided")).toBe(1);
  });

  it("report --html writes the run page as one file that opens with the network off and shows the same facts", async () => {
    const file = join(tempDir("loopgate-serve-html-"), "run.html");
    const r = await loopgate(["report", forger.run_id, "--store", store, "--html", file]);
    expect(r.code, show(r)).toBe(1);
    expect(r.stderr).toContain(`wrote ${file}`);
    const context = await newContext({ offline: true });
    const requests: string[] = [];
    await context.route("**/*", (route) => {
      if (!route.request().url().startsWith("file:")) requests.push(route.request().url());
      return route.request().url().startsWith("file:") ? route.continue() : route.abort();
    });
    const page = await context.newPage();
    await page.goto(pathToFileURL(file).href);
    const last = page.locator(`#attempt-${forger.attempts}`);
    const claim = forger.claims.filter((c) => c.attempt === forger.attempts).at(-1)?.text as string;
    expect(await last.locator(".claim").textContent()).toContain(claim);
    expect(
      await last
        .locator(".evidence tr", { hasText: "heldout-tests" })
        .locator(".badge")
        .first()
        .textContent(),
    ).toBe("failed");
    expect(await page.locator("h1 .badge").textContent()).toBe(forger.status);
    expect(await page.locator("script").count()).toBe(0);
    expect(requests).toEqual([]);
    // The same facts as the served page: every gate row of every attempt.
    const served = await (await newContext()).newPage();
    await served.goto(`${board.info.url}runs/${forger.run_id}`);
    const rows = (p: typeof page) => p.locator(".evidence tr").allTextContents();
    expect(await rows(page)).toEqual(await rows(served));
  });

  it("refuses a non-loopback --host without a credential (exit 2, naming --host)", async () => {
    const r = await loopgate(["serve", "--host", "0.0.0.0", "--store", store]);
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toMatch(/--host: 0\.0\.0\.0 is not a loopback address/);
  });

  it("stops cleanly on SIGTERM (exit 0)", async () => {
    const r = await readOnly.stop();
    expect(r).toEqual({ code: 0, signal: null });
    expect(readOnly.stderr()).toContain("loopgate serve: stopped");
  });
});
