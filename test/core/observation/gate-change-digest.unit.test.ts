import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { changePlanDigest, changePlanMismatch } from "../../../src/core/observation/gate-change-digest.js";
import { planGateChanges } from "../../../src/core/observation/gate-change-plan.js";
import { createObservation, type ObservedEntry } from "../../../src/core/observation/observation.js";

const HEX = /^[0-9a-f]{64}$/;
const hash = (c: string) => c.repeat(64);
const file = (path: string, h = hash("a"), mode = 0o644): ObservedEntry => ({
  path,
  type: "file",
  mode,
  size: 1,
  hash: h,
});
const dir = (path: string): ObservedEntry => ({ path, type: "dir", mode: 0o755, size: 0, hash: "" });
const link = (path: string, target: string): ObservedEntry => ({
  path,
  type: "symlink",
  mode: 0o777,
  size: target.length,
  hash: hash("c"),
  target,
});

/** Distinct paths, each a carried entry of some kind, and distinct dropped paths apart from them. */
const planArb = fc
  .uniqueArray(fc.stringMatching(/^[a-z]{1,3}(\/[a-z]{1,3}){0,2}$/), { minLength: 1, maxLength: 12 })
  .chain((paths) =>
    fc.record({
      carry: fc.tuple(
        ...paths.map((p) =>
          fc.oneof(
            fc
              .tuple(fc.constantFrom("a", "b", "c"), fc.constantFrom(0o644, 0o755))
              .map(([h, m]) => file(p, hash(h), m)),
            fc.constant(dir(p)),
            fc.constantFrom("x", "../y").map((t) => link(p, t)),
          ),
        ),
      ),
      drop: fc.uniqueArray(fc.stringMatching(/^drop\/[a-z]{1,3}$/), { maxLength: 5 }),
    }),
  );

describe("changePlanDigest", () => {
  it("is a sha256 and the same for the same plan listed in any order", () => {
    fc.assert(
      fc.property(planArb, fc.infiniteStream(fc.integer()), (plan, seeds) => {
        const shuffle = <T>(xs: T[]) =>
          xs
            .map((x) => ({ x, k: seeds.next().value as number }))
            .sort((a, b) => a.k - b.k)
            .map(({ x }) => x);
        const digest = changePlanDigest(plan);
        expect(digest).toMatch(HEX);
        expect(changePlanDigest({ carry: shuffle([...plan.carry]), drop: shuffle([...plan.drop]) })).toBe(
          digest,
        );
      }),
    );
  });

  it("changes when a carried path's content, mode, type or link target changes", () => {
    fc.assert(
      fc.property(planArb, fc.nat(), (plan, pick) => {
        const i = pick % plan.carry.length;
        const e = plan.carry[i] as ObservedEntry;
        const variants: ObservedEntry[] =
          e.type === "file"
            ? [
                { ...e, hash: e.hash === hash("d") ? hash("e") : hash("d") },
                { ...e, mode: e.mode ^ 0o111 },
                dir(e.path),
              ]
            : e.type === "symlink"
              ? [{ ...e, target: `${e.target}z` }, file(e.path)]
              : [file(e.path), { ...e, mode: 0o700 }];
        const digest = changePlanDigest(plan);
        for (const v of variants) {
          const carry = plan.carry.map((x, j) => (j === i ? v : x));
          expect(changePlanDigest({ carry, drop: plan.drop }), JSON.stringify(v)).not.toBe(digest);
        }
      }),
    );
  });

  it("changes when a path is carried or dropped that was not, or is no longer", () => {
    const base = { carry: [file("src/a.js")], drop: ["old.js"] };
    const d = changePlanDigest(base);
    expect(changePlanDigest({ carry: [...base.carry, file("src/b.js")], drop: base.drop })).not.toBe(d);
    expect(changePlanDigest({ carry: [], drop: base.drop })).not.toBe(d);
    expect(changePlanDigest({ carry: base.carry, drop: [] })).not.toBe(d);
    expect(changePlanDigest({ carry: base.carry, drop: ["old.js", "gone.js"] })).not.toBe(d);
    // The same path carried is not the same path dropped.
    expect(changePlanDigest({ carry: [], drop: ["src/a.js", "old.js"] })).not.toBe(d);
    expect(changePlanDigest({ carry: [file("src/a2.js")], drop: base.drop })).not.toBe(d);
  });

  it("follows what planGateChanges carries: a change outside the deliverables leaves it alone", () => {
    const pristine = createObservation([dir("src"), file("src/a.js"), file("notes.md")]);
    const rules = { deliverables: ["src/**"], protected: [] };
    /** The digest of the plan after a builder left notes.md and src/a.js with these contents. */
    const digest = (notes: string, a: string) =>
      changePlanDigest(
        planGateChanges(
          pristine,
          createObservation([dir("src"), file("src/a.js", hash(a)), file("notes.md", hash(notes))]),
          rules,
        ),
      );
    expect(digest("b", "b")).toBe(digest("c", "b"));
    expect(digest("b", "b")).not.toBe(digest("b", "c"));
  });
});

describe("changePlanMismatch", () => {
  const d1 = hash("1");
  const d2 = hash("2");

  it("nothing recorded (a run from before the digest) or every digest equal: no refusal", () => {
    expect(changePlanMismatch([], d1)).toBeNull();
    expect(changePlanMismatch([{ gate_id: "unit" }, { gate_id: "lint" }], d1)).toBeNull();
    expect(
      changePlanMismatch(
        [
          { gate_id: "unit", change_plan_digest: d1 },
          { gate_id: "lint", change_plan_digest: d1 },
        ],
        d1,
      ),
    ).toBeNull();
  });

  it("one gate that saw another plan refuses, naming the gate and both digests", () => {
    const why = changePlanMismatch(
      [
        { gate_id: "unit", change_plan_digest: d1 },
        { gate_id: "lint", change_plan_digest: d2 },
      ],
      d1,
    );
    expect(why).toMatch(/^change plan mismatch: gate lint /);
    expect(why).toContain(d2);
    expect(why).toContain(d1);
  });
});
