import { appendFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { InputError } from "../../../core/kernel/errors.js";
import { loadScript, type ScriptedResponse } from "../script-file.js";
import { anthropicProtocol } from "./anthropic.js";
import { openaiChatProtocol } from "./openai-chat.js";
import { openaiResponsesProtocol } from "./openai-responses.js";
import { mapToolCalls } from "./tool-names.js";
import { type Protocol, type Reply, record, usageOf, type WireProtocol } from "./wire.js";

export { PROTOCOLS, type Protocol } from "./wire.js";

const WIRE: Record<Protocol, WireProtocol> = {
  anthropic: anthropicProtocol,
  "openai-responses": openaiResponsesProtocol,
  "openai-chat": openaiChatProtocol,
};

/** Tool call ids per protocol, when the script gives none: `toolu_1_0`, `call_1_0`. */
const ID_PREFIX: Record<Protocol, string> = {
  anthropic: "toolu_",
  "openai-responses": "call_",
  "openai-chat": "call_",
};

export interface ModelServerOptions {
  protocol: Protocol;
  /** The scripted responses, or the path of a scripted model file (or a `--record`ed session). */
  script: readonly ScriptedResponse[] | string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Also append every request, one JSON line each, to this file (created empty at start). */
  requestsFile?: string;
  /** Called once per request after it was answered (for a CLI's log line). */
  onRequest?: (request: RecordedRequest) => void;
  /**
   * A provider that is down: every step is answered with this HTTP status (in the protocol's error
   * shape) and consumes nothing, e.g. 401, 429 or 503, to test what a client does with it.
   */
  failWith?: { status: number; message?: string };
}

/** One request the server got, as recorded (credentials redacted). */
export interface RecordedRequest {
  /** 1-based order of arrival. */
  seq: number;
  /** `step`: consumed scripted response `step`; `side`: answered locally; the others are errors (`failed`: `failWith`). */
  kind: "step" | "side" | "exhausted" | "not_found" | "bad_request" | "failed";
  step?: number;
  /** For a side request: what it was taken for. */
  what?: string;
  method: string;
  /** The path with its query string, as sent. */
  url: string;
  headers: Record<string, string>;
  /** The JSON body (undefined when none). */
  body: unknown;
  /** The tool names the request offered (`tools[].name`). */
  tools: string[];
  status: number;
}

export interface ModelServer {
  /** `http://HOST:PORT` (no trailing slash, no `/v1`). */
  url: string;
  port: number;
  protocol: Protocol;
  /** Every request so far, in order. */
  readonly requests: readonly RecordedRequest[];
  /** Responses consumed so far. */
  readonly position: number;
  /** Responses the script holds. */
  readonly length: number;
  /** Set once a step arrived after the last response: the message the client was sent. */
  readonly exhausted: string | undefined;
  close(): Promise<void>;
}

/**
 * Serves a scripted model over a real wire protocol: each agent step (a model request that offers
 * tools) consumes the next scripted response; side requests (token counts, model lists, health,
 * requests without tools) are answered locally and consume nothing. A step after the last
 * response gets an HTTP 400 naming `script_exhausted` (the client shows it and does not retry),
 * and `exhausted` says so, so a caller can fail loudly.
 */
export async function startModelServer(options: ModelServerOptions): Promise<ModelServer> {
  const wire = WIRE[options.protocol];
  if (!wire) throw new InputError(`unknown protocol ${JSON.stringify(options.protocol)}`, "--protocol");
  const script = typeof options.script === "string" ? loadScript(options.script) : [...options.script];
  if (options.requestsFile !== undefined) {
    try {
      writeFileSync(options.requestsFile, "");
    } catch (error) {
      throw new InputError(`cannot write: ${(error as Error).message}`, options.requestsFile, {
        cause: error,
      });
    }
  }
  const requests: RecordedRequest[] = [];
  let position = 0;
  let exhausted: string | undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = req.url ?? "/";
    const path = normalize(url);
    const method = req.method ?? "GET";
    const entry: RecordedRequest = {
      seq: requests.length + 1,
      kind: "side",
      method,
      url,
      headers: redactHeaders(req),
      body: undefined,
      tools: [],
      status: 200,
    };
    requests.push(entry);
    let reply: Reply;
    try {
      entry.body = await readBody(req);
      entry.tools = wire.offeredTools(entry.body);
      reply = answer(method, path, entry);
    } catch (error) {
      entry.kind = "bad_request";
      reply = wire.renderError(400, `loopgate model-server: ${(error as Error).message}`);
    }
    entry.status = reply.status;
    if (options.requestsFile !== undefined)
      appendFileSync(options.requestsFile, `${JSON.stringify(entry)}\n`);
    send(res, reply);
    options.onRequest?.(entry);
  };

  const answer = (method: string, path: string, entry: RecordedRequest): Reply => {
    if (method === "HEAD") {
      entry.what = "HEAD";
      return { status: 200, empty: true };
    }
    if (method === "GET" && (path === "" || path === "/health" || path === "/healthz")) {
      entry.what = "health";
      return {
        status: 200,
        json: { ok: true, protocol: wire.name, position, length: script.length },
      };
    }
    const route = wire.route(method, path, entry.body);
    if (route.kind === "side") {
      entry.what = route.what;
      return route.reply;
    }
    if (route.kind === "not_found") {
      entry.kind = "not_found";
      return wire.renderError(
        404,
        `loopgate model-server (${wire.name}): no such endpoint ${method} ${path}`,
      );
    }
    if (options.failWith) {
      entry.kind = "failed";
      return wire.renderError(
        options.failWith.status,
        options.failWith.message ??
          `loopgate model-server: failing on purpose with HTTP ${options.failWith.status}`,
      );
    }
    const response = script[position];
    if (response === undefined) {
      entry.kind = "exhausted";
      exhausted = `script_exhausted: loopgate model-server was asked for response ${script.length + 1} but the script has ${script.length}`;
      return wire.renderError(400, exhausted);
    }
    position += 1;
    entry.kind = "step";
    entry.step = position;
    const body = record(entry.body);
    return wire.renderStep({
      step: position,
      model: typeof body.model === "string" ? body.model : "scripted",
      text: response.text,
      toolCalls: mapToolCalls(response, position, entry.tools, ID_PREFIX[wire.name]),
      usage: usageOf(response, entry.body),
      stream: body.stream === true,
      body: entry.body,
    });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(`loopgate model-server: internal error: ${(error as Error).message}`);
    });
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(new InputError(`cannot listen on ${host}:${options.port ?? 0}: ${error.message}`, "--port")),
    );
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    protocol: wire.name,
    get requests() {
      return requests;
    },
    get position() {
      return position;
    },
    get length() {
      return script.length;
    },
    get exhausted() {
      return exhausted;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The path without its query string and trailing slash (each protocol accepts its own `/v1` forms). */
function normalize(url: string): string {
  const path = url.split("?")[0] ?? "/";
  return path.replace(/\/+$/, "");
}

const SECRET_HEADERS = new Set(["authorization", "x-api-key", "cookie", "proxy-authorization"]);

function redactHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    out[name] = SECRET_HEADERS.has(name) ? "[redacted]" : Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

const MAX_BODY = 64 * 1024 * 1024;

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error(`request body over ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  let raw = Buffer.concat(chunks);
  const encoding = (req.headers["content-encoding"] ?? "identity").toLowerCase();
  if (encoding === "gzip") raw = gunzipSync(raw);
  else if (encoding === "deflate") raw = inflateSync(raw);
  else if (encoding === "br") raw = brotliDecompressSync(raw);
  else if (encoding !== "identity") throw new Error(`unsupported content-encoding ${encoding}`);
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch {
    throw new Error("the request body is not JSON");
  }
}

function send(res: ServerResponse, reply: Reply): void {
  if ("empty" in reply) {
    res.writeHead(reply.status, reply.headers);
    res.end();
    return;
  }
  if ("json" in reply) {
    res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
    res.end(JSON.stringify(reply.json));
    return;
  }
  res.writeHead(reply.status, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    ...reply.headers,
  });
  for (const event of reply.sse) {
    const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
    res.write(`${event.event === undefined ? "" : `event: ${event.event}\n`}data: ${data}\n\n`);
  }
  res.end();
}
