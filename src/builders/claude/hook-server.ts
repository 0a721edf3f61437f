import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type HookInput, type HookReply, parseHookInput } from "./hook-input.js";

/** What answers one hook: a reply, or a thrown error (the forwarder then blocks with the reason). */
export type HookHandler = (input: HookInput) => Promise<HookReply>;

/** A running hook server: its URL, the token a forwarder must present, and how to stop it. */
export interface HookServer {
  url: string;
  token: string;
  close(): Promise<void>;
}

const MAX_BODY = 2_000_000;

/**
 * Serves loopgate's hooks to the forwarder inside the agent's sandbox, on 127.0.0.1 only, behind a random
 * token (it stops other local users; the agent itself can read the token from its read-only settings, and
 * can at most ask for its own work to be checked or report tool calls, which are agent_runtime facts).
 * Every failure is an HTTP error, which the forwarder turns into a block: nothing here fails open.
 */
export async function startHookServer(
  handle: HookHandler,
  onError?: (why: string) => void,
): Promise<HookServer> {
  const token = randomBytes(24).toString("hex");
  const expected = Buffer.from(`Bearer ${token}`);
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const auth = Buffer.from(String(req.headers.authorization ?? ""));
    if (req.method !== "POST" || auth.length !== expected.length || !timingSafeEqual(auth, expected)) {
      send(401, { error: "not loopgate's hook forwarder" });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(c);
    });
    req.on("end", () => {
      const parsed = parseHookInput(Buffer.concat(chunks).toString("utf8"));
      if ("error" in parsed) {
        onError?.(parsed.error);
        send(400, { error: parsed.error });
        return;
      }
      handle(parsed.input).then(
        (reply) => send(200, reply),
        (e: unknown) => {
          const why = e instanceof Error ? e.message : String(e);
          onError?.(why);
          send(500, { error: why });
        },
      );
    });
  });
  // Gates may take minutes: the forwarder's deadline decides, not Node's default request timeout.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
