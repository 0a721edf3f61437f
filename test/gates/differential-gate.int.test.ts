import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type DifferentialGateSpec, isDifferentialGate, parseTask } from "../../src/core/task/task.js";
import { CASE_CONCURRENCY, differentialGate } from "../../src/gates/differential-gate.js";
import type { GateContext } from "../../src/gates/gate.js";

// Real bubblewrap: every case runs once on the oracle's tree and once on the builder's, each in its own sandbox.
let root: string;
let oracleDir: string;
let builderDir: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "lg-diff-"));
  oracleDir = join(root, "oracle-tree");
  builderDir = join(root, "gate-env");
  await mkdir(join(oracleDir, "bin"), { recursive: true });
  await mkdir(join(builderDir, "bin"), { recursive: true });
  // The reference: upper-cases its stdin; exits 3 when the first argument is "bad".
  await tool(oracleDir, `[ "\${1:-}" = bad ] && { echo "bad argument" >&2; exit 3; }\ntr a-z A-Z`);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function tool(tree: string, body: string): Promise<void> {
  await writeFile(join(tree, "bin/tool"), `#!/bin/sh\n${body}\n`);
  await chmod(join(tree, "bin/tool"), 0o755);
}

/** The differential gate of a task file whose gates list is `gateYaml`, parsed as a user's would be. */
function spec(gateYaml: string): DifferentialGateSpec {
  const task = parseTask(
    `id: t\nprompt: p\nworkspace: ./repo\noracle: ./solution.sh\ngates:\n${gateYaml}`,
    "task.yaml",
  );
  const g = task.gates[0];
  if (!g || !isDifferentialGate(g)) throw new Error("not a differential gate");
  return g;
}

function ctx(over: Partial<GateContext> = {}): GateContext {
  return {
    gateEnv: builderDir,
    runId: "run-1",
    attempt: 1,
    taskId: "t",
    sandbox: "bubblewrap",
    readOnly: true,
    oracleTree: async () => ({ dir: oracleDir }),
    ...over,
  };
}

const upper = `  - id: cli
    differential:
      run: ["sh", "bin/tool"]
      cases:
        - { name: hello, stdin: "hello\\n" }
        - { name: two-lines, stdin: "a b\\nc\\n" }
        - { name: bad-arg, args: ["bad"] }
    timeout: 10s
`;

