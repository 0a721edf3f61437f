import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatRate, healthCommand } from "../../../src/cli/commands/health.js";
import { main } from "../../../src/cli/main.js";
import type { CommandIO } from "../../../src/cli/output/io.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "loopgate-health-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function io(): CommandIO & { text: () => string } {
  let out = "";
  return {
    out: (s: string) => {
      out += s;
    },
    err: () => {},
    text: () => out,
  } as unknown as CommandIO & { text: () => string };
}

describe("loopgate health", () => {
  it("prints — for a rate with no denominator (null in JSON), never 0", async () => {
    const store = SqliteEventStore.open(join(dir, "events.db"));
    await store.close();
    const j = io();
    expect(await healthCommand(j, { store: dir, json: true })).toBe(0);
    expect(JSON.parse(j.text())).toMatchObject({
      runs: 0,
      step_completions: 0,
      step_null_rate: null,
      step_null_rate_denominator: 0,
      step_reopen_rate: null,
      step_reopen_rate_denominator: 0,
    });
    const t = io();
    await healthCommand(t, { store: dir });
    expect(t.text()).toContain("null-step rate: —");
    expect(t.text()).toContain("reopen rate: —");
    expect(formatRate(0, 3, "runs")).toBe("0.0% of 3 runs");
  });
  it("refuses a bad --days (the CLI's flag schema, before the command runs)", async () => {
    let err = "";
    const t = {
      ...io(),
      err: (s: string) => {
        err += s;
      },
    } as CommandIO;
    expect(await main(["health", "--store", dir, "--days", "0"], t)).toBe(2);
    expect(err).toContain('--days: expected a positive whole number (1 or more), got "0"');
  });
});
