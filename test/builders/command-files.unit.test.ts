import { describe, expect, it } from "vitest";
import { diagnoseStart } from "../../src/builders/command-builder.js";
import { checkPlaceholders, joinCommandLine, scriptIndex } from "../../src/builders/command-files.js";
import { splitCommandLine } from "../../src/builders/command-line.js";
import { InputError } from "../../src/core/kernel/errors.js";

const result = (exitCode: number | null, output: string, timedOut = false) => ({
  exitCode,
  signal: null,
  timedOut,
  durationMs: 5,
  output,
  infrastructure: null,
});

describe("checkPlaceholders", () => {
  it("accepts the four known placeholders inside words", () => {
    expect(() =>
      checkPlaceholders(["agent", "--msg={prompt}", "{prompt_file}", "{required_fix}", "{workspace}/x"]),
    ).not.toThrow();
  });

  it("refuses a typo ({promt}), naming it and the known ones", () => {
    let error: unknown;
    try {
      checkPlaceholders(["claude", "-p", "{promt}"]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    const message = (error as Error).message;
    expect(message).toContain("{promt}");
    for (const k of ["{prompt}", "{prompt_file}", "{required_fix}", "{workspace}"])
      expect(message).toContain(k);
  });

  it("leaves braces that are no placeholder alone (JSON, shell ${VAR})", () => {
    expect(() => checkPlaceholders(["sh", "-c", 'echo {"a":1} ${HOME} {}'])).not.toThrow();
  });
});

describe("scriptIndex", () => {
  it.each([
    [["bash", "./x.sh"], 1],
    [["/usr/bin/python3", "-u", "solve.py", "{prompt}"], 2],
    [["node", "--", "agent.js"], 2],
    [["sh", "-c", "echo hi"], null],
    [["node", "-e", "1"], null],
    [["python3", "-m", "agent"], null],
    [["./agent.sh", "x.sh"], null],
    [["claude", "-p", "{prompt}"], null],
  ])("%j → %s", (words, index) => {
    expect(scriptIndex(words)).toBe(index);
  });
});

describe("joinCommandLine", () => {
  it("round-trips through splitCommandLine", () => {
    const words = ["/a b/agent.sh", "--msg={prompt}", "it's", "", "plain"];
    expect(splitCommandLine(joinCommandLine(words))).toEqual(words);
  });
});

describe("diagnoseStart", () => {
  it("exit 127 is a builder that never started, with the file it missed and the fix", () => {
    const why = diagnoseStart(["bash", "./a.sh"], result(127, "bash: ./a.sh: No such file or directory\n"));
    expect(why).toContain("could not start");
    expect(why).toContain("missing: ./a.sh");
    expect(why).toContain("--builder-mount");
  });

  it("python's and node's could-not-open messages for the script count too", () => {
    expect(
      diagnoseStart(
        ["python3", "s.py"],
        result(2, "python3: can't open file '/w/s.py': [Errno 2] No such file or directory\n"),
      ),
    ).toContain("could not open its script s.py");
    expect(
      diagnoseStart(["node", "a.js"], result(1, "Error: Cannot find module '/w/a.js'\n    at ...")),
    ).toContain("missing: /w/a.js");
  });

  it("an ordinary failure, a success, a timeout or a missing file other than the script is not", () => {
    expect(diagnoseStart(["bash", "./a.sh"], result(1, "tests failed\n"))).toBeNull();
    expect(diagnoseStart(["bash", "./a.sh"], result(0, ""))).toBeNull();
    expect(diagnoseStart(["bash", "./a.sh"], result(null, "", true))).toBeNull();
    expect(
      diagnoseStart(
        ["python3", "s.py"],
        result(1, "FileNotFoundError: No such file or directory: 'data.csv'"),
      ),
    ).toBeNull();
  });
});
