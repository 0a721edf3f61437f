import { chmodSync, chownSync, closeSync, openSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import type { SandboxUser } from "../../sandbox/sandbox-user.js";
import { type HookInput, type HookReply, parseHookInput } from "../stop-gate/hook-input.js";

/** What answers one hook: a reply, or a thrown error (the forwarder then blocks with the reason). */
export type HookHandler = (input: HookInput) => Promise<HookReply>;

/** A running hook server: the Unix socket a forwarder connects to, and how to stop it. */
export interface HookServer {
  socket: string;
  close(): Promise<void>;
}

/** Where the hook server listens and who may connect. */
export interface HookServerOptions {
  /** The folder the socket is made in (`hook.sock`): loopgate's, inside the 0700 run folder. */
  dir: string;
  /** The sandbox's own user when loopgate runs as root (it must connect): the socket is handed to it. */
  owner: SandboxUser | null;
  onError?: (why: string) => void;
}

/** The socket's name inside its folder (the forwarder connects to it relative to the folder). */
export const HOOK_SOCKET = "hook.sock";

const MAX_BODY = 2_000_000;

/**
 * Serves loopgate's hooks to the forwarder inside the agent's sandbox over a Unix socket. Access is decided
 * by where the socket is, not by a secret: it lives in the run folder (0700, loopgate's), is 0600 and owned
 * by loopgate's user (or handed to the sandbox's user when loopgate is root), and is mounted into the
 * agent's sandbox alone. Nothing the agent can read (its hook command, settings, environment) holds a
 * credential, so nothing it can send to its provider does. The agent itself can connect, as its hooks do:
 * what it reports this way is only believed when Claude's own transcript confirms it (transcript.ts).
 * Every failure is an HTTP error, which the forwarder turns into a block: nothing here fails open.
 */
export async function startHookServer(handle: HookHandler, o: HookServerOptions): Promise<HookServer> {
  const socket = join(o.dir, HOOK_SOCKET);
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method !== "POST") {
      send(405, { error: "loopgate's hook socket takes POST only" });
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
        o.onError?.(parsed.error);
        send(400, { error: parsed.error });
        return;
      }
      handle(parsed.input).then(
        (reply) => send(200, reply),
        (e: unknown) => {
          const why = e instanceof Error ? e.message : String(e);
          o.onError?.(why);
          send(500, { error: why });
        },
      );
    });
  });
  // Gates may take minutes: the forwarder's deadline decides, not Node's default request timeout.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  rmSync(socket, { force: true });
  // Bound through the folder's descriptor: a socket address holds at most 107 bytes, a store path may not.
  const dirFd = openSync(o.dir, "r");
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(`/proc/self/fd/${dirFd}/${HOOK_SOCKET}`, () => resolve());
    });
  } finally {
    closeSync(dirFd);
  }
  // Made with the umask's mode (no write for others, so no one else could connect meanwhile); now 0600.
  chmodSync(socket, 0o600);
  if (o.owner) chownSync(socket, o.owner.uid, o.owner.gid);
  return {
    socket,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          rmSync(socket, { force: true });
          resolve();
        });
      }),
  };
}
