import {
  PROTOCOLS,
  type Protocol,
  type RecordedRequest,
  startModelServer,
} from "../../agent/models/model-server/server.js";
import { InputError } from "../../core/kernel/errors.js";
import { handleInterrupts } from "../output/interrupt.js";
import type { CommandIO } from "../output/io.js";

/**
 * `loopgate model-server SCRIPT --protocol P`: serves a scripted model file over a real wire
 * protocol on 127.0.0.1 until SIGINT/SIGTERM. Exit 0 when stopped with no step left unanswered,
 * 1 when a step arrived after the script's last response (script_exhausted), 2 on bad input.
 */
export async function modelServerCommand(
  io: CommandIO,
  script: string,
  flags: { protocol?: string; port?: number; requests?: string; json?: boolean },
): Promise<number> {
  if (flags.protocol === undefined)
    throw new InputError(`required: one of ${PROTOCOLS.join(", ")}`, "loopgate model-server --protocol");
  if (!(PROTOCOLS as readonly string[]).includes(flags.protocol))
    throw new InputError(
      `expected one of ${PROTOCOLS.join(", ")}, got ${JSON.stringify(flags.protocol)}`,
      "--protocol",
    );
  const port = flags.port === undefined ? 0 : flags.port;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new InputError(`expected a port number 0-65535, got ${flags.port}`, "--port");
  let reported = false;
  const server = await startModelServer({
    protocol: flags.protocol as Protocol,
    script,
    port,
    ...(flags.requests === undefined ? {} : { requestsFile: flags.requests }),
    onRequest: (r) => {
      io.err(`${describe(r, server?.length)}\n`);
      if (r.kind === "exhausted" && !reported) {
        reported = true;
        io.err(`loopgate model-server: ${server?.exhausted ?? "script_exhausted"}\n`);
      }
    },
  });
  if (flags.json)
    io.out(
      `${JSON.stringify({ url: server.url, pid: process.pid, protocol: server.protocol, port: server.port, responses: server.length })}\n`,
    );
  else
    io.out(
      `loopgate model-server: ${script} (${server.length} responses) over ${server.protocol} at ${server.url}\n`,
    );
  const stopped = new Promise<void>((resolve) => {
    const interrupts = handleInterrupts(() => {
      interrupts.dispose();
      resolve();
    });
  });
  await stopped;
  await server.close();
  const steps = server.requests.filter((r) => r.kind === "step").length;
  const summary = {
    stopped: true,
    position: server.position,
    responses: server.length,
    requests: server.requests.length,
    steps,
    exhausted: server.exhausted ?? null,
  };
  if (flags.json) io.out(`${JSON.stringify(summary)}\n`);
  if (server.exhausted !== undefined) {
    io.err(`loopgate model-server: FAILED: ${server.exhausted}\n`);
    return 1;
  }
  if (server.position < server.length)
    io.err(
      `loopgate model-server: warning: ${server.length - server.position} of ${server.length} responses were never asked for\n`,
    );
  io.err(`loopgate model-server: stopped after ${server.position}/${server.length} responses\n`);
  return 0;
}

function describe(r: RecordedRequest, length: number | undefined): string {
  const what =
    r.kind === "step"
      ? `step ${r.step}/${length ?? "?"}`
      : r.kind === "side"
        ? `side (${r.what ?? "?"})`
        : r.kind;
  return `model-server #${r.seq} ${r.method} ${r.url} → ${r.status} ${what}`;
}
