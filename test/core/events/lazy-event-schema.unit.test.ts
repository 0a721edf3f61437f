import { describe, expect, it } from "vitest";
import { z } from "zod";
import { EventMeta, eventAreas, eventTypes, LoopgateEvent } from "../../../src/core/events/loopgate-event.js";
import { declareEvent } from "../../../src/core/kernel/event-area.js";
import { assortedEvents } from "../../store/event-fixtures.js";

// LoopgateEvent validates an input of a known type with that type's variant alone, and builds the whole
// union only for anything else. The reference here is the union itself, built in the test from the
// declarations as the log's schema always was: both must answer every input alike, issue for issue.
const declarations = Object.assign({}, ...Object.values(eventAreas)) as Record<
  string,
  { schema: z.ZodObject }
>;
const reference = z.discriminatedUnion(
  "type",
  eventTypes.map((type) =>
    z.object({
      id: z.string().min(1).max(128),
      type: z.literal(type),
      data: declarations[type]?.schema as z.ZodObject,
      meta: EventMeta,
    }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]],
);

const valid = assortedEvents();
const [first] = valid as [(typeof valid)[number]];
const inputs: [string, unknown][] = [
  ...valid.map((e) => [`valid ${e.type}`, e] as [string, unknown]),
  ["a field of the wrong type", { ...first, data: { attempt: "one", required_fix: null } }],
  ["a field missing", { ...first, data: {} }],
  ["an id too long", { ...first, id: "x".repeat(129) }],
  ["a bad meta", { ...first, meta: { at: "yesterday", origin: "model", by: "ana" } }],
  ["an unknown type", { ...first, type: "run_done" }],
  ["a type that is an Object property", { ...first, type: "constructor" }],
  ["no type", { id: "e1", data: {}, meta: first.meta }],
  ["a numeric type", { ...first, type: 7 }],
  ["null", null],
  ["a string", "attempt_started"],
  ["an array", [first]],
];

describe("LoopgateEvent answers as the union of every type's variant", () => {
  for (const [name, input] of inputs)
    it(name, () => {
      const ours = LoopgateEvent.safeParse(input);
      const theirs = reference.safeParse(input);
      expect(ours.success).toBe(theirs.success);
      if (ours.success && theirs.success) expect(ours.data).toEqual(theirs.data);
      else expect(ours.error?.issues).toEqual(theirs.error?.issues);
      if (theirs.success) expect(LoopgateEvent.parse(input)).toEqual(theirs.data);
      else expect(() => LoopgateEvent.parse(input)).toThrow(z.ZodError);
    });

  it("the valid fixtures are valid and the others are not (the comparison above compares both kinds)", () => {
    expect(inputs.filter(([, i]) => reference.safeParse(i).success).length).toBe(valid.length);
  });
});

describe("declareEvent", () => {
  it("builds a type's schema the first time it is read, once", () => {
    let built = 0;
    const d = declareEvent(["runtime"], () => {
      built++;
      return z.object({ n: z.number() });
    });
    expect(built).toBe(0);
    expect(d.origin).toEqual(["runtime"]);
    const s = d.schema;
    expect(built).toBe(1);
    expect(d.schema).toBe(s);
    expect(built).toBe(1);
    expect(s.safeParse({ n: 1 }).success).toBe(true);
  });
});
