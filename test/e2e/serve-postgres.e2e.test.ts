// `loopgate serve` over a PostgreSQL store, in Chromium: the run queue's jobs beside the runs, a run driven
// with its observations in the database (the change its gates saw, read back through the content store),
// and a run that lands while the page is open appearing without a reload.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Envelope } from "../../src/core/run/envelope.js";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { exampleTask, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";
import { launchChromium, type Served, startServe } from "./serve-support.js";

let db: FreshDatabase;
let cwd: string;
let served: Served;
let browser: Browser;
let finished: Envelope;
let job: string;

beforeAll(async () => {
  db = await freshDatabase();
  cwd = tempDir("loopgate-serve-pg-");
  const run = await loopgate(["run", exampleTask("js-slugify"), "--oracle", "--store", db.url, "--json"], {
    cwd,
  });
  expect(run.code, show(run)).toBe(0);
  finished = parseStdout<Envelope>(run);
  const submitted = await loopgate(
    ["submit", exampleTask("js-slugify"), "--oracle", "--store", db.url, "--json"],
    {
      cwd,
    },
  );
  expect(submitted.code, show(submitted)).toBe(0);
  job = parseStdout<{ job_id: string }>(submitted).job_id;
  served = await startServe(["--store", db.url], { cwd: tempDir("loopgate-serve-pg-elsewhere-") });
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await served?.stop();
  await db?.drop();
  removeTemps();
});

describe("loopgate serve on PostgreSQL", () => {
  it("lists the queued job beside the finished run, with the queue's own line", async () => {
    expect(job).toMatch(/^job-/);
    const page = await (await browser.newContext()).newPage();
    await page.goto(served.info.url);
    const queued = page.locator("table.runs tr", { hasText: job });
    expect(await queued.count()).toBe(1);
    expect(await queued.locator(".badge").textContent()).toBe("QUEUED");
    expect(await queued.textContent()).toMatch(/queue: queued since/);
    const run = page.locator("table.runs tr", { has: page.locator(`a[href="/runs/${finished.run_id}"]`) });
    expect(await run.locator(".badge").textContent()).toBe("SUCCESS");
    expect(await page.locator("main").textContent()).toMatch(/PostgreSQL run queue: 1 queued/);
  });

  it("a run page shows the change its gates saw, read from the database by a board on another folder", async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${served.info.url}runs/${finished.run_id}`);
    const diff = page.locator("details.diff");
    expect(await diff.count()).toBeGreaterThan(0);
    // The oracle of js-slugify rewrites src/slugify.js: the one deliverable the gates saw change.
    expect(await diff.locator("summary code").allTextContents()).toContain("src/slugify.js");
    expect(await diff.locator(".add").count()).toBeGreaterThan(0);
  });

  it("a run that finishes while the page is open appears on it without a reload", async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(served.info.url);
    await page.evaluate(() => {
      (globalThis as unknown as { sameDocument: number }).sameDocument = 7;
    });
    const before = await page.locator('table.runs a[href^="/runs/"]').count();
    const r = await loopgate(["run", exampleTask("js-slugify"), "--noop", "--store", db.url, "--json"], {
      cwd,
    });
    expect(r.code, show(r)).toBe(1);
    const runId = parseStdout<Envelope>(r).run_id;
    await page.waitForSelector(`table.runs a[href="/runs/${runId}"]`, { timeout: 60_000 });
    expect(await page.locator('table.runs a[href^="/runs/"]').count()).toBe(before + 1);
    expect(await page.evaluate(() => (globalThis as unknown as { sameDocument: number }).sameDocument)).toBe(
      7,
    );
  });

  it("a page whose live connection opens only after the log moved catches up on connecting", async () => {
    const page = await (await browser.newContext()).newPage();
    // The page's live connection is held back until the run below has finished.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route("**/live*", async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(served.info.url);
    await page.evaluate(() => {
      (globalThis as unknown as { sameDocument: number }).sameDocument = 9;
    });
    const r = await loopgate(["run", exampleTask("js-slugify"), "--noop", "--store", db.url, "--json"], {
      cwd,
    });
    expect(r.code, show(r)).toBe(1);
    const runId = parseStdout<Envelope>(r).run_id;
    expect(await page.locator(`table.runs a[href="/runs/${runId}"]`).count()).toBe(0);
    release();
    await page.waitForSelector(`table.runs a[href="/runs/${runId}"]`, { timeout: 60_000 });
    expect(await page.evaluate(() => (globalThis as unknown as { sameDocument: number }).sameDocument)).toBe(
      9,
    );
  });
});
