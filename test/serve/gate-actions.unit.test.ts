import { describe, expect, it } from "vitest";
import { GateForm, gateIntent } from "../../src/serve/gate-actions.js";

const form = (fields: Record<string, string>) => GateForm.parse(fields);

describe("a gate form", () => {
  it("approve, reject and cancel become the CLI's gate decisions, the note the person's own", () => {
    const f = form({ revision: "12", note: "ship it" });
    expect(gateIntent("approve", "todo_g", f)).toEqual({
      kind: "gate",
      gateId: "todo_g",
      decision: "approved",
      note: "ship it",
    });
    expect(gateIntent("reject", "todo_g", f)).toMatchObject({ decision: "rejected" });
    expect(gateIntent("cancel", "todo_g", f)).toMatchObject({ decision: "cancelled" });
  });

  it("defer needs a machine-checkable condition, parsed as --until is", () => {
    expect(gateIntent("defer", "todo_g", form({ revision: "3", until: "todo:todo_crlf=done" }))).toEqual({
      kind: "gate_defer",
      gateId: "todo_g",
      until: { kind: "todo_status", todo_id: "todo_crlf", status: "done" },
      note: "",
    });
    expect(() => gateIntent("defer", "todo_g", form({ revision: "3" }))).toThrow(/needs a resume condition/);
    expect(() => gateIntent("defer", "todo_g", form({ revision: "3", until: "whenever" }))).toThrow(
      /not a machine-readable resume condition/,
    );
  });

  it("the revision the form was rendered from is required and a whole number", () => {
    expect(form({ revision: "0" }).revision).toBe(0);
    for (const bad of [{}, { revision: "" }, { revision: "-1" }, { revision: "1.5" }, { revision: "x" }])
      expect(GateForm.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    expect(GateForm.safeParse({ revision: "1", note: "n".repeat(1501) }).success).toBe(false);
  });

  it("a note of spaces records no note (who decided is the write's actor, not note text)", () => {
    expect(gateIntent("approve", "todo_g", form({ revision: "1", note: "   " }))).toMatchObject({ note: "" });
  });
});
