// `goal init` through the CLI: the scaffold it writes is runnable at once (goal new, then goal run --oracle
// reaches its user gate), --dry-run writes nothing, and an existing goal file is refused without --force.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loopgate, removeTemps, show, tempDir } from "./cli.js";
import { jsonLines } from "./goal-support.js";

afterAll(removeTemps);

describe("goal init", () => {
  it("scaffolds a goal that goal new + goal run --oracle drive to its gate; refuses to overwrite without --force", async () => {
    const dir = tempDir("loopgate-goal-init-");
    const at = (...a: string[]) => loopgate(a, { cwd: dir });
    const init = [
      "goal",
      "init",
      "shop",
      "--name",
      "shop-goal",
      "--gate-command",
      '["sh","-c","test -s DONE.md"]',
    ];

    const dry = await at(...init, "--dry-run");
    expect(dry.code, show(dry)).toBe(0);
    expect(dry.stdout).toMatch(/--- shop\/goal\.yaml\n[\s\S]*id: shop-goal/);
    expect(dry.stdout).toMatch(/--- shop\/tasks\/todo_first_change\/task\.yaml/);
    expect(existsSync(join(dir, "shop"))).toBe(false);

    const made = await at(...init, "--notify-command", '["sh","-c","cat >> notified.jsonl"]', "--json");
    expect(made.code, show(made)).toBe(0);
    for (const f of [
      "goal.yaml",
      "tasks/todo_first_change/task.yaml",
      "tasks/todo_first_change/solution.sh",
      "workspace",
    ])
      expect(existsSync(join(dir, "shop", f)), f).toBe(true);
    const goalText = readFileSync(join(dir, "shop", "goal.yaml"), "utf8");
    expect(goalText).toMatch(/class: user_gate/);
    expect(goalText).toMatch(/notify:/);

    const created = await at("goal", "new", "shop/goal.yaml", "--json");
    expect(created.code, show(created)).toBe(0);
    const run = await at("goal", "run", "shop-goal", "--oracle", "--json");
    expect(run.code, show(run)).toBe(1);
    const last = jsonLines(run.stdout).at(-1);
    expect(last).toMatchObject({ exit_code: 1, stop: "waiting_person" });
    expect(String(last?.why)).toMatch(/todo_release_gate/);
    const status = await at("goal", "status", "shop-goal", "--json");
    const todos = JSON.parse(status.stdout).todos as { id: string; status: string }[];
    expect(todos.find((t) => t.id === "todo_first_change")?.status).toBe("done");
    // Its notify: target was told the gate waits, once.
    const told = readFileSync(join(dir, "shop", "notified.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(told).toHaveLength(1);
    expect(JSON.parse(told[0] ?? "{}")).toMatchObject({ kind: "gate_waiting", gate_id: "todo_release_gate" });

    const again = await at(...init);
    expect(again.code, show(again)).toBe(2);
    expect(again.stderr).toMatch(/shop\/goal\.yaml.*exist.*--force/);
    expect(readFileSync(join(dir, "shop", "goal.yaml"), "utf8")).toBe(goalText);
    const forced = await at(...init, "--objective", "Another objective.", "--force");
    expect(forced.code, show(forced)).toBe(0);
    expect(readFileSync(join(dir, "shop", "goal.yaml"), "utf8")).toMatch(/objective: Another objective\./);
  }, 120_000);
});
