import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { codexBuilder, codexConfig, codexFromDescriptor } from "../../../src/builders/codex/codex-builder.js";
import { CODEX_INSTALL, codexPreflight } from "../../../src/builders/codex/codex-find.js";
import { writeCodexHome } from "../../../src/builders/codex/codex-home.js";

describe("codexBuilder's descriptor", () => {
  it("says the network is shared only to reach the provider, and a resume rebuilds the same adapter from it", () => {
    const b = codexBuilder({ model: "gpt-x", baseUrl: "http://127.0.0.1:9999/v1/" });
    expect(b.descriptor.kind).toBe("command");
    expect(b.descriptor.command).toContain("model gpt-x at http://127.0.0.1:9999/v1;");
    expect(b.descriptor.command).toContain(
      "network shared with the sandbox only so that codex reaches this provider",
    );
    expect(codexFromDescriptor(b.descriptor.command)?.descriptor).toEqual(b.descriptor);
  });

  it("a plain --builder command that runs codex is not taken for the adapter", () => {
    expect(codexFromDescriptor("codex exec --json fix it")).toBeNull();
    expect(codexFromDescriptor(undefined)).toBeNull();
  });
});

describe("codexConfig", () => {
  it("declares one Responses provider with the key passed by name, values quoted as TOML strings", () => {
    const text = codexConfig('http://h/v1"x', "m", "OPENAI_API_KEY");
    expect(text).toContain('model_provider = "loopgate"');
    expect(text).toContain('wire_api = "responses"');
    expect(text).toContain('env_key = "OPENAI_API_KEY"');
    expect(text).toContain('base_url = "http://h/v1\\"x"');
  });
});

describe("writeCodexHome", () => {
  it("declares loopgate's Stop hook in Codex's inline shape, the files read-only, outside any workspace", () => {
    const base = mkdtempSync(join(tmpdir(), "lg-codex-home-"));
    try {
      const h = writeCodexHome(base, {
        baseUrl: "http://127.0.0.1:1/v1",
        model: "m",
        envKey: "K",
        node: "/usr/bin/node",
        socket: join(base, "codex-hooks", "hook.sock"),
        deadlineSeconds: 200,
      });
      const text = readFileSync(h.config, "utf8");
      expect(text).toContain('[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\n');
      expect(text).toContain(
        `command = "/usr/bin/node ${join(base, "codex-hooks", "loopgate-hook.mjs")} ${join(base, "codex-hooks", "hook.sock")} 200"`,
      );
      // Codex's own limit on the hook is longer than the forwarder's deadline: loopgate answers first.
      expect(text).toContain("timeout = 230");
      expect(statSync(h.config).mode & 0o777).toBe(0o444);
      expect(statSync(h.hooksDir).mode & 0o777).toBe(0o555);
      expect(statSync(join(h.hooksDir, "loopgate-hook.mjs")).mode & 0o777).toBe(0o444);
    } finally {
      chmodSync(join(base, "codex-hooks"), 0o755);
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe("codexPreflight", () => {
  it("a named codex that does not exist, or is not executable, cannot start: the reason names it and the install", () => {
    const base = mkdtempSync(join(tmpdir(), "lg-codex-pre-"));
    try {
      const missing = join(base, "nope");
      expect(codexPreflight(missing)).toBe(
        `codex cannot be started: ${missing} does not exist (or is not codex's npm wrapper or native binary); ${CODEX_INSTALL}, or fix the path`,
      );
      const plain = join(base, "codex");
      writeFileSync(plain, "not a program", { mode: 0o644 });
      expect(codexPreflight(plain)).toBe(
        `codex cannot be started: ${plain} is not executable; reinstall it (${CODEX_INSTALL}) or chmod +x it`,
      );
      chmodSync(plain, 0o755);
      expect(codexPreflight(plain)).toBeNull();
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
