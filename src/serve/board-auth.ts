import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { InputError } from "../core/kernel/errors.js";

/** The credential that turns the board's actions on: who writes (recorded with every write) and the secret. */
export interface Credential {
  name: string;
  secret: string;
}

/** The session cookie's name. */
export const SESSION_COOKIE = "loopgate_board";
const NAME = /^[A-Za-z0-9._@-]{1,64}$/;
const MIN_SECRET = 16;

/**
 * A credential from a token file: its first line that is neither blank nor a `#` comment, `NAME:SECRET`
 * (NAME: 1 to 64 of [A-Za-z0-9._@-], the person the writes are recorded for; SECRET: 16 characters or more).
 */
export function readTokenFile(path: string): Credential {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new InputError(
      `cannot read the token file ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      "--token-file",
    );
  }
  const line = text
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "" && !l.startsWith("#"));
  const at = line?.indexOf(":") ?? -1;
  const name = line && at > 0 ? line.slice(0, at) : "";
  const secret = line && at > 0 ? line.slice(at + 1) : "";
  if (!NAME.test(name) || secret.length < MIN_SECRET)
    throw new InputError(
      `${path} must hold one line NAME:SECRET (NAME: 1 to 64 of letters, digits and ._@-, the person its writes are recorded for; SECRET: at least ${MIN_SECRET} characters)`,
      "--token-file",
    );
  return { name, secret };
}

/** A fresh credential for `name` (a random 32-character secret). */
export function generateCredential(name: string): Credential {
  const clean = name.replace(/[^A-Za-z0-9._@-]/g, "").slice(0, 64) || "operator";
  return { name: clean, secret: randomBytes(24).toString("base64url") };
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** A cookie's value from a Cookie header, or null. */
export function cookieValue(header: string | undefined, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return null;
}

/**
 * The board's sessions. Without a credential there are none and every write is refused. With one, a
 * browser that presents the secret once gets a session (an HttpOnly, SameSite=Strict cookie); every form
 * it is served carries that session's CSRF token (an HMAC of the session under a key of this process),
 * and a write must bring both.
 */
export class BoardAuth {
  private readonly sessions = new Map<string, string>();
  private readonly key = randomBytes(32);

  constructor(readonly credential: Credential | null) {}

  /** Whether actions are on at all. */
  get enabled(): boolean {
    return this.credential !== null;
  }

  /** A new session for the right secret, else null. */
  login(secret: string): string | null {
    if (!this.credential || !same(secret, this.credential.secret)) return null;
    const id = randomBytes(24).toString("base64url");
    this.sessions.set(id, this.credential.name);
    return id;
  }

  /** The session of a request's Cookie header, and whose it is; null when it has none (or a stale one). */
  session(cookieHeader: string | undefined): { id: string; name: string } | null {
    const id = cookieValue(cookieHeader, SESSION_COOKIE);
    const name = id ? this.sessions.get(id) : undefined;
    return id && name ? { id, name } : null;
  }

  /** The CSRF token of a session. */
  csrf(sessionId: string): string {
    return createHmac("sha256", this.key).update(`csrf:${sessionId}`).digest("base64url");
  }

  /** Whether `token` is the CSRF token of the session. */
  csrfValid(sessionId: string, token: string | undefined): boolean {
    return token !== undefined && same(token, this.csrf(sessionId));
  }
}
