// On a terminal the CLI draws a live progress line with a timer; when the work is done the process must
// exit at once. Each command runs under util-linux `script`, which gives it a pseudo-terminal, so
// stderr.isTTY is true exactly as in a user's shell. A hang shows as the generous bound being reached.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, exampleDir, exampleTask, ROOT, removeTemps, tempDir } from "./cli.js";

afterAll(removeTemps);

const quote = (w: string) => `'${w.replace(/'/g, "'\\''")}'`;

/** Runs `node bin/loopgate.js ...args` on a pseudo-terminal; `hung` when it outlived `boundMs`. */
function onTerminal(args: readonly string[], boundMs = 90_000) {
  const command = [process.execPath, BIN, ...args].map(quote).join(" ");
  return new Promise<{ code: number | null; hung: boolean; output: string }>((resolve) => {
    // -e: script exits with the command's exit code; -q: no banner; the typescript goes to /dev/null.
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      output += d;
    });
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    }, boundMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, hung, output });
    });
  });
}

describe.concurrent("on a terminal, every command exits when its work is done", () => {
  it("run --model (the built-in agent)", async () => {
    const r = await onTerminal([
      "run",
      exampleTask("js-slugify"),
      "--model",
      `scripted:${join(exampleDir("js-slugify"), "agent/honest.yaml")}`,
      "--store",
      tempDir(),
    ]);
    expect(r.hung, r.output.slice(-2000)).toBe(false);
    expect(r.code).toBe(0);
    expect(r.output).toContain("SUCCESS");
    // The live line was drawn (this really ran on a terminal) and the verdict came after it.
    expect(r.output).toContain("\x1b[2K");
  });

  it("run --builder (an external command)", async () => {
    const r = await onTerminal([
      "run",
      exampleTask("js-slugify"),
      "--builder",
      `${join(exampleDir("js-slugify"), "builders/honest.sh")} {required_fix}`,
      "--store",
      tempDir(),
    ]);
    expect(r.hung, r.output.slice(-2000)).toBe(false);
    expect(r.code).toBe(0);
    expect(r.output).toContain("SUCCESS after 2 attempts");
  });

  // The quickest example (its gates are two node test runs; sh-csvcol's differential gate takes longest).
  it("demo (one example: the whole demo is demo-help's test)", { timeout: 200_000 }, async () => {
    const r = await onTerminal(["demo", "js-slugify", "--store", tempDir()], 180_000);
    expect(r.hung, r.output.slice(-2000)).toBe(false);
    expect(r.code).toBe(0);
    expect(r.output).toContain("4/4 runs ended as expected");
    expect(r.output).toContain("js-slugify");
    expect(r.output).not.toContain("sh-csvcol");
  });

  it("exp run", async () => {
    const dir = tempDir();
    const manifest = join(dir, "exp.yaml");
    writeFileSync(
      manifest,
      [
        "name: terminal-exit",
        "seeds: 1",
        "arms:",
        "  - { id: noop, builder: { noop: true } }",
        "  - { id: agent, builder: { model: 'scripted:" +
          join(exampleDir("js-slugify"), "agent/honest.yaml") +
          "' } }",
        "tasks:",
        `  - { id: slugify, task: ${exampleTask("js-slugify")} }`,
        "",
      ].join("\n"),
    );
    const r = await onTerminal(["exp", "run", manifest, "--store", join(dir, "store")]);
    expect(r.hung, r.output.slice(-2000)).toBe(false);
    expect(r.code).toBe(0);
  });
});
