import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach } from "vitest";
import type { ToolContext } from "../../../src/agent/tools/tool.js";
import { defaultTools, executeToolCall } from "../../../src/agent/tools/tool-registry.js";
import type { SandboxMode } from "../../../src/sandbox/bubblewrap.js";

/** A fresh root per test holding `ws` (the workspace) and a sibling `heldout` with a secret file. */
export interface Fixture {
  root: string;
  ws: string;
  heldout: string;
  ctx: ToolContext;
  call(name: string, args: unknown, over?: Partial<ToolContext>): ReturnType<typeof executeToolCall>;
  write(rel: string, content: string | Buffer): void;
}

export const HELDOUT_SECRET = "held-out-answer-42";

export function useFixture(mode: SandboxMode = "bubblewrap"): Fixture {
  const f = {} as Fixture;
  beforeEach(() => {
    f.root = mkdtempSync(path.join(tmpdir(), "lg-tools-"));
    f.ws = path.join(f.root, "ws");
    f.heldout = path.join(f.root, "heldout");
    mkdirSync(f.ws);
    mkdirSync(f.heldout);
    writeFileSync(path.join(f.heldout, "x"), HELDOUT_SECRET);
    f.ctx = { workspace: f.ws, sandbox: mode, network: false, timeoutMs: 30_000 };
    f.call = (name, args, over) =>
      executeToolCall(defaultTools, { id: "c1", name, args }, { ...f.ctx, ...over });
    f.write = (rel, content) => {
      mkdirSync(path.dirname(path.join(f.ws, rel)), { recursive: true });
      writeFileSync(path.join(f.ws, rel), content);
    };
  });
  afterEach(() => {
    rmSync(f.root, { recursive: true, force: true });
  });
  return f;
}
