import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/core/kernel/errors.js";
import {
  connectErrorFromPg,
  maskUrl,
  parsePostgresUrl,
  pgConnectionString,
  storeErrorFromPg,
} from "../../src/store/kernel/pg-url.js";
import { StoreError } from "../../src/store/kernel/store-errors.js";
import { storeLocation } from "../../src/store/open-store.js";

describe("storeLocation", () => {
  it("reads a folder, or the fallback when nothing is given", () => {
    expect(storeLocation(undefined, "fallback")).toEqual({
      kind: "folder",
      dir: resolve("fallback"),
      label: resolve("fallback"),
    });
    expect(storeLocation("some/dir", "fallback")).toMatchObject({ kind: "folder", dir: resolve("some/dir") });
    // A colon alone is a legal folder name character, as before.
    expect(storeLocation("a:b", "x")).toMatchObject({ kind: "folder", dir: resolve("a:b") });
  });

  it("selects PostgreSQL for postgres:// and postgresql://, keeping run files in the fallback folder", () => {
    for (const url of ["postgres://u:pw@db.example:6543/runs", "postgresql://u:pw@db.example:6543/runs"]) {
      expect(storeLocation(url, "local")).toEqual({
        kind: "postgres",
        url,
        dir: resolve("local"),
        label: url.replace(":pw@", ":***@"),
      });
    }
  });

  it("refuses every other scheme:// and a postgres: without //", () => {
    for (const bad of ["mysql://h/db", "sqlite://x.db", "S3://bucket", "file:///tmp/x", "postgres:foo"]) {
      expect(() => storeLocation(bad, "x"), bad).toThrow(InputError);
    }
    expect(() => storeLocation("mysql://h/db", "x")).toThrow(/mysql:\/\/ is not a supported store/);
  });

  it("refuses a postgres URL without host or database, never echoing the password", () => {
    for (const bad of [
      "postgres://x",
      "postgres://u:pw@h/",
      "postgres://u:pw@/db",
      "postgres://u:pw@h/a/b",
    ]) {
      let message = "";
      try {
        storeLocation(bad, "x");
      } catch (e) {
        expect(e).toBeInstanceOf(InputError);
        message = (e as Error).message;
      }
      expect(message, bad).toMatch(/names no (host|database)|is not a valid URL/);
      expect(message).not.toContain(":pw@");
    }
  });
});

describe("maskUrl and parsePostgresUrl", () => {
  it("masks only the password", () => {
    expect(maskUrl("postgres://alice:p%40ss@h:5432/db?sslmode=require")).toBe(
      "postgres://alice:***@h:5432/db?sslmode=require",
    );
    expect(maskUrl("postgres://alice@h/db")).toBe("postgres://alice@h/db");
    expect(maskUrl("postgres://alice:secret@[broken/db")).toBe("postgres://alice:***@[broken/db");
  });

  it("reads host, port (5432 by default) and a percent-encoded database name", () => {
    expect(parsePostgresUrl("postgres://h/my%20db")).toMatchObject({
      host: "h",
      port: 5432,
      database: "my db",
    });
    expect(parsePostgresUrl("postgres://h:6000/d")).toMatchObject({ port: 6000, database: "d" });
  });
});

describe("pgConnectionString", () => {
  it("asks for verify-full by name where pg 8 reads prefer, require and verify-ca as verify-full", () => {
    for (const mode of ["prefer", "require", "verify-ca"]) {
      expect(pgConnectionString(`postgres://u:pw@h/db?sslmode=${mode}`)).toBe(
        "postgres://u:pw@h/db?sslmode=verify-full",
      );
      expect(pgConnectionString(`postgres://h/db?application_name=x&sslmode=${mode}&connect_timeout=5`)).toBe(
        "postgres://h/db?application_name=x&sslmode=verify-full&connect_timeout=5",
      );
    }
  });

  it("leaves every other URL as it is, and libpq's semantics when the URL asks for them", () => {
    for (const url of [
      "postgres://h/db",
      "postgres://h/db?sslmode=disable",
      "postgres://h/db?sslmode=verify-full",
      "postgres://h/db?sslmode=no-verify",
      "postgres://h/db?sslmode=required",
      "postgres://h/db?uselibpqcompat=true&sslmode=require",
      "postgres://h/require?x=sslmode%3Drequire",
    ])
      expect(pgConnectionString(url), url).toBe(url);
  });
});

describe("connection failures as one StoreError", () => {
  const target = parsePostgresUrl("postgres://u:secret@db.example:5433/runs?sslmode=require");

  it("a server without TLS, when the URL asks for it", () => {
    const e = connectErrorFromPg(target, new Error("The server does not support SSL connections"));
    expect(e).toBeInstanceOf(StoreError);
    expect(e.message).toBe(
      "store postgres://u:***@db.example:5433/runs?sslmode=require: the server at db.example:5433 does not accept TLS, which the URL asks for (sslmode); nothing was written; enable ssl on the server, or drop sslmode from the URL (sslmode=disable) to connect without TLS",
    );
  });

  it("a certificate refused", () => {
    const cert = Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" });
    const e = connectErrorFromPg(target, cert);
    expect(e.message).toContain(
      "the TLS connection to db.example:5433 was refused (DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate)",
    );
    expect(e.message).toContain("sslrootcert");
  });

  it("anything else that stops a connection still names the store, in one line, without the password", () => {
    const e = connectErrorFromPg(target, new Error("something unforeseen"));
    expect(e).toBeInstanceOf(StoreError);
    expect(e.message).toMatch(
      /^store postgres:\/\/u:\*\*\*@db\.example:5433\/runs\?sslmode=require: cannot connect \(something unforeseen\)/,
    );
    expect(e.message).not.toContain("secret");
    expect(e.message).not.toContain("\n");
    // Outside a connection, an error that is not about reaching the database stays what it is.
    expect(storeErrorFromPg(target, new Error("something unforeseen"))).toBeUndefined();
  });
});
