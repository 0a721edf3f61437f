import { describe, expect, it } from "vitest";
import { codexBuilder, codexConfig, codexFromDescriptor } from "../../../src/builders/codex/codex-builder.js";

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
