/**
 * The hook command Claude Code runs inside loopgate's sandbox. The gates cannot run there (held-out
 * material never enters the agent's sandbox), so this self-contained script (node builtins only, no
 * loopgate install needed in the sandbox) forwards the hook's stdin to the `loopgate claude` process
 * outside, which decides, and prints its answer. It fails closed: if loopgate cannot be reached, answers
 * garbage or does not answer before the deadline, a Stop (or a TaskCompleted) is blocked (exit 2 with the
 * reason), never let through.
 *
 * argv: SOCKET DEADLINE_SECONDS, SOCKET the hook server's Unix socket (hook-server.ts); no credential: the
 * socket is reachable only where loopgate mounted it. It connects from the socket's folder by the socket's
 * name, so a long store path cannot pass the 107 bytes a socket address holds. Written next to the
 * settings file, both read-only to the agent.
 */
export const FORWARDER_SCRIPT = `// loopgate hook forwarder (generated; read-only to the agent)
import http from "node:http";
import { basename, dirname } from "node:path";
const [socket, deadlineText] = process.argv.slice(2);
const deadline = Number(deadlineText) * 1000;
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => forward(Buffer.concat(chunks).toString("utf8")));
let event = "";
function fail(why) {
  // A Stop or a task completion that cannot be checked is refused (exit 2); a tool report is not.
  const stop = event === "Stop" || event === "" || event === "TaskCompleted";
  process.stderr.write(
    stop
      ? "loopgate could not check your work (" + why + "), so you may not stop yet: the task is not verified. Re-check your work and try to finish again.\\n"
      : "loopgate could not record this tool call (" + why + ")\\n",
  );
  process.exit(stop ? 2 : 1);
}
function forward(body) {
  try { event = String(JSON.parse(body).hook_event_name ?? ""); } catch { event = ""; }
  const timer = setTimeout(() => fail("no answer within " + deadlineText + " s"), deadline);
  try { process.chdir(dirname(socket)); } catch (e) { clearTimeout(timer); return fail("cannot reach loopgate at " + socket + ": " + e.message); }
  const req = http.request({ socketPath: "./" + basename(socket), path: "/hook", method: "POST", headers: { "content-type": "application/json" } }, (res) => {
    const got = [];
    res.on("data", (c) => got.push(c));
    res.on("end", () => {
      clearTimeout(timer);
      let reply;
      try { reply = JSON.parse(Buffer.concat(got).toString("utf8")); } catch { return fail("its answer was not JSON"); }
      if (res.statusCode !== 200 || typeof reply.exit_code !== "number") return fail("it answered HTTP " + res.statusCode + ": " + String(reply.error ?? "").slice(0, 500));
      if (reply.stdout) process.stdout.write(reply.stdout);
      if (reply.stderr) process.stderr.write(reply.stderr);
      process.exit(reply.exit_code);
    });
  });
  req.on("error", (e) => { clearTimeout(timer); fail("cannot reach loopgate at " + socket + ": " + e.message); });
  req.end(body);
}
`;
