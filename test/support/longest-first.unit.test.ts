import { describe, expect, it } from "vitest";
import { packed, type Timed } from "./longest-first.js";

const item = (name: string, wall: number, waits = false) => ({ name, wall, waits });
const names = (items: readonly (Timed & { name: string })[]) => items.map((i) => i.name);

describe("packed: the order files start in", () => {
  it("with no waiting file, is the order given (longest first)", () => {
    const items = [item("a", 50), item("b", 40), item("c", 30), item("d", 20), item("e", 10)];
    expect(names(packed(items, 3, 1))).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("three workers on two cores: never a second waiting file while a computing one is in line", () => {
    // Three long waiting files, as the suite's two goal tests and the worker takeover are.
    const items = [
      item("wait-1", 60, true),
      item("wait-2", 55, true),
      item("busy-1", 50),
      item("wait-3", 33, true),
      item("busy-2", 45),
      item("busy-3", 10),
    ];
    const order = names(packed(items, 3, 1));
    // wait-1, then the computing files; wait-2 when wait-1 ends (60 s), after busy-3 (done at 55 s).
    expect(order).toEqual(["wait-1", "busy-1", "busy-2", "busy-3", "wait-2", "wait-3"]);
    expect(new Set(order)).toEqual(new Set(names(items)));
  });

  it("with two waiting slots, two waiting files run beside one computing file", () => {
    const items = [item("w1", 60, true), item("w2", 55, true), item("w3", 50, true), item("b1", 40)];
    expect(names(packed(items, 3, 2))).toEqual(["w1", "w2", "b1", "w3"]);
  });

  it("when only waiting files are left, they go in order", () => {
    const items = [item("w1", 30, true), item("w2", 20, true), item("w3", 10, true), item("w4", 5, true)];
    expect(names(packed(items, 3, 1))).toEqual(["w1", "w2", "w3", "w4"]);
  });
});
