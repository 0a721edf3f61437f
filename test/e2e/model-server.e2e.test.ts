// `loopgate model-server` as a user runs it: the --json start line, one step per request, and the
// exit code that says whether the script ran out.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, loopgate, ROOT } from "./cli.js";

const dir = mkdtempSync(join(tmpdir(), "lg-ms-e2e-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const scriptFile = join(dir, "one.yaml");
writeFileSync(scriptFile, "- text: the only response\n");

function serve(args: string[]) {
  const child = spawn(process.execPath, [BIN, "model-server", ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const started = new Promise<{ url: string; pid: number }>((resolve, reject) => {
    child.stdout.on("data", () => {
      const line = stdout.split("\n")[0];
      if (stdout.includes("\n") && line) resolve(JSON.parse(line));
    });
    child.on("close", () => reject(new Error(`exited early: ${stderr}`)));
  });
  const closed = new Promise<number | null>((r) => child.on("close", r));
  return { child, started, closed, out: () => stdout, err: () => stderr };
}

const step = (url: string) =>
  fetch(`${url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages: [], tools: [{ name: "Bash" }] }),
  });

describe("loopgate model-server", () => {
  it("prints {url, pid}, serves the script, and exits 0 on SIGTERM when it did not run out", async () => {
    const s = serve([scriptFile, "--protocol", "anthropic", "--json"]);
    const { url, pid } = await s.started;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(pid).toBe(s.child.pid);
    expect((await step(url)).status).toBe(200);
    s.child.kill("SIGTERM");
    expect(await s.closed).toBe(0);
    expect(JSON.parse(s.out().trim().split("\n").at(-1) ?? "{}")).toMatchObject({
      position: 1,
      responses: 1,
      exhausted: null,
    });
  });

  it("a request after the last response gets a 400 and the server exits 1 naming script_exhausted", async () => {
    const s = serve([scriptFile, "--protocol", "anthropic", "--json"]);
    const { url } = await s.started;
    expect((await step(url)).status).toBe(200);
    const over = await step(url);
    expect(over.status).toBe(400);
    expect(await over.text()).toMatch(/script_exhausted/);
    s.child.kill("SIGTERM");
    expect(await s.closed).toBe(1);
    expect(s.err()).toMatch(/FAILED: script_exhausted/);
  });

  it("refuses an unknown protocol and a missing script with exit 2", async () => {
    const bad = await loopgate(["model-server", scriptFile, "--protocol", "grpc"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--protocol: expected one of anthropic, openai-responses, openai-chat/);
    const missing = await loopgate(["model-server", join(dir, "nope.yaml"), "--protocol", "anthropic"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.yaml: cannot read the scripted model file/);
  });
});
