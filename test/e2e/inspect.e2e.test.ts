// `loopgate runs`, `status` and `events` read back what `run` recorded (docs/guides/runs.md).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Envelope, exampleTask, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);

interface RunRow {
  run_id: string;
  task_id: string;
  status: string;
}

interface EventLine {
  type: string;
  revision: number;
}

describe.concurrent("runs, status and events after two runs", () => {
  let store = "";
  let success: Envelope;
  let escalated: Envelope;

  beforeAll(async () => {
    store = tempDir();
    const task = exampleTask("js-slugify");
    const [ok, bad] = await Promise.all([
      loopgate(["run", task, "--oracle", "--json", "--store", store]),
      loopgate(["run", task, "--noop", "--max-attempts", "1", "--json", "--store", store]),
    ]);
    expect(ok.code, show(ok)).toBe(0);
    expect(bad.code, show(bad)).toBe(1);
    success = parseStdout<Envelope>(ok);
    escalated = parseStdout<Envelope>(bad);
  });

  it("`runs` lists both run ids with their status", async () => {
    const human = await loopgate(["runs", "--store", store]);
    expect(human.code, show(human)).toBe(0);
    expect(human.stdout).toContain(success.run_id);
    expect(human.stdout).toContain(escalated.run_id);

    const json = await loopgate(["runs", "--store", store, "--json"]);
    expect(json.code, show(json)).toBe(0);
    const rows = parseStdout<RunRow[]>(json);
    expect(rows.find((r) => r.run_id === success.run_id)?.status).toBe("SUCCESS");
    expect(rows.find((r) => r.run_id === escalated.run_id)?.status).toBe("ESCALATED");
  });

  it("`runs --limit 1` lists one run", async () => {
    const r = await loopgate(["runs", "--store", store, "--json", "--limit", "1"]);
    expect(r.code, show(r)).toBe(0);
    expect(parseStdout<RunRow[]>(r).length).toBe(1);
  });

  it("`runs` reads $LOOPGATE_STORE when --store is not given", async () => {
    const r = await loopgate(["runs", "--json"], { cwd: tempDir(), env: { LOOPGATE_STORE: store } });
    expect(r.code, show(r)).toBe(0);
    expect(parseStdout<RunRow[]>(r).map((row) => row.run_id)).toEqual(
      expect.arrayContaining([success.run_id, escalated.run_id]),
    );
  });

  it("`status` exits with the run's own exit code and rebuilds the same envelope", async () => {
    const [ok, bad, okHuman, badHuman] = await Promise.all([
      loopgate(["status", success.run_id, "--store", store, "--json"]),
      loopgate(["status", escalated.run_id, "--store", store, "--json"]),
      loopgate(["status", success.run_id, "--store", store]),
      loopgate(["status", escalated.run_id, "--store", store]),
    ]);
    expect(ok.code, show(ok)).toBe(0);
    expect(bad.code, show(bad)).toBe(1);
    expect(parseStdout<Envelope>(ok)).toEqual(success);
    expect(parseStdout<Envelope>(bad)).toEqual(escalated);
    expect(okHuman.code, show(okHuman)).toBe(0);
    expect(okHuman.stdout).toContain("SUCCESS");
    expect(okHuman.stdout).toContain(success.run_id);
    expect(badHuman.code, show(badHuman)).toBe(1);
    expect(badHuman.stdout).toContain("ESCALATED");
  });

  it("`events --json` prints one JSON event per line, from run_started to run_finished", async () => {
    const r = await loopgate(["events", success.run_id, "--store", store, "--json"]);
    expect(r.code, show(r)).toBe(0);
    const lines = r.stdout.split("\n").filter((l) => l !== "");
    const events = lines.map((l) => JSON.parse(l) as EventLine);
    expect(events.length).toBe(success.audit.event_count);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("run_started");
    expect(types.at(-1)).toBe("run_finished");
    const firstGate = types.indexOf("gate_run_finished");
    expect(firstGate).toBeGreaterThan(0);
    expect(types.filter((t) => t === "gate_run_finished").length).toBe(
      success.gates.filter((g) => g.attempt === success.attempts).length,
    );
    expect(events.map((e) => e.revision)).toEqual([...events.keys()]);
  });

  it("`events` prints the audit trail one readable line per event", async () => {
    const r = await loopgate(["events", escalated.run_id, "--store", store]);
    expect(r.code, show(r)).toBe(0);
    const lines = r.stdout.split("\n").filter((l) => l !== "");
    expect(lines.length).toBe(escalated.audit.event_count);
    expect(lines[0]).toContain("run_started");
    expect(lines.at(-1)).toContain("run_finished");
    expect(lines.at(-1)).toContain("ESCALATED");
    expect(lines.some((l) => l.includes("gate_run_finished"))).toBe(true);
  });

  it("`status` and `events` of an unknown run id exit 2 naming the run id and the store", async () => {
    const unknown = "20200101-000000-abcdef";
    for (const cmd of ["status", "events"]) {
      const r = await loopgate([cmd, unknown, "--store", store]);
      expect(r.code, show(r)).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(unknown);
      expect(r.stderr).toContain(store);
    }
  });
});
