/**
 * Where a JavaScript test writes its expected values: the assertion calls loopgate recognises, and the
 * argument of each that holds the expected side. Only equality assertions: a changed value must make
 * them fail (`notEqual`, `throws`, `match`, snapshots and `.not.` chains are left alone).
 */
import type { CallExpression, Expression, Node } from "@babel/types";
import { literalKind, literalsIn } from "./js-literals.js";

/** `R.M(actual, EXPECTED, …)`: node:assert, chai's assert, tape's `t`, with any receiver name. */
const EQUAL_METHODS = new Set([
  "equal",
  "strictEqual",
  "deepEqual",
  "deepStrictEqual",
  "is",
  "same",
  "looseEqual",
  "deepLooseEqual",
  "equals",
  "isEqual",
  "strictEquals",
]);
/** The same methods imported on their own (`import { equal } from "node:assert/strict"`). */
const BARE_EQUAL = new Set(["equal", "strictEqual", "deepEqual", "deepStrictEqual"]);
/** `assert(a === E)`, `ok(a === E)`, `assert.ok(a === E)`, `t.assert(a === E)`. */
const TRUTHY = new Set(["assert", "ok"]);
/** jest / vitest matchers and the modifiers allowed between `expect(x)` and them. */
const JEST_MATCHERS = new Set(["toBe", "toEqual", "toStrictEqual"]);
const JEST_MODIFIERS = new Set(["resolves", "rejects"]);
/** chai's equality methods and the language chains that do not change their meaning (`not` does). */
const CHAI_METHODS = new Set(["equal", "equals", "eq", "eql", "eqls"]);
const CHAI_WORDS = new Set([
  "to",
  "be",
  "been",
  "is",
  "that",
  "which",
  "and",
  "has",
  "have",
  "with",
  "at",
  "of",
  "same",
  "but",
  "does",
  "still",
  "also",
  "deep",
]);

/** The property name of a non-computed member access, or null. */
function propertyName(node: Node): string | null {
  if (node.type !== "MemberExpression" && node.type !== "OptionalMemberExpression") return null;
  if (node.computed || node.property.type !== "Identifier") return null;
  return node.property.name;
}

/**
 * An identifier or a chain of plain member accesses on one (`assert`, `t.assert`, `assert.strict`); not a
 * chai chain through `should` or `not`, where the same method names mean something else.
 */
function isReceiver(node: Node): boolean {
  if (node.type === "Identifier" || node.type === "ThisExpression") return true;
  const p = propertyName(node);
  return p !== null && p !== "not" && p !== "should" && isReceiver((node as { object: Node }).object);
}

/** `expect(x)` or `expect.soft(x)` (vitest), `chai.expect(x)`. */
function isExpectCall(node: Node): boolean {
  if (node.type !== "CallExpression" || node.arguments.length < 1) return false;
  const c = node.callee;
  if (c.type === "Identifier") return c.name === "expect";
  const p = propertyName(c);
  const object = (c as { object: Node }).object;
  if (p === "soft") return object.type === "Identifier" && object.name === "expect";
  return p === "expect" && object.type === "Identifier";
}

/** Whether the member chain below a matcher is `expect(x)` with only `allowed` words, or `….should` (chai). */
function chainOk(node: Node, allowed: ReadonlySet<string>, should: boolean): boolean {
  if (isExpectCall(node)) return true;
  const p = propertyName(node);
  if (p === null) return false;
  if (should && p === "should") return true;
  return allowed.has(p) && chainOk((node as { object: Node }).object, allowed, should);
}

/** The expression an argument holds, or null for a spread or a placeholder. */
function argument(call: CallExpression, i: number): Expression | null {
  const a = call.arguments[i];
  return a && a.type !== "SpreadElement" && a.type !== "ArgumentPlaceholder" ? a : null;
}

/** The right side of `a === E` / `a == E`. */
function equalityRight(node: Expression | null): Expression | null {
  if (node?.type !== "BinaryExpression") return null;
  return node.operator === "===" || node.operator === "==" ? node.right : null;
}

/** The expected-value argument of a recognised equality assertion, or null when the call is not one. */
export function expectedOf(call: CallExpression): Expression | null {
  const callee = call.callee;
  if (callee.type === "Identifier") {
    if (BARE_EQUAL.has(callee.name) && call.arguments.length >= 2) return argument(call, 1);
    if (TRUTHY.has(callee.name)) return equalityRight(argument(call, 0));
    return null;
  }
  const method = propertyName(callee);
  if (method === null) return null;
  const object = (callee as { object: Node }).object;
  if (JEST_MATCHERS.has(method)) return chainOk(object, JEST_MODIFIERS, false) ? argument(call, 0) : null;
  if (CHAI_METHODS.has(method) && chainOk(object, CHAI_WORDS, true)) return argument(call, 0);
  if (!isReceiver(object)) return null;
  if (EQUAL_METHODS.has(method) && call.arguments.length >= 2) return argument(call, 1);
  if (TRUTHY.has(method)) return equalityRight(argument(call, 0));
  return null;
}

/** One literal in an expected value: its key in the test and its node. */
export interface SiteNode {
  key: string;
  node: Node;
}

/**
 * The literal sites of a test's assertions (calls in its own body, not in nested tests): key
 * `<assertion index>.<literal index>`, both counted from 0 in source order. Every recognised assertion
 * takes an index, with or without literals, so a key names the same literal in every analysis.
 */
export function sitesOf(calls: readonly CallExpression[]): SiteNode[] {
  const assertions = calls
    .map((call) => ({ call, expected: expectedOf(call) }))
    .filter((a): a is { call: CallExpression; expected: Expression } => a.expected !== null)
    .sort((a, b) => (a.call.start ?? 0) - (b.call.start ?? 0));
  return assertions.flatMap(({ expected }, i) =>
    literalsIn(expected)
      .filter((n) => literalKind(n) !== null)
      .map((node, j) => ({ key: `${i}.${j}`, node })),
  );
}
