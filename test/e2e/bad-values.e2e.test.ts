// Values that used to load and then fail late, or crash with a stack trace, through the CLI: a static gate
// path outside the gate environment, a store under a file, a TLS-only URL to a server without TLS, a
// corrupted events.db that doctor called healthy, and a gate timeout past setTimeout's 24.8-day limit.
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_URL } from "../support/postgres.js";
import {
  type CliResult,
  type Envelope,
  loopgate,
  parseStdout,
  removeTemps,
  show,
  tempDir,
  writeTask,
} from "./cli.js";

afterAll(removeTemps);

/** One line on stderr, no stack trace, exit 2, nothing on stdout, naming `where`. */
function expectOneLine(r: CliResult, where: string, words: RegExp): void {
  expect(r.code, show(r)).toBe(2);
  expect(r.stdout, show(r)).toBe("");
  expect(r.stderr.trim().split("\n"), show(r)).toHaveLength(1);
  expect(r.stderr).not.toContain("internal error");
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stderr).toContain(where);
  expect(r.stderr).toMatch(words);
}

const task = (gate: string[], extra = "") =>
  ["id: bad-values", "prompt: change greeting.txt", "workspace: ./repo", "gates:", ...gate, extra, ""].join(
    "\n",
  );

describe.concurrent("a static gate's path is checked when the task loads", () => {
  for (const [path, why] of [
    ["/etc/passwd", "is absolute"],
    ["../../x", "has a .. segment"],
  ])
    it(`${path}: exit 2 at load, naming file:line:field`, async () => {
      const yaml = task(["  - id: peek", "    static:", `      path: ${path}`, "      exists: true"]);
      const file = writeTask(yaml);
      const line = yaml.split("\n").findIndex((l) => l.includes(`path: ${path}`)) + 1;
      const r = await loopgate(["run", file, "--noop", "--store", tempDir()]);
      expect(r.code, show(r)).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(`${file}:${line}: gates[0].static.path: ${JSON.stringify(path)} ${why}`);
    });
});

describe.concurrent("durations", () => {
  it("a 600h gate timeout (past setTimeout's limit) waits for the gate instead of firing at once", async () => {
    const file = writeTask(
      task(["  - id: slow", '    run: ["sh", "-c", "sleep 1; echo finished"]', "    timeout: 600h"]),
    );
    const r = await loopgate(["run", file, "--noop", "--store", tempDir(), "--json"]);
    const envelope = parseStdout<Envelope>(r);
    expect(
      envelope.gates.map((g) => [g.id, g.passed, g.timed_out]),
      show(r),
    ).toEqual([["slow", true, false]]);
    expect(envelope.status).toBe("SUCCESS");
    expect(r.code).toBe(0);
  });

  it("1d is a duration in a task file (gate, builder); over 365 days is refused naming the limit", async () => {
    const ok = writeTask(
      task(["  - id: quick", '    run: ["true"]', "    timeout: 1d"], "builder: { timeout: 1d }"),
    );
    const r = await loopgate(["run", ok, "--noop", "--store", tempDir(), "--json"]);
    expect(parseStdout<Envelope>(r).status, show(r)).toBe("SUCCESS");
    const yaml = task(["  - id: quick", '    run: ["true"]', "    timeout: 400d"]);
    const tooLong = writeTask(yaml);
    const line = yaml.split("\n").findIndex((l) => l.includes("400d")) + 1;
    const refused = await loopgate(["run", tooLong, "--noop", "--store", tempDir()]);
    expect(refused.code, show(refused)).toBe(2);
    expect(refused.stderr).toContain(
      `${tooLong}:${line}: gates[0].timeout: expected a duration of at most 365d, got "400d"`,
    );
  });
});

describe.concurrent("stores that used to crash with a stack trace", () => {
  it("--store under a regular file: one line naming the store and the file in the way", async () => {
    const dir = tempDir();
    const file = join(dir, "afile");
    writeFileSync(file, "not a folder\n");
    const quick = writeTask(task(["  - id: quick", '    run: ["true"]']));
    for (const args of [["runs"], ["run", quick, "--noop"]]) {
      const r = await loopgate([...args, "--store", "afile/sub"], { cwd: dir });
      expectOneLine(r, join(dir, "afile", "sub"), new RegExp(`cannot be a folder: ${file} is a file`));
    }
    expect(readFileSync(file, "utf8")).toBe("not a folder\n");
  });

  it("a postgres URL asking for TLS (sslmode=require) of a server without it: one line naming the store", async () => {
    const url = `${ADMIN_URL}${ADMIN_URL.includes("?") ? "&" : "?"}sslmode=require`;
    const r = await loopgate(["runs", "--store", url]);
    // The local test server has no TLS; one with TLS but an unknown certificate is refused in one line too.
    expectOneLine(r, "sslmode=require", /does not accept TLS|TLS connection .* was refused/);
    expect(r.stderr).not.toContain("SECURITY WARNING");
  });
});

describe("doctor and the store's events.db", () => {
  let store: string;
  beforeAll(async () => {
    store = join(tempDir(), "store");
    const file = writeTask(task(["  - id: quick", '    run: ["true"]']));
    const r = await loopgate(["run", file, "--noop", "--store", store]);
    expect(r.code, show(r)).toBe(0);
  }, 60_000);

  interface Report {
    exit: number;
    checks: { id: string; state: string; detail: string; remedy: string | null }[];
  }
  const doctor = async (dir: string) => {
    const r = await loopgate(["doctor", "--json", "--store", dir]);
    const report = parseStdout<Report>(r);
    return { r, report, integrity: report.checks.find((c) => c.id === "store-integrity") };
  };

  it("a sound log: store-integrity ok", async () => {
    const { integrity } = await doctor(store);
    expect(integrity?.state, JSON.stringify(integrity)).toBe("ok");
    expect(integrity?.detail).toContain(join(store, "events.db"));
  });

  const damages: [string, (db: Buffer) => Buffer][] = [
    ["garbage written over the whole file", (db) => Buffer.alloc(db.length, 0x5a)],
    [
      "garbage over its pages, the header intact",
      (db) => {
        const b = Buffer.from(db);
        b.fill(0xa5, 4096, b.length);
        return b;
      },
    ],
  ];
  for (const [what, damage] of damages)
    it(`${what}: runs refuses it and doctor reports it (exit 2), naming events.db`, async () => {
      const copy = join(tempDir(), "store");
      cpSync(store, copy, { recursive: true });
      const db = join(copy, "events.db");
      writeFileSync(db, damage(readFileSync(db)));
      const runs = await loopgate(["runs", "--store", copy]);
      expect(runs.code, show(runs)).toBe(2);
      const { r, report, integrity } = await doctor(copy);
      expect(integrity?.state, JSON.stringify(integrity)).toBe("missing");
      expect(integrity?.detail).toContain(db);
      expect(integrity?.remedy).toContain("restore events.db from a backup");
      expect(report.exit).toBe(2);
      expect(r.code, show(r)).toBe(2);
    });
});
