// Flag parsing: every error names the flag, suggests the closest known one, and checks values.
import { describe, expect, it } from "vitest";
import { checkApplies, parseArgv } from "../../src/cli/args.js";
import { COMMANDS } from "../../src/cli/commands-table.js";
import { FLAGS } from "../../src/cli/flags.js";
import { closest, editDistance } from "../../src/cli/suggest.js";

const fails = (argv: string[]) => {
  try {
    parseArgv(argv);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`parsed without error: ${argv.join(" ")}`);
};

describe("edit distance and suggestions", () => {
  it("counts insertions, deletions, substitutions and adjacent swaps as one edit each", () => {
    expect(editDistance("max-attempts", "max-attempts")).toBe(0);
    expect(editDistance("max-atempts", "max-attempts")).toBe(1); // one letter missing
    expect(editDistance("josn", "json")).toBe(1); // a swap
    expect(editDistance("stroe", "store")).toBe(1);
    expect(editDistance("kitten", "sitting")).toBe(3); // the textbook pair
    expect(editDistance("", "abc")).toBe(3);
  });

  it("suggests only what is close enough to be a typo", () => {
    const flags = Object.keys(FLAGS).map((n) => `--${n}`);
    expect(closest("--max-atempts", flags)).toBe("--max-attempts");
    expect(closest("--josn", flags)).toBe("--json");
    expect(closest("--limt", flags)).toBe("--limit");
    expect(closest("--frobnicate", flags)).toBeUndefined();
    expect(closest("--zzz", flags)).toBeUndefined();
  });
});

describe("parseArgv", () => {
  it("takes --flag value, --flag=value, switches, repeatable flags, -h and `--`", () => {
    const r = parseArgv([
      "run",
      "t.yaml",
      "--builder",
      "echo {prompt}",
      "--max-attempts=3",
      "--json",
      "--builder-env",
      "A",
      "--builder-env=B",
      "-h",
      "--",
      "--not-a-flag",
    ]);
    expect(r.positionals).toEqual(["run", "t.yaml", "--not-a-flag"]);
    expect(r.flags).toEqual({
      builder: "echo {prompt}",
      "max-attempts": "3",
      json: true,
      "builder-env": ["A", "B"],
      help: true,
    });
    expect(r.given).toEqual(["builder", "max-attempts", "json", "builder-env", "builder-env", "help"]);
  });

  it("an unknown flag is named, with the closest known flag", () => {
    const m = fails(["run", "t.yaml", "--max-atempts", "2"]);
    expect(m).toContain("--max-atempts");
    expect(m).toContain("did you mean --max-attempts?");
    expect(fails(["--frobnicate"])).not.toContain("did you mean");
    expect(fails(["-x"])).toContain("-x: unknown flag");
  });

  it("a negative number reaches the value check, which names the flag and says what it wants", () => {
    const m = fails(["run", "t.yaml", "--max-attempts", "-1"]);
    expect(m).toMatch(/^--max-attempts: expected a positive whole number/);
    expect(m).toContain('"-1"');
    expect(m).not.toContain("ambiguous");
  });

  it("every counted flag refuses what is not a positive whole number", () => {
    for (const flag of ["--max-attempts", "--max-turns", "--limit", "--days"])
      for (const bad of ["0", "-3", "1.5", "two", "", " "])
        expect(fails([flag, bad]), `${flag} ${JSON.stringify(bad)}`).toMatch(
          new RegExp(`^${flag}: expected a positive whole number`),
        );
    expect(parseArgv(["--limit", "7"]).flags.limit).toBe("7");
    expect(fails(["--keep", "-1"])).toMatch(/^--keep: expected a whole number \(0 or more\)/);
    expect(parseArgv(["--keep", "0"]).flags.keep).toBe("0");
    expect(fails(["--max-cost", "0"])).toMatch(/^--max-cost: expected a number greater than 0/);
    expect(parseArgv(["--max-cost", "0.5"]).flags["max-cost"]).toBe("0.5");
  });

  it("a missing value, a value given to a switch and a flag given twice are refused, naming the flag", () => {
    expect(fails(["--store"])).toMatch(/^--store: needs a value \(DIR\)/);
    expect(fails(["--builder", "--noop"])).toMatch(/^--builder: needs a value.*--builder=--noop/);
    expect(parseArgv(["--builder=--noop"]).flags.builder).toBe("--noop");
    expect(fails(["--json=yes"])).toMatch(/^--json: is a switch/);
    expect(fails(["--store", "a", "--store", "b"])).toMatch(/^--store: given twice/);
  });
});

describe("checkApplies", () => {
  it("refuses a flag the command does not take, suggesting its own closest flag", () => {
    const runs = COMMANDS.find((c) => c.name === "runs");
    expect(() => checkApplies("runs", ["limit", "json"], runs?.flags ?? [])).not.toThrow();
    expect(() => checkApplies("runs", ["model"], runs?.flags ?? [])).toThrow(
      /^--model does not apply to loopgate runs/,
    );
    expect(() => checkApplies("runs", ["lmit" as never], ["store", "limit"])).toThrow(
      /did you mean --limit\?/,
    );
    expect(() => checkApplies("verify", ["case"], ["workspace"], () => ["run"])).toThrow(
      /^--case applies only to loopgate run, not to loopgate verify/,
    );
  });

  it("every flag a command lists is declared, and every declared flag is used by some command", () => {
    const used = new Set(COMMANDS.flatMap((c) => c.flags));
    for (const f of used) expect(Object.keys(FLAGS)).toContain(f);
    for (const f of Object.keys(FLAGS))
      if (f !== "help" && f !== "version") expect(used.has(f as keyof typeof FLAGS), f).toBe(true);
  });
});
