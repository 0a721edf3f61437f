// Who a person's goal write is recorded for: --as NAME, else $LOOPGATE_ACTOR, else the OS user, else
// nobody named. A bad name given on purpose is refused naming where it came from; the OS user's is
// left out when it is no actor's name.
import { describe, expect, it } from "vitest";
import { resolveActor } from "../../../../src/cli/commands/goal/goal-actor.js";
import { InputError } from "../../../../src/core/kernel/errors.js";

const user = (name: string | undefined) => () => name;

describe("resolveActor", () => {
  it("the flag first, then the variable, then the OS user", () => {
    expect(resolveActor({ flag: "ana", env: "bob", osUser: user("carol") })).toBe("ana");
    expect(resolveActor({ flag: undefined, env: "bob", osUser: user("carol") })).toBe("bob");
    expect(resolveActor({ flag: undefined, env: undefined, osUser: user("carol") })).toBe("carol");
    expect(resolveActor({ flag: undefined, env: "", osUser: user("carol") })).toBe("carol");
  });

  it("no name anywhere: none (unknown)", () => {
    expect(resolveActor({ flag: undefined, env: undefined, osUser: user(undefined) })).toBeUndefined();
  });

  it("an OS user name that is no actor's is left out, never cut to fit", () => {
    expect(resolveActor({ flag: undefined, env: undefined, osUser: user("x".repeat(65)) })).toBeUndefined();
    expect(resolveActor({ flag: undefined, env: undefined, osUser: user("a\nb") })).toBeUndefined();
  });

  it("a bad --as is bad input naming --as; a bad $LOOPGATE_ACTOR names the variable", () => {
    for (const bad of ["", "a\nb", "x".repeat(65), " ana"]) {
      const e = (() => {
        try {
          resolveActor({ flag: bad, env: "bob", osUser: user("carol") });
        } catch (x) {
          return x;
        }
      })();
      expect(e, JSON.stringify(bad)).toBeInstanceOf(InputError);
      expect((e as InputError).where).toBe("--as");
    }
    expect(() => resolveActor({ flag: undefined, env: "a\tb", osUser: user("carol") })).toThrow(
      /^\$LOOPGATE_ACTOR: .*not an actor's name/,
    );
  });
});
