// A tiny kill campaign (3 kills, SQLite) end to end: the script kills real runs, resumes them, checks
// the log and prints a table whose must-be-zero columns are 0, with the seed and every kill point; and a
// tiny goal-only one (3 kills of `goal tick`, each settled by the next tick), and one on Postgres (2 kills of
// `loopgate worker` running goal turns, each taken over by other workers).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./cli.js";

function campaign(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "bench/campaign/run.ts"), ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      out += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

describe("kill campaign", () => {
  it("3 seeded kills on SQLite: every kill point printed, each run resumed, the table all zeros", async () => {
    const r = await campaign(["--seed", "7", "--kills", "3", "--stores", "sqlite", "--cells", "runs"]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain("kill campaign · seed 7 · 3 kills");
    const kills = r.out.split("\n").filter((l) => /^kill \d\/3 /.test(l));
    expect(kills).toHaveLength(3);
    for (const l of kills) expect(l).toMatch(/LOOPGATE_FAULT_KILL_AFTER_EVENTS=\d+|SIGKILL \d+ ms after/);
    // kills | in doubt | corrupted | lost | blind | not resumable | equal/resumed
    const total = r.out.split("\n").find((l) => l.startsWith("| **total** ")) ?? "";
    const cells = total.split("|").map((c) => c.trim());
    expect(cells[2], total).toMatch(/^3 \(\d\/\d\)$/);
    expect(cells.slice(4, 8), total).toEqual(["0", "0", "0", "0"]);
    const [equal, resumed] = (cells[8] ?? "").split("/");
    expect(Number(resumed)).toBeGreaterThan(0);
    expect(equal).toBe(resumed);
  }, 110_000);

  it("3 seeded goal-turn kills: each tick killed, settled by the next, the goal table all zeros", async () => {
    const r = await campaign(["--seed", "11", "--kills", "3", "--stores", "sqlite", "--cells", "goal"]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain("kill campaign · seed 11 · 3 kills · cells: sqlite · goal turn · tick+tick");
    const kills = r.out.split("\n").filter((l) => /^kill \d\/3 /.test(l));
    expect(kills).toHaveLength(3);
    for (const l of kills)
      expect(l).toMatch(/LOOPGATE_FAULT_KILL_AFTER_(GOAL_)?EVENTS=\d+|SIGKILL \d+ ms after the turn's bind/);
    // No run table: only the goal cells were asked for.
    expect(r.out).not.toContain("| **total** ");
    // kills | in doubt | corrupted | lost | blind | not settled | doubled | unwritten | settled like
    const row = r.out.split("\n").find((l) => l.startsWith("| sqlite · goal turn · tick+tick ")) ?? "";
    const cells = row.split("|").map((c) => c.trim());
    expect(cells[2], row).toMatch(/^3 \(\d\/\d\/\d\/0\)$/);
    expect(cells.slice(4, 10), row).toEqual(["0", "0", "0", "0", "0", "0"]);
    expect(cells[10], row).toBe("3/3");
    // Only SQLite was asked for: no Postgres goal row.
    expect(r.out).not.toMatch(/\| postgres · goal turn/);
  }, 110_000);

  it("2 seeded goal-turn kills on Postgres: a worker killed mid-turn, taken over by 1 and by 2 workers, all zeros", async () => {
    const r = await campaign(["--seed", "5", "--kills", "2", "--stores", "postgres", "--cells", "goal"]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain("cells: postgres · goal turn · 1 worker, postgres · goal turn · 2 workers");
    const kills = r.out.split("\n").filter((l) => /^kill \d\/2 /.test(l));
    expect(kills).toHaveLength(2);
    for (const l of kills)
      expect(l).toMatch(
        /LOOPGATE_FAULT_KILL_AFTER_(GOAL_)?EVENTS=\d+|LOOPGATE_FAULT_KILL_AT_GOAL_UPLOAD=(before|after)|SIGKILL \d+ ms after the turn's bind/,
      );
    for (const cell of ["1 worker", "2 workers"]) {
      const row = r.out.split("\n").find((l) => l.startsWith(`| postgres · goal turn · ${cell} `)) ?? "";
      const cells = row.split("|").map((c) => c.trim());
      expect(cells[2], row).toMatch(/^1 \(\d\/\d\/\d\/\d\)$/);
      expect(cells.slice(4, 10), row).toEqual(["0", "0", "0", "0", "0", "0"]);
      expect(cells[10], row).toBe("1/1");
    }
  }, 300_000);
});
