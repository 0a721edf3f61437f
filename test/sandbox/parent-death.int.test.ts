// A sandbox lives no longer than the loopgate that started it: killed once the sandbox runs, loopgate
// takes it along (the kernel's parent-death signal); gone before the sandbox's first program checked,
// the sandbox never runs its command (parent-death.ts).
import { spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bubblewrapArgv, findBwrap } from "../../src/sandbox/bubblewrap.js";
import { scrubbedEnv } from "../../src/sandbox/environment.js";
import { deathSignalArgv, parentCheckArgv } from "../../src/sandbox/parent-death.js";
import { stagedBubblewrap } from "../../src/sandbox/privilege-drop.js";
import { sandboxUser } from "../../src/sandbox/sandbox-user.js";

const ROOT = join(import.meta.dirname, "..", "..");
let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "loopgate-parent-death-test-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Pids of live processes whose argv holds `needle`. */
function processesWith(needle: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8");
      if (argv.includes(needle)) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Runs argv as a grandchild (its parent a shell, not this process) or as this process's own child. */
function runFrom(parent: "this process" | "another process", argv: string[]) {
  return parent === "this process"
    ? spawnSync(argv[0] as string, argv.slice(1), { encoding: "utf8" })
    : spawnSync("/bin/sh", ["-c", '"$@" & wait $!', "sh", ...argv], { encoding: "utf8" });
}

describe("a sandbox and the loopgate that starts it", () => {
  it("killed once the sandbox runs, loopgate takes the sandbox with it", async () => {
    const marker = `86${Math.floor(Math.random() * 1e6)}`;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(import.meta.dirname, "fixtures", "sandbox-then-wait.ts"), marker],
      {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        let out = "";
        child.stdout.setEncoding("utf8").on("data", (d: string) => {
          out += d;
          if (out.includes("sandbox up")) resolve();
        });
        child.on("exit", (code) => reject(new Error(`the fixture exited ${code} before its sandbox was up`)));
      });
      expect(processesWith(`sleep ${marker}`).length).toBeGreaterThan(0);
      child.kill("SIGKILL");
      // The signal is the kernel's, sent as loopgate dies; the bound only absorbs a loaded machine.
      const deadline = Date.now() + 20_000;
      while (processesWith(`sleep ${marker}`).length > 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(processesWith(`sleep ${marker}`)).toEqual([]);
    } finally {
      child.kill("SIGKILL");
      for (const pid of processesWith(`sleep ${marker}`)) process.kill(pid, "SIGKILL");
    }
  });

  it("the parent check runs the command under its loopgate, and refuses it under any other parent", () => {
    for (const parent of ["this process", "another process"] as const) {
      const file = join(root, `ran-${parent.replace(" ", "-")}`);
      const r = runFrom(parent, [
        ...deathSignalArgv(),
        ...parentCheckArgv(),
        "/bin/sh",
        "-c",
        `echo ran > ${file}`,
      ]);
      expect(r.status, `${parent}: ${r.stderr}`).toBe(parent === "this process" ? 0 : 125);
      expect(existsSync(file), parent).toBe(parent === "this process");
    }
  });

  // The stage shell exists only where loopgate drops root for a sandbox user, with bubblewrap there: as an
  // unprivileged user (or without bubblewrap) there is no stage to test. CI runs as root with both.
  const user = sandboxUser();
  if (!user || !findBwrap()) console.log("parent-death: stage test skipped, not root or no bubblewrap");
  it.skipIf(!user || !findBwrap())(
    "as root, the stage shell does the same check before it mounts anything",
    () => {
      if (!user) return;
      for (const parent of ["this process", "another process"] as const) {
        const ws = mkdtempSync(join(root, "ws-"));
        chownSync(ws, user.uid, user.gid);
        const spec = {
          argv: ["/bin/sh", "-c", "echo ran > out"],
          cwd: ws,
          writable: [ws],
          readonly: [],
          env: scrubbedEnv({ home: "/tmp" }),
          network: false,
          timeoutMs: 10_000,
        };
        const argv = stagedBubblewrap(user, spec.env, (stage) =>
          bubblewrapArgv(spec, findBwrap() ?? "bwrap", stage),
        );
        const r = runFrom(parent, [...deathSignalArgv(), ...argv]);
        expect(r.status, `${parent}: ${r.stderr}`).toBe(parent === "this process" ? 0 : 125);
        expect(existsSync(join(ws, "out")), parent).toBe(parent === "this process");
      }
    },
  );
});
