import { describe, expect, it } from "vitest";
import { boardNote, GateForm, gateIntent } from "../../src/serve/gate-actions.js";

const form = (fields: Record<string, string>) => GateForm.parse(fields);

describe("a gate form", () => {
  it("approve, reject and cancel become the CLI's gate decisions, recorded as by whom", () => {
    const f = form({ revision: "12", note: "ship it" });
    expect(gateIntent("approve", "todo_g", f, "alice")).toEqual({
      kind: "gate",
      gateId: "todo_g",
      decision: "approved",
      note: "by alice on loopgate serve: ship it",
    });
    expect(gateIntent("reject", "todo_g", f, "alice")).toMatchObject({ decision: "rejected" });
    expect(gateIntent("cancel", "todo_g", f, "alice")).toMatchObject({ decision: "cancelled" });
  });

  it("defer needs a machine-checkable condition, parsed as --until is", () => {
    expect(
      gateIntent("defer", "todo_g", form({ revision: "3", until: "todo:todo_crlf=done" }), "bob"),
    ).toEqual({
      kind: "gate_defer",
      gateId: "todo_g",
      until: { kind: "todo_status", todo_id: "todo_crlf", status: "done" },
      note: "by bob on loopgate serve",
    });
    expect(() => gateIntent("defer", "todo_g", form({ revision: "3" }), "bob")).toThrow(
      /needs a resume condition/,
    );
    expect(() => gateIntent("defer", "todo_g", form({ revision: "3", until: "whenever" }), "bob")).toThrow(
      /not a machine-readable resume condition/,
    );
  });

  it("the revision the form was rendered from is required and a whole number", () => {
    expect(form({ revision: "0" }).revision).toBe(0);
    for (const bad of [{}, { revision: "" }, { revision: "-1" }, { revision: "1.5" }, { revision: "x" }])
      expect(GateForm.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    expect(GateForm.safeParse({ revision: "1", note: "n".repeat(1501) }).success).toBe(false);
  });

  it("a note with nothing in it records who alone", () => {
    expect(boardNote("alice", "   ")).toBe("by alice on loopgate serve");
  });
});
