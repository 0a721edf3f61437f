/**
 * The tests a JavaScript or TypeScript file defines, read from its syntax tree: `test`/`it` calls (and
 * `t.test` subtests) with a literal name and a function, inside `describe`/`suite`/`context` blocks and
 * parent tests. A test can get twins only when its definition runs exactly once and is a statement of its
 * own, so a copy placed beside it defines exactly one more test.
 */
import type { CallExpression, Expression, File, Node } from "@babel/types";
import { childNodes } from "./js-parse.js";

/** A test found in a file, with what rendering needs to rename it and copy it. */
export interface FoundTest {
  path: string[];
  /** The literal that names it. */
  nameNode: Node;
  /** The statement that defines it (`test(…);` or `await t.test(…);`), when it stands on its own. */
  statement: Node | null;
  /** Why it cannot get twins, when it cannot. */
  note: string | null;
  /** Calls made in its own body (not in nested tests): where its assertions are. */
  calls: CallExpression[];
}

const TEST_NAMES = new Set(["test", "it"]);
const SUITE_NAMES = new Set(["describe", "suite", "context"]);
/** jasmine-style prefixes: a test or suite that is skipped or focused. */
const PREFIXED: Record<string, "test" | "suite"> = {
  xit: "test",
  xtest: "test",
  fit: "test",
  xdescribe: "suite",
  fdescribe: "suite",
  xcontext: "suite",
};
/** Modifiers that skip, focus or reschedule a test: its result is not the plain run of its body. */
const MODIFIERS = new Set([
  "skip",
  "only",
  "todo",
  "concurrent",
  "failing",
  "fails",
  "sequential",
  "shuffle",
]);
/** Where a statement can be followed by another one: a copy placed beside it stays in the same block. */
const STATEMENT_LISTS = new Set(["Program", "BlockStatement", "StaticBlock", "SwitchCase", "TSModuleBlock"]);
const LOOPS = new Set([
  "ForStatement",
  "ForInStatement",
  "ForOfStatement",
  "WhileStatement",
  "DoWhileStatement",
]);
const FUNCTIONS = new Set([
  "FunctionDeclaration",
  "FunctionExpression",
  "ArrowFunctionExpression",
  "ObjectMethod",
  "ClassMethod",
  "ClassPrivateMethod",
]);

/** What a call defines: a test or a suite; `modifier` when skipped/focused/…; `named` false for `.each` and kin. */
interface Definition {
  role: "test" | "suite";
  modifier: string | null;
  named: boolean;
}

/** What walking a node knows about where it is. */
interface Scope {
  /** The enclosing suites and parent tests; null when one of them is named at run time. */
  suites: string[] | null;
  /** Why a test defined here may run other than exactly once (a loop, a helper function, …). */
  taint: string | null;
  /** The test whose body this is. */
  owner: FoundTest | null;
}

function propertyOf(node: Node): string | null {
  if (node.type !== "MemberExpression" || node.computed || node.property.type !== "Identifier") return null;
  return node.property.name;
}

/** What a callee defines, if anything. */
function classify(callee: Node): Definition | null {
  if (callee.type === "Identifier") {
    if (TEST_NAMES.has(callee.name)) return { role: "test", modifier: null, named: true };
    if (SUITE_NAMES.has(callee.name)) return { role: "suite", modifier: null, named: true };
    const role = PREFIXED[callee.name];
    return role ? { role, modifier: callee.name, named: true } : null;
  }
  // `test.each(table)(name, fn)`, `test.each\`…\`(name, fn)`, `test.skipIf(c)(name, fn)`: names made per row.
  if (callee.type === "CallExpression" || callee.type === "TaggedTemplateExpression") {
    const inner = callee.type === "CallExpression" ? callee.callee : callee.tag;
    const base = inner.type === "MemberExpression" ? classify(inner.object) : null;
    return base && propertyOf(inner) !== null
      ? { role: base.role, modifier: "parametrised", named: false }
      : null;
  }
  const p = propertyOf(callee);
  if (p === null || callee.type !== "MemberExpression") return null;
  const object = callee.object;
  // Node and tape subtests: `t.test(name, fn)` on the parent's context.
  if (p === "test" && object.type === "Identifier") return { role: "test", modifier: null, named: true };
  const base = classify(object);
  if (base?.named && MODIFIERS.has(p)) return { role: base.role, modifier: `.${p}`, named: true };
  return null;
}

