import { createHash } from "node:crypto";
import { lstat, realpath } from "node:fs/promises";
import { isDeepStrictEqual } from "node:util";
import type { StaticGateSpec } from "../core/task/task.js";
import { resolveInside } from "../workspace/safe-path.js";
import { readRegularFile, STATIC_GATE_BYTES } from "../workspace/safe-read.js";
import type { Gate, GateContext, GateResult } from "./gate.js";

/** Resolves a JSON pointer (RFC 6901); `undefined` when a step does not exist. */
export function jsonPointer(doc: unknown, pointer: string): unknown {
  if (pointer === "") return doc;
  let node: unknown = doc;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) {
      if (!/^(0|[1-9]\d*)$/.test(key)) return undefined;
      node = node[Number(key)];
    } else if (node !== null && typeof node === "object" && Object.hasOwn(node, key)) {
      node = (node as Record<string, unknown>)[key];
    } else return undefined;
  }
  return node;
}

type Check = { passed: boolean; summary: string; error?: "unreadable" };

/** A deterministic in-process check on one file of the gate environment. */
export function staticGate(spec: StaticGateSpec): Gate {
  const s = spec.static;
  return {
    id: spec.id,
    kind: "static",
    feedback: spec.feedback,
    heldout: null,
    canary: null,
    writable: false,
    async run(ctx: GateContext): Promise<GateResult> {
      const started = performance.now();
      const check = await evaluate(ctx.gateEnv).catch(
        (e: unknown): Check => ({
          passed: false,
          summary: `unreadable: ${(e as Error).message}`,
          error: "unreadable",
        }),
      );
      return {
        passed: check.passed,
        exit_code: null,
        timed_out: false,
        error: check.error ?? null,
        duration_ms: Math.round(performance.now() - started),
        log_excerpt: check.summary,
        summary: check.summary,
        infrastructure: null,
      };
    },
  };

  async function evaluate(root: string): Promise<Check> {
    const abs = resolveInside(root, s.path);
    const st = await lstat(abs).catch(() => null);
    if (s.absent)
      return st
        ? { passed: false, summary: `${s.path} exists` }
        : { passed: true, summary: `${s.path} absent` };
    if (!st) return { passed: false, summary: `${s.path} does not exist` };
    // A symlink may point anywhere; the gate reads only what really lies inside the environment.
    const real = await realpath(abs);
    const realRoot = await realpath(root);
    if (real !== realRoot && !real.startsWith(`${realRoot}/`))
      return {
        passed: false,
        summary: `${s.path} resolves outside the gate environment`,
        error: "unreadable",
      };
    if (s.exists) return { passed: true, summary: `${s.path} exists` };
    const read = readRegularFile(real, STATIC_GATE_BYTES);
    if (!read.ok) return { passed: false, summary: `${s.path} is ${describe(read)}`, error: "unreadable" };
    const bytes = read.bytes;
    if (s.sha256 !== undefined) {
      const got = createHash("sha256").update(bytes).digest("hex");
      return got === s.sha256
        ? { passed: true, summary: `${s.path} sha256 matches` }
        : { passed: false, summary: `${s.path} sha256 is ${got}, expected ${s.sha256}` };
    }
    const text = bytes.toString("utf8");
    if (s.match !== undefined || s.not_match !== undefined) {
      const re = new RegExp((s.match ?? s.not_match) as string, "m");
      const found = re.exec(text);
      const line = found ? text.slice(0, found.index).split("\n").length : 0;
      if (s.match !== undefined)
        return found
          ? { passed: true, summary: `${s.path}:${line} matches /${s.match}/` }
          : { passed: false, summary: `${s.path} does not match /${s.match}/` };
      return found
        ? { passed: false, summary: `${s.path}:${line} matches /${s.not_match}/, which it must not` }
        : { passed: true, summary: `${s.path} does not match /${s.not_match}/` };
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      return {
        passed: false,
        summary: `${s.path} is not valid JSON: ${(e as Error).message}`,
        error: "unreadable",
      };
    }
    const pointer = s.json_pointer ?? "";
    const value = jsonPointer(doc, pointer);
    if (value === undefined)
      return { passed: false, summary: `${s.path}: nothing at JSON pointer ${pointer}` };
    return isDeepStrictEqual(value, s.equals)
      ? { passed: true, summary: `${s.path}${pointer} equals ${JSON.stringify(s.equals)}` }
      : {
          passed: false,
          summary: `${s.path}${pointer} is ${JSON.stringify(value).slice(0, 200)}, expected ${JSON.stringify(s.equals)}`,
        };
  }
}

/** What a static gate's file turned out to be, when it cannot be read as one. */
function describe(r: { reason: string; detail: string }): string {
  switch (r.reason) {
    case "missing":
      return "missing";
    case "not_regular":
      return `not a regular file (${r.detail})`;
    case "too_large":
      return `too large to check (${r.detail})`;
    default:
      return `unreadable (${r.detail})`;
  }
}
