import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StaticGateSpec } from "../../src/core/task/task.js";
import type { GateContext } from "../../src/gates/gate.js";
import { staticGate } from "../../src/gates/static-gate.js";

let root: string;
let env: string;
let outside: string;

const HELLO_SHA256 = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"; // sha256("hello\n")

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "lg-static-"));
  env = join(root, "gate-env");
  outside = join(root, "outside");
  await mkdir(join(env, "src"), { recursive: true });
  await mkdir(outside);
  await writeFile(
    join(env, "src", "slugify.js"),
    "export function slugify(s) {\n  const t = s.trim();\n  console.log(t);\n  return t;\n}\n",
  );
  await writeFile(join(env, "hello.txt"), "hello\n");
  await writeFile(
    join(env, "result.json"),
    JSON.stringify({
      status: "ok",
      matrix: [
        [1, 2],
        [3, { deep: [true, null] }],
      ],
      "a/b": 1,
      "m~n": "tilde",
      "": "empty",
    }),
  );
  await writeFile(join(env, "broken.json"), '{"status": "ok",');
  await writeFile(join(outside, "secret.txt"), "hello\n");
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const ctx: () => GateContext = () => ({
  gateEnv: env,
  runId: "r1",
  attempt: 1,
  taskId: "t",
  sandbox: "bubblewrap",
  readOnly: true,
});

function run(check: StaticGateSpec["static"]) {
  return staticGate({ id: "s", static: check, feedback: "summary" }).run(ctx());
}

describe("staticGate: match / not_match", () => {
  it("match passes when the regex is found, naming the line", async () => {
    const r = await run({ path: "src/slugify.js", match: "return\\s+t;" });
    expect(r).toMatchObject({
      passed: true,
      error: null,
      exit_code: null,
      timed_out: false,
      infrastructure: null,
    });
    expect(r.summary).toContain("src/slugify.js:4");
  });

  it("match fails when the regex is not found", async () => {
    const r = await run({ path: "src/slugify.js", match: "normalize\\(" });
    expect(r).toMatchObject({ passed: false, error: null });
  });

  it("match anchors per line (multiline)", async () => {
    expect((await run({ path: "src/slugify.js", match: "^  return t;$" })).passed).toBe(true);
  });

  it("not_match fails with the line number of the offending match", async () => {
    const r = await run({ path: "src/slugify.js", not_match: "console\\.log" });
    expect(r.passed).toBe(false);
    expect(r.summary).toContain("src/slugify.js:3 ");
  });

  it("not_match passes when the regex is absent", async () => {
    expect((await run({ path: "src/slugify.js", not_match: "debugger" })).passed).toBe(true);
  });

  it("a missing file does not pass a match, nor a not_match", async () => {
    expect((await run({ path: "src/missing.js", match: "x" })).passed).toBe(false);
    expect((await run({ path: "src/missing.js", not_match: "x" })).passed).toBe(false);
  });
});

describe("staticGate: exists / absent", () => {
  it("exists passes for a file and a directory, fails for a missing path", async () => {
    expect((await run({ path: "hello.txt", exists: true })).passed).toBe(true);
    expect((await run({ path: "src", exists: true })).passed).toBe(true);
    expect((await run({ path: "nope.txt", exists: true })).passed).toBe(false);
  });

  it("absent passes for a missing path, fails for one that exists (even a dangling symlink)", async () => {
    expect((await run({ path: "nope.txt", absent: true })).passed).toBe(true);
    expect((await run({ path: "hello.txt", absent: true })).passed).toBe(false);
    await symlink(join(root, "no-such-target"), join(env, "dangling"));
    expect((await run({ path: "dangling", absent: true })).passed).toBe(false);
  });
});

