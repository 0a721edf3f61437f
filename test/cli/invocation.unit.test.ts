import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cliName, packageRoot } from "../../src/cli/invocation.js";

const bin = mkdtempSync(join(tmpdir(), "loopgate-invocation-"));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

describe("cliName: hints the CLI prints work as printed", () => {
  const root = packageRoot();
  it("is `loopgate` when loopgate is on PATH (npm link, a global install)", () => {
    symlinkSync(join(root, "bin", "loopgate.js"), join(bin, "loopgate"));
    expect(cliName({ PATH: bin }, "/", root)).toBe("loopgate");
  });
  it("is `npx loopgate` inside the package folder when loopgate is not on PATH", () => {
    expect(cliName({ PATH: "/nonexistent" }, root, root)).toBe("npx loopgate");
    expect(cliName({ PATH: "/nonexistent" }, join(root, "examples"), root)).toBe("npx loopgate");
  });
  it("is the launcher's path elsewhere", () => {
    expect(cliName({ PATH: "/nonexistent" }, "/tmp", root)).toBe(`node ${join(root, "bin", "loopgate.js")}`);
  });
});
