import { describe, expect, it } from "vitest";
import { splitCommandLine, substituteBuilderArgs } from "../../src/builders/command-line.js";
import { InputError } from "../../src/core/kernel/errors.js";

describe("splitCommandLine", () => {
  it.each([
    ["claude -p {prompt}", ["claude", "-p", "{prompt}"]],
    ["  a \t b\nc  ", ["a", "b", "c"]],
    ["a 'b c' \"d e\"", ["a", "b c", "d e"]],
    ["a'b'\"c\"d", ["abcd"]],
    ["a '' b", ["a", "", "b"]],
    ['""', [""]],
    ["a\\ b", ["a b"]],
    ["'it'\\''s'", ["it's"]],
    ['"say \\"hi\\" \\\\ \\$HOME \\`x\\`"', ['say "hi" \\ $HOME `x`']],
    // In double quotes a backslash before any other character stays (POSIX).
    ['"a\\nb"', ["a\\nb"]],
    // In single quotes nothing is special.
    ["'a\\b \"c\"'", ['a\\b "c"']],
    // Nothing is expanded: variables, globs, tildes, braces stay literal.
    ["echo $HOME ~ *.ts {prompt_file}", ["echo", "$HOME", "~", "*.ts", "{prompt_file}"]],
    ["codex exec --msg={prompt}", ["codex", "exec", "--msg={prompt}"]],
    // Operators are fine inside quotes or escaped.
    ["sh -c 'a | b && c; d > e'", ["sh", "-c", "a | b && c; d > e"]],
    ["echo \\|", ["echo", "|"]],
  ])("%j → %j", (line, words) => {
    expect(splitCommandLine(line)).toEqual(words);
  });

  it.each([
    ["a | b", "|"],
    ["a && b", "&"],
    ["a; b", ";"],
    ["a > out", ">"],
    ["a < in", "<"],
    ["a&", "&"],
    ["a 2>&1", ">"],
  ])("refuses the shell operator in %j", (line, op) => {
    let err: unknown;
    try {
      splitCommandLine(line);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).where).toBe("--builder");
    expect((err as Error).message).toContain(`contains ${op}, a shell operator`);
    expect((err as Error).message).toContain("sh -c");
  });

  it.each([
    ["a 'b", "unterminated ' quote"],
    ['a "b', 'unterminated " quote'],
    ["'", "unterminated ' quote"],
  ])("refuses an unterminated quote in %j", (line, message) => {
    expect(() => splitCommandLine(line)).toThrow(InputError);
    expect(() => splitCommandLine(line)).toThrow(message);
  });

  it.each(["", "   ", "\t\n"])("refuses an empty command %j", (line) => {
    expect(() => splitCommandLine(line)).toThrow(InputError);
    expect(() => splitCommandLine(line)).toThrow("the command is empty");
  });
});

describe("substituteBuilderArgs", () => {
  const values = {
    prompt: `Fix "slugify" — don't break 'x' | rm -rf / ; $(id)`,
    prompt_file: "/runs/r1/prompt-1/prompt.md",
    required_fix: "make test_unicode pass",
    workspace: "/runs/r1/workspace",
  };

  it("keeps a placeholder inside a word as one word, whatever the prompt holds", () => {
    const words = splitCommandLine("agent --msg={prompt} --file={prompt_file} {required_fix} -C {workspace}");
    expect(substituteBuilderArgs(words, values)).toEqual([
      "agent",
      `--msg=Fix "slugify" — don't break 'x' | rm -rf / ; $(id)`,
      "--file=/runs/r1/prompt-1/prompt.md",
      "make test_unicode pass",
      "-C",
      "/runs/r1/workspace",
    ]);
  });

  it("substitutes every occurrence, and more than one placeholder per word", () => {
    expect(substituteBuilderArgs(["{workspace}:{workspace}/{required_fix}"], values)).toEqual([
      "/runs/r1/workspace:/runs/r1/workspace/make test_unicode pass",
    ]);
  });

  it("does not substitute again inside a substituted value", () => {
    const out = substituteBuilderArgs(["{prompt}"], { ...values, prompt: "see {workspace} and {prompt}" });
    expect(out).toEqual(["see {workspace} and {prompt}"]);
  });

  it("leaves unknown braces alone and turns a missing value into an empty string", () => {
    expect(substituteBuilderArgs(["{model}", "{ prompt }", "x{required_fix}y"], { prompt: "p" })).toEqual([
      "{model}",
      "{ prompt }",
      "xy",
    ]);
  });
});