/** A name written as a string literal or a template literal without expressions. */
function literalName(node: Node | undefined): string | null {
  if (!node) return null;
  if (node.type === "StringLiteral") return node.value;
  if (node.type === "TemplateLiteral" && node.expressions.length === 0)
    return node.quasis[0]?.value.cooked ?? null;
  return null;
}

function isFunction(node: Node | undefined): node is Expression & { body: Node } {
  return node?.type === "FunctionExpression" || node?.type === "ArrowFunctionExpression";
}

/** The statement a call is, alone (possibly awaited), in a list of statements; else null. */
function ownStatement(ancestors: readonly Node[]): Node | null {
  let i = ancestors.length - 1;
  if (ancestors[i]?.type === "AwaitExpression") i--;
  const statement = ancestors[i];
  const list = ancestors[i - 1];
  return statement?.type === "ExpressionStatement" && list && STATEMENT_LISTS.has(list.type)
    ? statement
    : null;
}

/** The scope inside a node that is not a test or suite definition. */
function innerScope(node: Node, scope: Scope): Scope {
  if (scope.taint !== null) return scope;
  if (LOOPS.has(node.type)) return { ...scope, taint: "defined inside a loop" };
  if (FUNCTIONS.has(node.type))
    return { ...scope, taint: "defined inside a function that may run any number of times" };
  if (node.type === "ClassBody") return { ...scope, taint: "defined inside a class" };
  return scope;
}

/** Walks a file and lists its tests; tests whose suites or names are made at run time are left out. */
export function findTests(ast: File): FoundTest[] {
  const tests: FoundTest[] = [];
  const ancestors: Node[] = [];

  const visit = (node: Node, scope: Scope): void => {
    if (node.type === "CallExpression" && visitDefinition(node, scope)) return;
    if (node.type === "CallExpression" && scope.owner) scope.owner.calls.push(node);
    const inner = innerScope(node, scope);
    ancestors.push(node);
    for (const child of childNodes(node)) visit(child, inner);
    ancestors.pop();
  };

  // A test or suite call: its callback is walked as its body, with the suites and owner it sets.
  const visitDefinition = (call: CallExpression, scope: Scope): boolean => {
    const def = classify(call.callee);
    if (!def) return false;
    const args = call.arguments;
    const fnAt = [1, 2].find((i) => isFunction(args[i]));
    const fn = fnAt === undefined ? undefined : args[fnAt];
    if (!isFunction(fn)) return false;
    const name = def.named ? literalName(args[0]) : null;
    const taint = scope.taint ?? (def.modifier ? `${def.modifier}: not run as a plain test` : null);
    if (def.role === "test") markParent(scope);
    let body: Scope;
    if (def.role === "suite") {
      const suites = scope.suites && name !== null ? [...scope.suites, name] : null;
      body = { suites, taint, owner: scope.owner };
    } else if (scope.suites === null || name === null) {
      body = { suites: null, taint, owner: null };
    } else {
      const path = [...scope.suites, name];
      const statement = ownStatement(ancestors);
      const note =
        taint ?? (statement ? null : "not a statement of its own, so a copy cannot be placed beside it");
      const test: FoundTest = { path, nameNode: args[0] as Node, statement, note, calls: [] };
      tests.push(test);
      body = { suites: path, taint, owner: test };
    }
    ancestors.push(call);
    args.forEach((a, i) => {
      if (i !== fnAt && i !== 0) visit(a, scope);
    });
    ancestors.push(fn);
    visit(fn.body, body);
    ancestors.pop();
    ancestors.pop();
    return true;
  };

  visit(ast.program, { suites: [], taint: null, owner: null });
  markDuplicates(tests);
  return tests;
}

/**
 * A test with subtests is reported through them, not as a test of its own (runners count leaves), so a
 * changed value in its body would show only as cancelled or failed subtests: it gets no twins.
 */
function markParent(scope: Scope): void {
  if (scope.owner && scope.owner.note === null)
    scope.owner.note = "has subtests, which are reported in its place";
}

/** Two tests with the same path cannot be told apart by name: neither gets twins. */
function markDuplicates(tests: FoundTest[]): void {
  const count = new Map<string, number>();
  const key = (t: FoundTest) => JSON.stringify(t.path);
  for (const t of tests) count.set(key(t), (count.get(key(t)) ?? 0) + 1);
  for (const t of tests) {
    if ((count.get(key(t)) ?? 0) > 1) t.note = "another test in this file has the same suites and name";
  }
}
