import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/core/errors.js";
import { storeLocation } from "../../src/store/open-store.js";
import { maskUrl, parsePostgresUrl } from "../../src/store/pg-url.js";

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