describe("differentialGate", () => {
  it("passes a tree that behaves like the oracle's", async () => {
    await tool(
      builderDir,
      `case "\${1:-}" in bad) echo "no" >&2; exit 3;; esac\nawk '{ print toupper($0) }'`,
    );
    const r = await differentialGate(spec(upper), root).run(ctx());
    expect(r).toMatchObject({ passed: true, error: null, infrastructure: null, exit_code: null });
    expect(r.summary).toBe("all 3 cases match");
  });

  it("fails a tree with wrong output; the log shows expected vs got, bounded", async () => {
    await tool(builderDir, `[ "\${1:-}" = bad ] && exit 3\nprintf '%0500d\\n' 7`);
    const many = Array.from({ length: 9 }, (_, i) => `        - { name: c${i}, stdin: "x${i}\\n" }`).join(
      "\n",
    );
    const r = await differentialGate(
      spec(`  - id: cli\n    differential:\n      run: ["sh", "bin/tool"]\n      cases:\n${many}\n`),
      root,
    ).run(ctx());
    expect(r.passed).toBe(false);
    expect(r.infrastructure).toBeNull();
    expect(r.summary).toBe("9 of 9 cases differ");
    expect(r.log_excerpt).toContain('case "c0":');
    expect(r.log_excerpt).toContain('stdout expected: "X0\\n"');
    expect(r.log_excerpt).toMatch(/stdout got: +"0{300}" \[…201 more characters\]/);
    // Only the first five differing cases are shown in full.
    expect(r.log_excerpt).toContain('case "c4":');
    expect(r.log_excerpt).not.toContain('case "c5":');
    expect(r.log_excerpt).toContain("(4 more differing cases not shown)");
    expect(r.log_excerpt.length).toBeLessThan(4000);
  });

  it("cases run several at a time, yet the log lists the differing ones in case order", async () => {
    // The first cases take longest on the builder's tree, so they end last when cases run at once.
    await tool(builderDir, `read n; sleep "0.$((4 - n))"; echo "late $n"`);
    const cases = [0, 1, 2, 3].map((i) => `        - { name: c${i}, stdin: "${i}\\n" }`).join("\n");
    const r = await differentialGate(
      spec(`  - id: cli\n    differential:\n      run: ["sh", "bin/tool"]\n      cases:\n${cases}\n`),
      root,
    ).run(ctx());
    expect(r.summary).toBe("4 of 4 cases differ");
    const at = [0, 1, 2, 3].map((i) => r.log_excerpt.indexOf(`case "c${i}":`));
    expect(at.every((p) => p >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });

  it("an interrupted gate is undecided, never a pass", async () => {
    await tool(builderDir, "tr a-z A-Z");
    const controller = new AbortController();
    controller.abort();
    const r = await differentialGate(spec(upper), root).run(ctx({ signal: controller.signal }));
    expect(r.passed).toBe(false);
    expect(r.error).toBe("crashed");
    expect(r.summary).toContain("interrupted");
  });

  it("fails a tree whose exit code differs, even with the same stdout", async () => {
    await tool(builderDir, "tr a-z A-Z"); // never exits 3
    const r = await differentialGate(spec(upper), root).run(ctx());
    expect(r.passed).toBe(false);
    expect(r.summary).toBe("1 of 3 cases differ");
    expect(r.log_excerpt).toContain('case "bad-arg":\n  exit code: expected 3, got 0');
    // With exit codes not compared, the same tree passes.
    const lenient = upper.replace("run:", "compare_exit_code: false\n      run:");
    expect((await differentialGate(spec(lenient), root).run(ctx())).passed).toBe(true);
  });

  it("stderr: presence fails a tree that exits with the right code but says nothing", async () => {
    await tool(builderDir, `[ "\${1:-}" = bad ] && exit 3\ntr a-z A-Z`);
    const withStderr = upper.replace("run:", "stderr: presence\n      run:");
    const r = await differentialGate(spec(withStderr), root).run(ctx());
    expect(r.passed).toBe(false);
    expect(r.log_excerpt).toContain("stderr: expected a message, got nothing");
    expect((await differentialGate(spec(upper), root).run(ctx())).passed).toBe(true);
  });

  it("a case that times out on the builder's tree is not passed", async () => {
    await tool(builderDir, "while :; do :; done");
    const r = await differentialGate(spec(upper.replace("timeout: 10s", "timeout: 1s")), root).run(ctx());
    expect(r).toMatchObject({ passed: false, timed_out: true, error: "timeout", infrastructure: null });
    expect(r.summary).toBe('case "hello" timed out after 1000 ms');
  });

  it("a builder's program that hangs on every case costs one round of timeouts: later cases are not run", async () => {
    // Twelve cases, each of which would hang until the 1 s timeout. The first case to time out decides
    // the gate (it is read first); the cases after it, not yet started or still running, are stopped.
    const many = Array.from({ length: 12 }, (_, i) => `        - { name: c${i}, stdin: "x\\n" }`).join("\n");
    const gate = `  - id: cli\n    differential:\n      run: ["sh", "bin/tool"]\n      cases:\n${many}\n    timeout: 1s\n`;
    await tool(builderDir, "while :; do :; done");
    const r = await differentialGate(spec(gate), root).run(ctx());
    expect(r).toMatchObject({ passed: false, timed_out: true, error: "timeout", infrastructure: null });
    expect(r.summary).toBe('case "c0" timed out after 1000 ms');
    // Only the cases started in the first round (one per lane) can have run on the builder's tree.
    const notRun = Number(/; (\d+) later cases were not run/.exec(r.log_excerpt ?? "")?.[1]);
    expect(notRun).toBeGreaterThanOrEqual(12 - CASE_CONCURRENCY);
    expect(notRun).toBeLessThanOrEqual(11);
  });

  it("an oracle tree that cannot run a case is an infrastructure failure, never a pass", async () => {
    await tool(builderDir, "tr a-z A-Z");
    await tool(oracleDir, "while :; do :; done");
    const r = await differentialGate(spec(upper.replace("timeout: 10s", "timeout: 1s")), root).run(ctx());
    expect(r.passed).toBe(false);
    expect(r.infrastructure).toMatch(/gate cli: the oracle's tree failed case "hello": timed out/);
  });

  it("an oracle tree that could not be built is an infrastructure failure", async () => {
    await tool(builderDir, "tr a-z A-Z");
    const r = await differentialGate(spec(upper), root).run(
      ctx({ oracleTree: async () => ({ error: "the oracle ./solution.sh exited 1" }) }),
    );
    expect(r.passed).toBe(false);
    expect(r.infrastructure).toContain("the oracle ./solution.sh exited 1");
    const none = await differentialGate(spec(upper), root).run(ctx({ oracleTree: undefined }));
    expect(none.passed).toBe(false);
    expect(none.infrastructure).not.toBeNull();
  });

  it("a program the machine lacks is infrastructure; a deleted program in the builder's tree is a difference", async () => {
    const missing = upper.replace('run: ["sh", "bin/tool"]', 'run: ["no-such-program-4711"]');
    const r = await differentialGate(spec(missing), root).run(ctx());
    expect(r.infrastructure).toContain("no-such-program-4711 is not installed");
    // bin/tool absent from the builder's tree: sh fails there, and the case differs.
    const gone = await differentialGate(spec(upper), root).run(ctx());
    expect(gone.passed).toBe(false);
    expect(gone.infrastructure).toBeNull();
  });

  it("case files are mounted read-only at ${files}, at the same path for both trees", async () => {
    await tool(oracleDir, 'echo "$1"; cat "$1"');
    await tool(builderDir, 'echo "$1"; cat "$1"; { echo x >> "$1"; } 2>/dev/null && echo WROTE; exit 0');
    const g = `  - id: cli
    differential:
      run: ["sh", "bin/tool"]
      cases:
        - { name: file, args: ["\${files}/in/data.csv"], files: { "in/data.csv": "a,b\\n" } }
`;
    const r = await differentialGate(spec(g), root).run(ctx());
    expect(r.passed, r.log_excerpt).toBe(true);
  });

  it("each case sees only its own files (a case without files, none); no case folder is left after the gate", async () => {
    // The builder's tool says LEAK when the folder at ${files} holds anything but the listing it is given;
    // the oracle's says nothing, so a leak is a difference.
    await tool(oracleDir, "exit 0");
    await tool(builderDir, '[ "$(ls -A "$1" | tr "\\n" " ")" = "$2" ] || echo "LEAK: $(ls -A "$1")"');
    const g = `  - id: cli
    differential:
      run: ["sh", "bin/tool"]
      cases:
        - { name: a, args: ["\${files}", "a.txt "], files: { "a.txt": "A" } }
        - { name: none, args: ["\${files}", ""] }
        - { name: b, args: ["\${files}", "b.txt c.txt "], files: { "b.txt": "B", "c.txt": "C" } }
        - { name: none-again, args: ["\${files}", ""] }
`;
    const temp = join(root, "tmp");
    await mkdir(temp);
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = temp;
    try {
      const r = await differentialGate(spec(g), root).run(ctx());
      expect(r.passed, r.log_excerpt).toBe(true);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    expect(await readdir(temp)).toEqual([]);
  });

  it("draws a generator seed at gate time, records it, and passes it to the generator", async () => {
    await tool(builderDir, "tr a-z A-Z");
    await writeFile(
      join(root, "gen.sh"),
      'i=0; while [ $i -lt "$2" ]; do printf \'{"name":"s%s-%s","stdin":"v%s\\\\n"}\\n\' "$1" $i $i; i=$((i+1)); done\n',
    );
    const g = `  - id: cli
    differential:
      run: ["sh", "bin/tool"]
      generator: { run: ["sh", "gen.sh", "\${seed}", "\${count}"], count: 4 }
`;
    const a = await differentialGate(spec(g), root).run(ctx());
    const b = await differentialGate(spec(g), root).run(ctx());
    expect(a.passed, a.log_excerpt).toBe(true);
    expect(a.summary).toBe("all 4 cases match");
    expect(typeof a.seed).toBe("number");
    expect(a.log_excerpt).toContain(`generator seed ${a.seed}`);
    expect(b.seed).not.toBe(a.seed);
    // The generated cases carry the seed: a differing tree shows which seed produced them.
    await tool(builderDir, "cat");
    const c = await differentialGate(spec(g), root).run(ctx());
    expect(c.passed).toBe(false);
    expect(c.log_excerpt).toContain(`case "s${c.seed}-0":`);
    expect(c.log_excerpt).toContain(`generator seed ${c.seed}`);
  });

  it("a generator that fails, prints nothing or prints bad cases is an infrastructure failure", async () => {
    await tool(builderDir, "tr a-z A-Z");
    for (const [body, why] of [
      ["exit 4", /exited 4/],
      ["true", /printed no cases/],
      ["echo '{not json'", /line 1 is not JSON/],
      ["echo '{\"argz\": []}'", /line 1: .*argz/],
      ["for i in 1 2 3; do echo '{}'; done", /printed 3 cases; count is 2/],
    ] as const) {
      await writeFile(join(root, "gen.sh"), `${body}\n`);
      const g = `  - id: cli\n    differential:\n      run: ["sh", "bin/tool"]\n      generator: { run: ["sh", "gen.sh"], count: 2 }\n`;
      const r = await differentialGate(spec(g), root).run(ctx());
      expect(r.passed).toBe(false);
      expect(r.infrastructure).toMatch(why);
    }
  });
});
