// Every flag a command accepts (its entry in the command table, which is what the flag check lets
// through) is in its `--help`: once in the Options, and in the synopsis unless the synopsis says
// `[options]`; and the synopsis names no flag the command refuses.
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../../src/cli/commands-table.js";
import { GLOBAL_FLAGS } from "../../../src/cli/flags/flags.js";
import { commandHelp } from "../../../src/cli/flags/help.js";

/** The sections of a command's help: its synopsis lines and the flag each Options line starts with. */
function sections(text: string): { synopsis: string[]; options: string[] } {
  const [usage = "", rest = ""] = text.split("\nOptions:\n");
  const synopsis = usage.split("\n").filter((l) => /^ {2}loopgate /.test(l));
  const options = rest
    .split("\n")
    .map((l) => /^ {2}(?:-\w, )?--([a-z][a-z-]*)/.exec(l)?.[1])
    .filter((x): x is string => x !== undefined);
  return { synopsis, options };
}

/** The `--flag` words of a synopsis line (`-- CLAUDE ARGS` is not a flag). */
const flagsIn = (line: string) =>
  [...line.matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)].map((m) => m[1] as string);

/** A synopsis that defers to the Options listed under it. */
const PLACEHOLDER = /\[(run )?options\]/;

describe("each command's --help names every flag it accepts", () => {
  for (const c of COMMANDS)
    it(`loopgate ${c.name} --help`, () => {
      const text = commandHelp(COMMANDS, c.name);
      const { synopsis, options } = sections(text);
      expect(synopsis.length, text).toBeGreaterThan(0);
      const accepted = [...new Set([...c.flags, ...GLOBAL_FLAGS])];
      // The Options: each accepted flag once, and nothing else.
      expect([...options].sort()).toEqual([...accepted].sort());
      // The synopsis: every flag the command takes, unless it says `[options]`.
      const named = new Set(synopsis.flatMap(flagsIn));
      if (!synopsis.some((l) => PLACEHOLDER.test(l))) {
        const missing = c.flags.filter((f) => !named.has(f));
        expect(missing, `not in the synopsis of loopgate ${c.name}:\n${synopsis.join("\n")}`).toEqual([]);
      }
      // …and no flag the command would refuse.
      const refused = [...named].filter((f) => !accepted.includes(f as never));
      expect(refused, `refused by loopgate ${c.name} but in its synopsis`).toEqual([]);
    });

  it("loopgate claude --help shows every flag of claude in its synopsis, before the arguments for Claude", () => {
    const claude = COMMANDS.find((c) => c.name === "claude");
    const line = sections(commandHelp(COMMANDS, "claude")).synopsis[0] ?? "";
    const own = line.slice(0, line.indexOf("[-- CLAUDE ARGS]"));
    for (const f of claude?.flags ?? []) expect(flagsIn(own), line).toContain(f);
    expect(claude?.flags).toEqual(
      expect.arrayContaining(["builder-mount", "unsafe-no-sandbox", "verbose", "follow"]),
    );
  });
});
