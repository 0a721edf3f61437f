import { describe, expect, it } from "vitest";
import { type DemoRow, demoConclusion } from "../../src/cli/commands/demo-conclusion.js";

const row = (over: Partial<DemoRow>): DemoRow => ({
  task: "t",
  builder: "forger",
  expected: "not SUCCESS",
  status: "ESCALATED",
  attempts: 3,
  why: "",
  ok: true,
  run_id: "r",
  gates_run: 4,
  gates_failed: 2,
  reason: "attempt cap reached",
  ...over,
});
const GATES = 'Forged "done" claims were refused by held-out gates';

describe("the demo's closing sentence", () => {
  it("credits held-out gates when every forger was refused by failing gates", () => {
    const s = demoConclusion([
      row({ builder: "oracle", expected: "SUCCESS", status: "SUCCESS", gates_failed: 0 }),
      row({}),
    ]);
    expect(s).toContain("2/2 runs ended as expected.");
    expect(s).toContain(GATES);
  });

  it("without a sandbox (every row TOOL_FAILURE, no gate ran) it never speaks of gates or of 'as expected'", () => {
    const failed = {
      status: "TOOL_FAILURE",
      ok: false,
      gates_run: 0,
      gates_failed: 0,
      reason: "bubblewrap (bwrap) is not installed",
    };
    const s = demoConclusion([row({ ...failed, expected: "SUCCESS" }), row(failed), row(failed)]);
    expect(s).not.toContain("held-out gates");
    expect(s).toContain("0/3 runs ended as expected.");
    expect(s).toContain("3 runs could not execute (TOOL_FAILURE)");
    expect(s).toContain("bwrap");
  });

  it("a forger that escalated without any failing gate (a budget cap) is not credited to the gates", () => {
    const s = demoConclusion([row({}), row({ gates_run: 0, gates_failed: 0 })]);
    expect(s).not.toContain(GATES);
    expect(s).toContain("1 of 2 forged runs were refused by failing gates");
  });
});

describe("the demo's examples whose gates cannot start", () => {
  it("names each absent bare program once; static gates and paths into the task are not looked up", async () => {
    const { absentGatePrograms } = await import("../../src/cli/commands/demo.js");
    const gates = [
      { id: "a", run: ["python3", "-m", "unittest"] },
      { id: "b", run: ["python3", "x.py"] },
      { id: "c", run: ["node", "--test"] },
      { id: "d", run: ["./checks/run.sh"] },
      { id: "e", static: { path: "x", exists: true } },
    ];
    const find = (p: string) => (p === "node" ? "/usr/bin/node" : null);
    expect(absentGatePrograms(gates, find)).toEqual(["python3"]);
    expect(absentGatePrograms(gates, () => "/usr/bin/x")).toEqual([]);
  });
});
