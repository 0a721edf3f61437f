import { describe, expect, it } from "vitest";
import { onlyArms } from "../../../bench/forgery/forgery.js";

const ARMS = [
  { id: "trust-claim", from: "loopgate" },
  { id: "in-workspace-tests" },
  { id: "overlay" },
  { id: "loopgate" },
];

describe("onlyArms: the forgery benchmark restricted to some policies", () => {
  it("keeps the named arms, in the manifest's order", () => {
    expect(onlyArms(ARMS, ["loopgate", "overlay"]).map((a) => a.id)).toEqual(["overlay", "loopgate"]);
  });
  it("keeps the arm a kept arm is derived from", () => {
    expect(onlyArms(ARMS, ["trust-claim"]).map((a) => a.id)).toEqual(["trust-claim", "loopgate"]);
  });
  it("refuses a policy the manifest does not have, naming it", () => {
    expect(() => onlyArms(ARMS, ["loopgate", "nope"])).toThrow(/no policy nope; known: trust-claim/);
  });
});
