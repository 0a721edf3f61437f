// Helpers for the board's e2e tests: `loopgate serve` started as a user starts it, and Debian's Chromium
// driven by playwright-core.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { type Browser, chromium } from "playwright-core";
import { BIN, ROOT } from "./cli.js";

/** What `loopgate serve --json` prints first. */
export interface ServeInfo {
  url: string;
  sign_in_url: string | null;
  actions: boolean;
  name: string | null;
}

/** A running `loopgate serve`, its first line, and what it printed so far. */
export interface Served {
  info: ServeInfo;
  child: ChildProcess;
  stderr: () => string;
  /** SIGTERM, then its exit code and signal. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `loopgate serve ARGS --json --port 0` and waits for the line with its URL. */
export async function startServe(args: readonly string[], options: { cwd?: string } = {}): Promise<Served> {
  const env = { ...process.env };
  delete env.LOOPGATE_STORE;
  const child = spawn(process.execPath, [BIN, "serve", ...args, "--json", "--port", "0"], {
    cwd: options.cwd ?? ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    err += d;
  });
  const info = await new Promise<ServeInfo>((resolve, reject) => {
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) resolve(JSON.parse(line) as ServeInfo);
    });
    child.once("exit", (code) =>
      reject(new Error(`loopgate serve exited ${code} before printing its URL\n${err}`)),
    );
  });
  return {
    info,
    child,
    stderr: () => err,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null)
        return { code: child.exitCode, signal: child.signalCode };
      const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
      child.kill("SIGTERM");
      const [code, signal] = await exited;
      return { code, signal };
    },
  };
}

/** Debian's Chromium, headless, with no background network of its own. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-background-networking"],
  });
}

/** Screenshots are written to docs/images/ only when LOOPGATE_SCREENSHOTS=1 (a normal run leaves the tree clean). */
export const SCREENSHOTS = process.env.LOOPGATE_SCREENSHOTS === "1";
