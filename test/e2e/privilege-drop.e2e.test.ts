// loopgate run as root, with the task, its checkout and the store all inside a 0700 folder under root's home:
// builders, the oracle, generators and gates run as the unprivileged sandbox user and still reach them.
import { chmodSync, cpSync, mkdtempSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTree } from "../../src/workspace/remove-tree.js";
import { keptFiles } from "../support/run-tree.js";
import { type Envelope, exampleDir, loopgate, parseStdout, show } from "./cli.js";

const isRoot = process.geteuid?.() === 0;
if (!isRoot) console.log("privilege-drop e2e skipped: it needs loopgate to run as root (euid 0)");

let base: string;
let task: string;
beforeAll(() => {
  if (!isRoot) return;
  base = mkdtempSync(join(homedir(), "loopgate-privdrop-e2e-"));
  chmodSync(base, 0o700);
  const dir = join(base, "task");
  cpSync(exampleDir("sh-csvcol"), dir, { recursive: true });
  chmodSync(dir, 0o700);
  task = join(dir, "task.yaml");
});
afterAll(async () => {
  if (base) await removeTree(base);
});

describe.skipIf(!isRoot)("loopgate as root, everything under a 0700 folder", () => {
  it("the folder is closed to other users (the premise of the test)", () => {
    expect(statSync(base).mode & 0o077).toBe(0);
    expect(statSync(homedir()).uid).toBe(0);
  });

  it("an honest builder reaches SUCCESS: builder, oracle, generator and gates all ran", async () => {
    const r = await loopgate(
      [
        "run",
        task,
        "--builder",
        `${join(base, "task", "builders", "honest.sh")} {required_fix}`,
        "--json",
        "--store",
        join(base, "store"),
      ],
      { timeoutMs: 300_000 },
    );
    expect(r.code, show(r)).toBe(0);
    const env = parseStdout<Envelope>(r);
    expect(env.status).toBe("SUCCESS");
    const final = env.gates.filter((g) => g.attempt === env.attempts);
    expect(final.map((g) => g.id).sort()).toEqual(
      ["cli-matches-reference", "no-non-posix-tools", "posix-shebang", "visible-tests"].sort(),
    );
    expect(final.every((g) => g.passed)).toBe(true);
    // The run folder stays closed to others; what the builder wrote is the sandbox user's, not root's.
    const ws = keptFiles(join(base, "store", "runs", env.run_id));
    expect(statSync(join(base, "store", "runs", env.run_id)).mode & 0o077).toBe(0);
    expect(statSync(join(ws, "bin", "csvcol")).uid).not.toBe(0);
  }, 320_000);

  it("a forger does not reach SUCCESS", async () => {
    const r = await loopgate(
      [
        "run",
        task,
        "--builder",
        join(base, "task", "builders", "forger.sh"),
        "--json",
        "--max-attempts",
        "1",
        "--store",
        join(base, "store"),
      ],
      { timeoutMs: 300_000 },
    );
    expect(r.code, show(r)).toBe(1);
    const env = parseStdout<Envelope>(r);
    expect(env.status).toBe("ESCALATED");
    expect(env.gates.some((g) => !g.passed)).toBe(true);
  }, 320_000);
});
