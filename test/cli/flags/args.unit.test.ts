// Flag parsing: every error names the flag, suggests the closest known one, and checks values.
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../../src/cli/commands-table.js";
import { parseArgv } from "../../../src/cli/flags/args.js";
import { parseCommandFlags } from "../../../src/cli/flags/flag-values.js";
import { FLAGS, type FlagName, GLOBAL_FLAGS } from "../../../src/cli/flags/flags.js";
import { closest, editDistance } from "../../../src/cli/flags/suggest.js";

/** Parses argv and checks its flags as `command` would (by default one that takes every flag). */
const parse = (argv: string[], command?: string) => {
  const { flags, given } = parseArgv(argv);
  const spec = COMMANDS.find((c) => c.name === command);
  const accepted = spec ? [...spec.flags, ...GLOBAL_FLAGS] : (Object.keys(FLAGS) as FlagName[]);
  const takers = (f: FlagName) => COMMANDS.filter((c) => c.flags.includes(f)).map((c) => c.name);
  return parseCommandFlags(command ?? "any", flags, given, accepted, takers);
};

const fails = (argv: string[], command?: string) => {
  try {
    parse(argv, command);
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
    expect(parse(["--limit", "7"]).limit).toBe(7);
    expect(fails(["--keep", "-1"])).toMatch(/^--keep: expected a whole number \(0 or more\)/);
    expect(parse(["--keep", "0"]).keep).toBe(0);
    expect(fails(["--max-cost", "0"])).toMatch(/^--max-cost: expected a number greater than 0/);
    expect(parse(["--max-cost", "0.5"])["max-cost"]).toBe(0.5);
  });

  it("a value check names the flag and the command; a flag's own bound is checked too", () => {
    expect(fails(["--limit", "0"], "runs")).toBe(
      '--limit: expected a positive whole number (1 or more), got "0" (loopgate runs)',
    );
    expect(fails(["t.yaml", "--noop", "--max-attempts", "101"], "run")).toBe(
      '--max-attempts: expected at most 100, got "101" (loopgate run)',
    );
    expect(parse(["t.yaml", "--noop", "--max-attempts", "100"], "run")["max-attempts"]).toBe(100);
  });

  it("a missing value, a value given to a switch and a flag given twice are refused, naming the flag", () => {
    expect(fails(["--store"])).toMatch(/^--store: needs a value \(DIR\)/);
    expect(fails(["--builder", "--noop"])).toMatch(/^--builder: needs a value.*--builder=--noop/);
    expect(parseArgv(["--builder=--noop"]).flags.builder).toBe("--noop");
    expect(fails(["--json=yes"])).toMatch(/^--json: is a switch/);
    expect(fails(["--store", "a", "--store", "b"])).toMatch(/^--store: given twice/);
  });
});

describe("each command's flag schema", () => {
  it("refuses a flag the command does not take, naming the flag, the command and who takes it", () => {
    expect(parse(["--limit", "3", "--json"], "runs")).toEqual({ limit: 3, json: true });
    expect(fails(["--model", "x"], "runs")).toBe(
      "--model applies only to loopgate run, submit, goal, scheduler, todo, not to loopgate runs; see loopgate runs --help",
    );
    expect(fails(["t.yaml", "--case", "c.yaml"], "verify")).toMatch(
      /^--case applies only to loopgate run, not to loopgate verify/,
    );
    expect(fails(["--lmit" as never], "runs")).toContain("unknown flag");
    expect(() => parseCommandFlags("runs", { model: "x" }, ["model"], ["store", "limit"])).toThrow(
      /^--model does not apply to loopgate runs/,
    );
  });

  it("suggests the command's own closest flag", () => {
    expect(fails(["--limt" as never], "status")).toContain("did you mean --limit?");
    expect(() =>
      parseCommandFlags("runs", { lmit: "3" } as never, ["lmit" as never], ["store", "limit"]),
    ).toThrow(/did you mean --limit\?/);
  });

  it("the first foreign flag in the order written is the one named, before any value problem", () => {
    expect(fails(["--limit", "0", "--network", "--model", "x"], "runs")).toMatch(/^--network /);
  });

  it("every command refuses a flag of another command", () => {
    for (const c of COMMANDS)
      for (const f of Object.keys(FLAGS) as FlagName[]) {
        if (c.flags.includes(f) || GLOBAL_FLAGS.includes(f)) continue;
        const argv = FLAGS[f] && "value" in FLAGS[f] ? [`--${f}`, "1"] : [`--${f}`];
        expect(fails(argv, c.name), `${c.name} --${f}`).toMatch(
          new RegExp(`^--${f} .*loopgate ${c.name}\\b`),
        );
      }
  });

  it("every flag a command lists is declared, and every declared flag is used by some command", () => {
    const used = new Set(COMMANDS.flatMap((c) => c.flags));
    for (const f of used) expect(Object.keys(FLAGS)).toContain(f);
    for (const f of Object.keys(FLAGS))
      if (f !== "help" && f !== "version") expect(used.has(f as keyof typeof FLAGS), f).toBe(true);
  });
});
