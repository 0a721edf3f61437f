import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  BoardAuth,
  cookieValue,
  generateCredential,
  readTokenFile,
  SESSION_COOKIE,
} from "../../src/serve/board-auth.js";
import { checkBind, isLoopback } from "../../src/serve/board-server.js";

const dir = mkdtempSync(join(tmpdir(), "loopgate-board-auth-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (text: string) => {
  const f = join(dir, `t${Math.random()}`);
  writeFileSync(f, text);
  return f;
};

describe("the board's credential", () => {
  it("a token file is NAME:SECRET on its first line that is not blank or a comment", () => {
    expect(readTokenFile(file("# mine\n\nalice:0123456789abcdefXYZ\n"))).toEqual({
      name: "alice",
      secret: "0123456789abcdefXYZ",
    });
  });

  it.each([
    ["no name", ":0123456789abcdefXYZ"],
    ["a short secret", "alice:short"],
    ["no colon", "0123456789abcdefXYZ"],
    ["a name with a space", "al ice:0123456789abcdefXYZ"],
    ["an empty file", "\n# nothing\n"],
  ])("a token file with %s is refused, naming --token-file and the form", (_, text) => {
    expect(() => readTokenFile(file(text))).toThrow(/--token-file: .* must hold one line NAME:SECRET/);
  });

  it("a missing token file is refused naming it", () => {
    expect(() => readTokenFile(join(dir, "absent"))).toThrow(
      /--token-file: cannot read the token file .*absent: ENOENT/,
    );
  });

  it("a generated credential has a 32-character secret and a clean name", () => {
    const c = generateCredential("some one!");
    expect(c.name).toBe("someone");
    expect(c.secret).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(generateCredential("!!!").name).toBe("operator");
  });

  it("only the secret signs in; a session's CSRF token is its own", () => {
    const auth = new BoardAuth({ name: "alice", secret: "0123456789abcdefXYZ" });
    expect(auth.login("0123456789abcdefXYz")).toBeNull();
    expect(auth.login("")).toBeNull();
    const a = auth.login("0123456789abcdefXYZ") as string;
    const b = auth.login("0123456789abcdefXYZ") as string;
    expect(auth.session(`x=1; ${SESSION_COOKIE}=${a}`)).toEqual({ id: a, name: "alice" });
    expect(auth.session(`${SESSION_COOKIE}=forged`)).toBeNull();
    expect(auth.session(undefined)).toBeNull();
    expect(auth.csrfValid(a, auth.csrf(a))).toBe(true);
    expect(auth.csrfValid(a, auth.csrf(b))).toBe(false);
    expect(auth.csrfValid(a, undefined)).toBe(false);
    expect(auth.csrfValid(a, "")).toBe(false);
  });

  it("without a credential nobody signs in", () => {
    const auth = new BoardAuth(null);
    expect(auth.enabled).toBe(false);
    expect(auth.login("")).toBeNull();
  });

  it("reads one cookie of a header", () => {
    expect(cookieValue("a=1; b=x=y; c=3", "b")).toBe("x=y");
    expect(cookieValue(undefined, "b")).toBeNull();
  });
});

describe("where the board may listen", () => {
  it("loopback addresses", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "::1", "localhost"]) expect(isLoopback(h), h).toBe(true);
    for (const h of ["0.0.0.0", "::", "192.168.1.2", "example.com", "127.0.0.1.example.com"])
      expect(isLoopback(h), h).toBe(false);
  });

  it("a non-loopback address only with a credential", () => {
    expect(() => checkBind("0.0.0.0", null)).toThrow(/--host: 0\.0\.0\.0 is not a loopback address/);
    expect(() => checkBind("0.0.0.0", { name: "a", secret: "0123456789abcdefXYZ" })).not.toThrow();
    expect(() => checkBind("127.0.0.1", null)).not.toThrow();
  });
});