describe("staticGate: json_pointer equals", () => {
  it.each<[string, unknown]>([
    ["/status", "ok"],
    ["/matrix/0/1", 2],
    ["/matrix/1/1/deep", [true, null]],
    ["/matrix/1/1/deep/1", null],
    [
      "/matrix",
      [
        [1, 2],
        [3, { deep: [true, null] }],
      ],
    ],
    ["/a~1b", 1],
    ["/m~0n", "tilde"],
    ["/", "empty"],
  ])("%s equals %j", async (pointer, equals) => {
    const r = await run({ path: "result.json", json_pointer: pointer, equals });
    expect(r.passed).toBe(true);
    expect(r.error).toBeNull();
  });

  it.each<[string, unknown]>([
    ["/status", "OK"],
    ["/matrix/0/1", "2"],
    ["/matrix/1/1/deep", [true]],
    ["/matrix/0", { 0: 1, 1: 2 }],
    ["/a/b", 1],
    ["/matrix/2", null],
    ["/matrix/01", 2],
    ["/missing", null],
  ])("%s does not equal %j (or does not exist)", async (pointer, equals) => {
    const r = await run({ path: "result.json", json_pointer: pointer, equals });
    expect(r.passed).toBe(false);
  });

  it("invalid JSON is unreadable, not passed", async () => {
    const r = await run({ path: "broken.json", json_pointer: "/status", equals: "ok" });
    expect(r).toMatchObject({ passed: false, error: "unreadable" });
  });

  it("a missing JSON file is not passed", async () => {
    expect((await run({ path: "nope.json", json_pointer: "/status", equals: "ok" })).passed).toBe(false);
  });
});

describe("staticGate: sha256", () => {
  it("passes on the right digest", async () => {
    expect((await run({ path: "hello.txt", sha256: HELLO_SHA256 })).passed).toBe(true);
  });

  it("fails on another digest, and says what it found", async () => {
    const empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"; // sha256("")
    const r = await run({ path: "hello.txt", sha256: empty });
    expect(r.passed).toBe(false);
    expect(r.summary).toContain(HELLO_SHA256);
  });
});

describe("staticGate: escapes", () => {
  it("a symlink pointing outside the gate env is not passed, though the outside file would pass", async () => {
    await symlink(join(outside, "secret.txt"), join(env, "link.txt"));
    for (const check of [
      { path: "link.txt", sha256: HELLO_SHA256 },
      { path: "link.txt", match: "hello" },
      { path: "link.txt", exists: true as const },
    ]) {
      const r = await run(check);
      expect(r.passed).toBe(false);
      expect(r.summary).not.toContain("hello");
    }
  });

  it("a directory symlink on the way out is not followed", async () => {
    await symlink(outside, join(env, "sub"));
    expect((await run({ path: "sub/secret.txt", sha256: HELLO_SHA256 })).passed).toBe(false);
  });

  it("never reads the outside file: a FIFO behind the symlink would block any read", async () => {
    execFileSync("mkfifo", [join(outside, "fifo")]);
    await symlink(join(outside, "fifo"), join(env, "fifo-link"));
    const r = await run({ path: "fifo-link", match: "x" });
    expect(r.passed).toBe(false);
  }, 5000);

  it("a symlink that stays inside the gate env is followed", async () => {
    await symlink("hello.txt", join(env, "inner-link"));
    expect((await run({ path: "inner-link", sha256: HELLO_SHA256 })).passed).toBe(true);
  });

  it.each(["../outside/secret.txt", "src/../../outside/secret.txt", "<absolute>"])(
    "a path that climbs out (%s) is not passed",
    async (given) => {
      const path = given === "<absolute>" ? join(outside, "secret.txt") : given;
      for (const check of [
        { path, sha256: HELLO_SHA256 },
        { path, exists: true as const },
        { path, absent: true as const },
      ]) {
        const r = await run(check);
        expect(r.passed).toBe(false);
      }
    },
  );

  it("a FIFO in the gate env at the gate's path is a verdict (not passed, unreadable), not a wait", async () => {
    execFileSync("mkfifo", [join(env, "report.json")]);
    const r = await run({ path: "report.json", json_pointer: "/status", equals: "ok" });
    expect(r.passed).toBe(false);
    expect(r.error).toBe("unreadable");
    expect(r.summary).toContain("not a regular file (a FIFO)");
  });

  it("a file larger than a static gate reads is not passed, and says why", async () => {
    // Sparse: 65 MiB apparent size, no disk used.
    execFileSync("truncate", ["-s", `${65 * 1024 * 1024}`, join(env, "huge.txt")]);
    const r = await run({ path: "huge.txt", not_match: "secret" });
    expect(r.passed).toBe(false);
    expect(r.summary).toContain("too large to check");
  });

  it("a `..` that stays inside is fine", async () => {
    expect((await run({ path: "src/../hello.txt", sha256: HELLO_SHA256 })).passed).toBe(true);
  });
});
