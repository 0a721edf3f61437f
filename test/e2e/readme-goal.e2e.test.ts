// The README's goal walkthrough runs exactly as printed: each line of its shell block, pasted into a shell in
// an empty folder where `loopgate` is on the PATH, exits as its comment says (0 when it says nothing), and the
// notification target it sets up receives what the walkthrough promises.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, ROOT, removeTemps, tempDir } from "./cli.js";

afterAll(removeTemps);

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
  it("runs line by line as printed, and notifies once at the gate and once at closure", () => {
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
    delete env.LOOPGATE_STORE; // the walkthrough's store is the one every command finds from its folder
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
    // The store is the one every command found from this folder: ./.loopgate, holding the goal's workspace.
    const log = execFileSync("git", ["log", "--format=%s"], {
      cwd: join(cwd, ".loopgate", "goals", "my-goal", "workspace"),
      encoding: "utf8",
    });
    expect(log.trim().split("\n")).toHaveLength(2); // the initial tree and the one accepted change
  });
});
