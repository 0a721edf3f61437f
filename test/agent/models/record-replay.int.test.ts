import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MockLanguageModelV3 } from "ai/test";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { aiSdkModel } from "../../../src/agent/models/ai-sdk-model.js";
import type { ModelRequest, ModelResponse } from "../../../src/agent/models/model.js";
import { createModel } from "../../../src/agent/models/provider.js";
import { recordingModel } from "../../../src/agent/models/recording-model.js";
import { loadScript } from "../../../src/agent/models/script-file.js";
import { loadScriptedModel, scriptedModel } from "../../../src/agent/models/scripted-model.js";
import { InputError } from "../../../src/core/kernel/errors.js";
import { mockResult, toolCallPart } from "./mock-results.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "loopgate-models-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const req: ModelRequest = {
  system: "s",
  messages: [{ role: "user", content: "go", origin: "operator" }],
  tools: [{ name: "bash", description: "Run.", inputSchema: z.object({ command: z.string() }) }],
};

describe("record → replay", () => {
  it("a recorded session replays to the same responses, and the file is valid after each one", async () => {
    const provider = new MockLanguageModelV3({
      modelId: "claude-sonnet-4-5",
      doGenerate: [
        mockResult(
          [
            { type: "text", text: 'Looking: it\'s "quoted"\n# not a comment' },
            toolCallPart("toolu_a", "bash", '{"command":"ls -la"}'),
          ],
          {
            finish: "tool-calls",
            input: 100,
            output: 20,
          },
        ),
        mockResult([toolCallPart("toolu_b", "bash", '{"command": ')], {
          finish: "tool-calls",
          input: 130,
          output: 9,
        }),
        mockResult([{ type: "text", text: "Done." }], { finish: "stop", input: 150, output: 2 }),
      ],
    });
    const file = join(dir, "session.yaml");
    const recorder = recordingModel(aiSdkModel("anthropic:claude-sonnet-4-5", provider), file);
    expect(loadScript(file)).toEqual([]);

    const live: ModelResponse[] = [];
    for (let i = 0; i < 3; i += 1) {
      live.push(await recorder.generate(req));
      expect(loadScript(file)).toHaveLength(i + 1);
    }
    expect(live.every((r) => r.ok)).toBe(true);
    expect(readdirSync(dir)).toEqual(["session.yaml"]);

    const replay = createModel(`replay:${file}`);
    expect(replay.id).toBe(`replay:${file}`);
    const replayed = [await replay.generate(req), await replay.generate(req), await replay.generate(req)];
    expect(replayed).toEqual(live);
    expect(replayed[1]).toMatchObject({ ok: true, toolCalls: [{ id: "toolu_b", args: '{"command": ' }] });
    expect(await replay.generate(req)).toMatchObject({ ok: false, error: { kind: "script_exhausted" } });
  });

  it("failures are not recorded", async () => {
    const file = join(dir, "r.yaml");
    const recorder = recordingModel(scriptedModel([{ text: "one" }]), file);
    await recorder.generate(req);
    const exhausted = await recorder.generate(req);
    expect(exhausted.ok).toBe(false);
    expect(loadScript(file)).toEqual([
      {
        text: "one",
        tool_calls: [],
        usage: { input_tokens: 0, output_tokens: 0, cost_usd: 0 },
        finish_reason: "stop",
      },
    ]);
  });

  it("createModel records through --record, and an unwritable record path is an InputError", async () => {
    const script = join(dir, "s.yaml");
    writeFileSync(script, "- text: hi\n  tool_calls: [{ name: bash, args: { command: pwd } }]\n");
    const recorded = join(dir, "rec.yaml");
    const model = createModel(`scripted:${script}`, { record: recorded });
    const response = await model.generate(req);
    expect(response.ok).toBe(true);
    expect(await createModel(`replay:${recorded}`).generate(req)).toEqual(response);
    expect(() => createModel(`scripted:${script}`, { record: join(dir, "missing", "rec.yaml") })).toThrow(
      InputError,
    );
  });

  it("round-trips any JSON text and args through the file", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.dictionary(fc.string(), fc.jsonValue()), async (text, args) => {
        const file = join(dir, "p.yaml");
        const original = scriptedModel([{ text, tool_calls: [{ id: "x", name: "bash", args }] }]);
        const live = await recordingModel(original, file).generate(req);
        expect(await loadScriptedModel(file).generate(req)).toEqual(live);
      }),
      { numRuns: 100 },
    );
  });
});

describe("loading scripted model files", () => {
  it("a missing file is an InputError naming it", () => {
    const missing = join(dir, "nope.yaml");
    expect(() => createModel(`scripted:${missing}`)).toThrow(
      `${missing}: cannot read the scripted model file: no such file`,
    );
  });

  it("a resumed run starts at its position", async () => {
    const script = join(dir, "s.json");
    writeFileSync(script, JSON.stringify([{ text: "a" }, { text: "b" }]));
    const model = createModel(`scripted:${script}`, { position: 1 });
    expect(await model.generate(req)).toMatchObject({ ok: true, text: "b" });
    expect(readFileSync(script, "utf8")).toContain('"a"');
  });
});
