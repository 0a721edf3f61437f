// The README's goal walkthrough runs exactly as printed: each line of its shell block, pasted into a shell in
// an empty folder where `loopgate` is on the PATH, exits as its comment says (0 when it says nothing), and the
// notification target it sets up receives what the walkthrough promises. Twice: with the store every command
// finds from that folder (./.loopgate), and with a PostgreSQL store named by $LOOPGATE_STORE.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { BIN, ROOT, removeTemps, tempDir } from "./cli.js";

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  await db?.drop();
  removeTemps();
});

/** The lines of the first ```sh block under the README heading that starts with `heading`. */
function walkthrough(heading: string): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const at = readme.indexOf(`\n${heading}`);
  expect(at, `README has no heading "${heading}"`).toBeGreaterThan(0);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  expect(block, `no sh block under "${heading}"`).not.toBeNull();
  return (block?.[1] ?? "").split("\n").filter((l) => l.trim() !== "");
}

/** The exit status a line's comment promises: `# exit N: …`, else 0. */
const promised = (line: string) => Number(/#\s*exit (\d+)/.exec(line)?.[1] ?? 0);

describe("README: the goal walkthrough", () => {
  it.each(["folder", "postgres"] as const)(
    "runs line by line as printed on the %s store, and notifies once at the gate and once at closure",
    (kind) => {
      const lines = walkthrough("## Goals");
      expect(lines.length).toBeGreaterThanOrEqual(8);
      const cwd = tempDir("loopgate-readme-goal-");
      const bin = join(cwd, ".bin");
      mkdirSync(bin);
      // As `npm link` installs it: a link named loopgate to the package's launcher, node on the PATH.
      symlinkSync(BIN, join(bin, "loopgate"));
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH}`,
      };
      // The walkthrough's store is the one every command finds from its folder, or the one $LOOPGATE_STORE names.
      if (kind === "postgres") env.LOOPGATE_STORE = db.url;
      else delete env.LOOPGATE_STORE;
      for (const line of lines) {
        const r = spawnSync("sh", ["-c", line], { cwd, env, encoding: "utf8", timeout: 240_000 });
        expect(r.status, `${line}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`).toBe(promised(line));
      }
      const sent = readFileSync(join(cwd, "my-goal", "notifications.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { kind: string; gate_id: string | null; command: string });
      expect(sent.map((n) => [n.kind, n.gate_id])).toEqual([
        ["gate_waiting", "todo_release_gate"],
        ["terminal", null],
      ]);
      // The gate's notification names the command that decides it, as the person would type it here.
      expect(sent[0]?.command).toBe("loopgate gate approve my-goal todo_release_gate");
      // Every command used one store: the folder's ./.loopgate holds the goal's git workspace (the initial tree
      // and the one accepted change); with PostgreSQL the goal lives in the database, so the folder holds no log.
      if (kind === "folder") {
        const log = execFileSync("git", ["log", "--format=%s"], {
          cwd: join(cwd, ".loopgate", "goals", "my-goal", "workspace"),
          encoding: "utf8",
        });
        expect(log.trim().split("\n")).toHaveLength(2);
      } else expect(existsSync(join(cwd, ".loopgate", "events.db"))).toBe(false);
    },
  );
});
