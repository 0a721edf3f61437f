// Every hint a run, verify, resume or status prints is a command that runs as printed: pasted into a
// shell in the same folder with the same environment, it starts loopgate (never "command not found") and
// names real ids (never a placeholder such as RUN). Under `npx loopgate` too.
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, type CliResult, removeTemps, show, tempDir, withLocalInstall } from "./cli.js";

afterAll(removeTemps);

/** A user's shell environment: nothing npm set, no store of the caller's; npm never goes online. */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith("npm_") && k !== "LOOPGATE_STORE") env[k] = v;
  return { ...env, npm_config_offline: "true", npm_config_update_notifier: "false" };
}

/** `bash -c LINE` in `cwd`; `onErr` sees stderr as it comes (and may kill the child). */
function bash(
  line: string,
  cwd: string,
  onErr?: (all: string, child: ReturnType<typeof spawn>) => void,
): Promise<CliResult> {
  return new Promise((res, rej) => {
    const child = spawn("bash", ["-c", line], { cwd, env: userEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      onErr?.(stderr, child);
    });
    child.on("error", rej);
    child.on("close", (code, signal) => res({ code, signal, stdout, stderr }));
  });
}

// greeting.txt must say hi; the gate prints a long log so that the "whole log" pointer is printed too.
const GATE = `for i in 1 2 3 4 5 6 7 8 9; do echo "ok $i - line"; done; grep -qx hi greeting.txt || { echo "not ok 10 - greeting is not hi"; exit 1; }`;

/** A user's project folder with a task in a subfolder (task/task.yaml, task/repo, task/solution.sh). */
function project(): string {
  const dir = tempDir("loopgate-e2e-hints-");
  mkdirSync(join(dir, "task", "repo"), { recursive: true });
  writeFileSync(join(dir, "task", "repo", "greeting.txt"), "hello\n");
  writeFileSync(join(dir, "task", "solution.sh"), "#!/bin/sh\necho hi > greeting.txt\n");
  chmodSync(join(dir, "task", "solution.sh"), 0o755);
  writeFileSync(
    join(dir, "task", "task.yaml"),
    [
      "id: greeting",
      "prompt: Make greeting.txt say hi.",
      "workspace: ./repo",
      "gates:",
      `  - { id: visible-tests, run: ["sh", "-c", ${JSON.stringify(GATE)}], timeout: 20s }`,
      "budget: { attempts: 1 }",
      "oracle: ./solution.sh",
      "",
    ].join("\n"),
  );
  return dir;
}

const HINT = /(?:audit trail|continue it(?: with)?|the whole log|evidence|next): (.+?)\s*$/;
const PLACEHOLDER = /\b(?:RUN|JOB|GOAL|ID|TASK|TODO|FILE|DIR)\b/;

/** Every hint in what a command printed (stdout and stderr), as the user would copy it. */
function hintsIn(r: CliResult): string[] {
  return `${r.stdout}\n${r.stderr}`
    .split("\n")
    .map((l) => HINT.exec(l)?.[1])
    .filter((h): h is string => h !== undefined);
}

/** Pastes each hint in `cwd` and checks it ran loopgate on the run `runId`. */
async function pasteAll(hints: string[], cwd: string, me: string, runId: string): Promise<void> {
  expect(hints.length).toBeGreaterThan(0);
  for (const h of hints) {
    expect(h.startsWith(`${me} `), `hint ${JSON.stringify(h)} starts with ${me}`).toBe(true);
    expect(h, `placeholder in ${h}`).not.toMatch(PLACEHOLDER);
    expect(h).toContain(runId);
    const r = await bash(h, cwd);
    expect(r.code, `${h}\n${show(r)}`).not.toBe(127);
    expect(r.stderr, `${h}\n${show(r)}`).not.toMatch(/command not found|not found: loopgate|no event log/);
    // It read this run: the audit trail starts with it; status and resume name it.
    if (/ events /.test(h)) expect(r.stdout, `${h}\n${show(r)}`).toMatch(/^\s*0 \S+ run_started/);
    else expect(`${r.stdout}${r.stderr}`, `${h}\n${show(r)}`).toContain(runId);
  }
}

const runIdOf = (r: CliResult) => /run (\d{8}-\d{6}-[0-9a-f]+)/.exec(`${r.stdout}${r.stderr}`)?.[1] ?? "";

describe.each([
  { how: "node bin/loopgate.js", launch: (_dir: string) => `node ${BIN}`, me: `node ${BIN}` },
  {
    how: "npx loopgate",
    launch: (dir: string) => {
      withLocalInstall(dir);
      return "npx loopgate";
    },
    me: "npx loopgate",
  },
])("hints printed under $how run as printed", ({ launch, me }) => {
  it("SUCCESS (run) and ESCALATED (verify), then status of each", async () => {
    const dir = project();
    const lg = launch(dir);
    const ok = await bash(`${lg} run task/task.yaml --oracle`, dir);
    expect(ok.code, show(ok)).toBe(0);
    const okId = runIdOf(ok);
    await pasteAll(hintsIn(ok), dir, me, okId);
    // From the task's folder (below the store) the hints need no --store either.
    const below = join(dir, "task");
    const bad = await bash(`${lg} verify task.yaml --workspace repo`, below);
    expect(bad.code, show(bad)).toBe(1);
    const badId = runIdOf(bad);
    const badHints = hintsIn(bad);
    expect(
      badHints.some((h) => h.includes(`status ${badId} --json`)),
      show(bad),
    ).toBe(true);
    await pasteAll(badHints, below, me, badId);
    const status = await bash(`${lg} status ${badId}`, dir);
    expect(status.code, show(status)).toBe(1);
    await pasteAll(hintsIn(status), dir, me, badId);
  });
});

describe("hints inside error messages", () => {
  it("under npx, `goal status` of a goal the store lacks points to `npx loopgate goals`, which runs", async () => {
    const dir = project();
    withLocalInstall(dir);
    const ok = await bash("npx loopgate run task/task.yaml --oracle", dir);
    expect(ok.code, show(ok)).toBe(0);
    const missing = await bash("npx loopgate goal status no-such-goal", dir);
    expect(missing.code, show(missing)).toBe(2);
    const hint = /`(npx loopgate goals)`/.exec(missing.stderr)?.[1];
    expect(hint, show(missing)).toBe("npx loopgate goals");
    const r = await bash(hint ?? "", dir);
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toContain("no goals in");
  });
});

describe("hints of an interrupted run", () => {
  it("continue it / audit trail / the whole log run as printed", async () => {
    const dir = project();
    writeFileSync(join(dir, "slow.sh"), "#!/bin/sh\necho started\nsleep 4\necho hi > greeting.txt\n");
    chmodSync(join(dir, "slow.sh"), 0o755);
    let sent = false;
    const r = await bash(`exec node ${BIN} run task/task.yaml --builder ./slow.sh`, dir, (err, child) => {
      if (!sent && err.includes("builder started")) {
        sent = true;
        setTimeout(() => child.kill("SIGINT"), 300);
      }
    });
    expect(r.code, show(r)).toBe(2);
    expect(r.stdout).toContain("interrupted (SIGINT)");
    const id = runIdOf(r);
    const hints = hintsIn(r);
    expect(
      hints.some((h) => h.includes(`resume ${id}`)),
      show(r),
    ).toBe(true);
    await pasteAll(hints, dir, `node ${BIN}`, id);
  });
});
