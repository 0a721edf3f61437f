import { describe, expect, it } from "vitest";
import { approximatePrice } from "../../../src/agent/models/pricing.js";
import { createModel } from "../../../src/agent/models/provider.js";
import { InputError } from "../../../src/core/kernel/errors.js";

function inputError(run: () => unknown): InputError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return error as InputError;
  }
  throw new Error("expected an InputError");
}

describe("createModel: --model values", () => {
  it("rejects a value without a known provider, naming --model and listing the forms", () => {
    for (const spec of ["claude-sonnet-4-5", "antropic:claude-sonnet-4-5", "anthropic:", "scripted:"]) {
      const error = inputError(() => createModel(spec, { env: {} }));
      expect(error.message).toMatch(/^--model: /);
      for (const form of [
        "anthropic:MODEL",
        "openai:MODEL",
        "openai-compatible:MODEL",
        "scripted:FILE",
        "replay:FILE",
      ])
        expect(error.message).toContain(form);
    }
  });

  it("names the missing API key variable", () => {
    expect(inputError(() => createModel("anthropic:claude-sonnet-4-5", { env: {} })).message).toContain(
      "ANTHROPIC_API_KEY",
    );
    expect(
      inputError(() => createModel("openai:gpt-4.1", { env: { OPENAI_API_KEY: "  " } })).message,
    ).toContain("OPENAI_API_KEY");
  });

  it("needs a base URL for openai-compatible, from the option or the environment", () => {
    const missing = inputError(() => createModel("openai-compatible:llama3", { env: {} }));
    expect(missing.message).toContain("--base-url");
    expect(missing.message).toContain("LOOPGATE_OPENAI_COMPATIBLE_BASE_URL");
    expect(
      inputError(() => createModel("openai-compatible:llama3", { env: {}, baseUrl: "localhost" })).message,
    ).toMatch(/--base-url: .*not an http\(s\) URL/);
    const fromEnv = createModel("openai-compatible:llama3", {
      env: { LOOPGATE_OPENAI_COMPATIBLE_BASE_URL: "http://localhost:11434/v1" },
    });
    expect(fromEnv.id).toBe("openai-compatible:llama3");
    expect(createModel("openai-compatible:qwen", { env: {}, baseUrl: "http://127.0.0.1:8080/v1" }).id).toBe(
      "openai-compatible:qwen",
    );
  });

  it("builds provider models without contacting them", () => {
    expect(createModel("anthropic:claude-sonnet-4-5", { env: { ANTHROPIC_API_KEY: "k" } }).id).toBe(
      "anthropic:claude-sonnet-4-5",
    );
    expect(createModel("openai:gpt-4.1", { env: { OPENAI_API_KEY: "k" } }).id).toBe("openai:gpt-4.1");
  });
});

describe("approximate prices", () => {
  it("match the longest family prefix, and nothing unknown", () => {
    expect(approximatePrice("claude-sonnet-4-5-20250929")).toEqual({ inputPerMTok: 3, outputPerMTok: 15 });
    expect(approximatePrice("anthropic:claude-opus-4-1")).toEqual({ inputPerMTok: 15, outputPerMTok: 75 });
    expect(approximatePrice("gpt-4o-mini-2024-07-18")).toEqual({ inputPerMTok: 0.15, outputPerMTok: 0.6 });
    expect(approximatePrice("gpt-4o")).toEqual({ inputPerMTok: 2.5, outputPerMTok: 10 });
    expect(approximatePrice("gpt-5")).toEqual({ inputPerMTok: 1.25, outputPerMTok: 10 });
    expect(approximatePrice("gpt-4o-x")).toEqual({ inputPerMTok: 2.5, outputPerMTok: 10 });
    expect(approximatePrice("gpt-40")).toBeNull();
    expect(approximatePrice("llama3.1:8b")).toBeNull();
  });
});
