import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BuilderContext } from "../../src/builders/builder.js";
import { commandBuilder, noopBuilder, oracleBuilder } from "../../src/builders/command-builder.js";

let root: string;
let ws: string;
let agentDir: string;
let promptFile: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "lg-bld-"));
  ws = join(root, "workspace");
  agentDir = join(root, "agent");
  await mkdir(ws);
  await mkdir(agentDir);
  await mkdir(join(root, "prompt-1"));
  await mkdir(join(root, "heldout"));
  promptFile = join(root, "prompt-1", "prompt.md");
  await writeFile(promptFile, "PROMPT FILE BODY\n");
  await writeFile(join(ws, "src.txt"), "original\n");
  await writeFile(join(agentDir, "sibling-secret.txt"), "agent sibling secret");
  await writeFile(join(root, "heldout", "hidden.txt"), "held-out answer");
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function ctx(over: Partial<BuilderContext> = {}): BuilderContext {
  return {
    runId: "run-b1",
    attempt: 2,
    workspace: ws,
    prompt: "fix it",
    promptFile,
    requiredFix: null,
    sandbox: "bubblewrap",
    allowEnv: [],
    mounts: [],
    network: false,
    timeoutMs: 15_000,
    ...over,
  };
}

async function script(name: string, body: string, dir = agentDir): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, `#!/bin/sh\n${body}\n`);
  await chmod(p, 0o755);
  return p;
}

describe("commandBuilder", () => {
  it("runs in the workspace with {prompt}, {prompt_file}, {required_fix}, {workspace} substituted", async () => {
    const agent = await script("agent.sh", 'pwd > got.txt; printf "%s\\n" "$@" >> got.txt');
    const prompt = `Fix "slugify" — don't break 'x' | now`;
    const b = commandBuilder(`${agent} --msg={prompt} {prompt_file} {required_fix} {workspace}`);
    const r = await b.run(ctx({ prompt, requiredFix: "make test_unicode pass" }));
    expect(r.infrastructure).toBeNull();
    expect(r.exitCode).toBe(0);
    const got = (await readFile(join(ws, "got.txt"), "utf8")).split("\n");
    expect(got).toEqual([ws, `--msg=${prompt}`, promptFile, "make test_unicode pass", ws, ""]);
  });

  it("gives an empty {required_fix} on the first attempt", async () => {
    const agent = await script("agent.sh", 'printf "[%s]" "$@" > got.txt');
    await commandBuilder(`${agent} {required_fix}`).run(ctx());
    expect(await readFile(join(ws, "got.txt"), "utf8")).toBe("[]");
  });

  it("the prompt file is readable and read-only", async () => {
    const agent = await script(
      "agent.sh",
      'cat "$1" > seen.txt; cat "$LOOPGATE_PROMPT_FILE" >> seen.txt; ' +
        'if echo tampered >> "$1" 2>/dev/null; then echo WROTE > wrote.txt; fi',
    );
    const r = await commandBuilder(`${agent} {prompt_file}`).run(ctx());
    expect(r.exitCode).toBe(0);
    expect(await readFile(join(ws, "seen.txt"), "utf8")).toBe("PROMPT FILE BODY\nPROMPT FILE BODY\n");
    expect(await readdir(ws)).not.toContain("wrote.txt");
    expect(await readFile(promptFile, "utf8")).toBe("PROMPT FILE BODY\n");
  });

  it("a builder script outside the system dirs is mounted read-only, and its siblings are not visible", async () => {
    const agent = await script(
      "agent.sh",
      [
        'if echo "# tampered" >> "$0" 2>/dev/null; then echo SELF-WRITE >> report.txt; fi',
        'if test -e "$(dirname "$0")/sibling-secret.txt"; then echo SIBLING >> report.txt; fi',
        `if test -e ${root}/heldout/hidden.txt; then echo HELDOUT >> report.txt; fi`,
        'ls -A "$(dirname "$0")" > listing.txt',
        "echo done >> report.txt",
      ].join("\n"),
    );
    const before = await readFile(agent, "utf8");
    const r = await commandBuilder(agent).run(ctx());
    expect(r.exitCode).toBe(0);
    expect(await readFile(join(ws, "report.txt"), "utf8")).toBe("done\n");
    expect(await readFile(join(ws, "listing.txt"), "utf8")).toBe("agent.sh\n");
    expect(await readFile(agent, "utf8")).toBe(before);
  });

  it("an argv[0] that is not found sets infrastructure and runs nothing", async () => {
    const r = await commandBuilder("lg-no-such-agent-xyz --go {prompt}").run(ctx());
    expect(r.infrastructure).toContain("lg-no-such-agent-xyz");
    expect(r.exitCode).toBeNull();
    expect(r.durationMs).toBe(0);
    expect(await readdir(ws)).toEqual(["src.txt"]);
  });

  it("a builder script that is not executable is not found either, and does not run", async () => {
    const agent = await script("agent.sh", "echo ran > ran.txt");
    await chmod(agent, 0o644);
    const r = await commandBuilder(agent).run(ctx());
    expect(r.infrastructure).toContain(agent);
    expect(await readdir(ws)).toEqual(["src.txt"]);
  });

  describe("environment", () => {
    beforeEach(() => {
      process.env.LG_BUILDER_ALLOWED = "allowed-9d2";
      process.env.LG_BUILDER_SECRET = "secret-5b7e";
    });
    afterEach(() => {
      delete process.env.LG_BUILDER_ALLOWED;
      delete process.env.LG_BUILDER_SECRET;
    });

    it("passes only the --builder-env names; the rest of the caller's environment reaches neither the agent nor PID 1", async () => {
      const b = commandBuilder('sh -c \'env > env.txt; tr "\\0" "\\n" < /proc/1/environ > pid1.txt\'');
      const r = await b.run(ctx({ allowEnv: ["LG_BUILDER_ALLOWED"] }));
      expect(r.exitCode).toBe(0);
      const env = await readFile(join(ws, "env.txt"), "utf8");
      const pid1 = await readFile(join(ws, "pid1.txt"), "utf8");
      expect(env).toContain("LG_BUILDER_ALLOWED=allowed-9d2\n");
      expect(env).toContain("LOOPGATE_RUN_ID=run-b1\n");
      expect(env).toContain("LOOPGATE_ATTEMPT=2\n");
      expect(env).toContain("HOME=/tmp\n");
      for (const text of [env, pid1]) {
        expect(text).not.toContain("secret-5b7e");
        expect(text).not.toContain("LG_BUILDER_SECRET");
      }
      expect(pid1).toContain("LG_BUILDER_ALLOWED=allowed-9d2");
    });

    it("without the allowlist, not even that name passes", async () => {
      await commandBuilder("sh -c 'env > env.txt'").run(ctx());
      expect(await readFile(join(ws, "env.txt"), "utf8")).not.toContain("allowed-9d2");
    });
  });

  it("is killed at its timeout, and says so", async () => {
    const t0 = performance.now();
    const r = await commandBuilder("sleep 30").run(ctx({ timeoutMs: 500 }));
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it("reports the builder's exit code and output", async () => {
    const r = await commandBuilder("sh -c 'echo to-out; echo to-err >&2; exit 4'").run(ctx());
    expect(r.exitCode).toBe(4);
    expect(r.output).toContain("to-out");
    expect(r.output).toContain("to-err");
  });

  it("a shell operator in the command line is refused when the builder is made", () => {
    expect(() => commandBuilder("claude -p {prompt} | tee log")).toThrow(/shell operator/);
  });
});

describe("noopBuilder", () => {
  it("changes nothing and succeeds", async () => {
    const r = await noopBuilder().run(ctx());
    expect(r).toEqual({
      exitCode: 0,
      signal: null,
      timedOut: false,
      durationMs: 0,
      output: "",
      infrastructure: null,
    });
    expect(await readdir(ws)).toEqual(["src.txt"]);
    expect(await readFile(join(ws, "src.txt"), "utf8")).toBe("original\n");
    expect(noopBuilder().descriptor.kind).toBe("noop");
  });
});

describe("oracleBuilder", () => {
  it("runs the oracle in the workspace, and the oracle's folder stays hidden", async () => {
    const taskDir = join(root, "task");
    await mkdir(taskDir);
    await writeFile(join(taskDir, "expected-output.txt"), "task secret");
    const oracle = await script(
      "solution.sh",
      `echo fixed > src.txt; if test -e ${taskDir}/expected-output.txt; then echo LEAK > leak.txt; fi`,
      taskDir,
    );
    const b = oracleBuilder(oracle);
    expect(b.descriptor).toEqual({ kind: "oracle", command: oracle });
    const r = await b.run(ctx());
    expect(r.exitCode).toBe(0);
    expect(r.infrastructure).toBeNull();
    expect(await readFile(join(ws, "src.txt"), "utf8")).toBe("fixed\n");
    expect(await readdir(ws)).toEqual(["src.txt"]);
  });
});
