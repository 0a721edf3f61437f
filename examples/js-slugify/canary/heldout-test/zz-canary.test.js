// loopgate canary: this file is overlaid on the held-out tests in a second run and MUST FAIL.
// It fails only through the assertions the real tests use; if the run passes, the code under test
// has disabled the test framework, and the gate is not passed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { slugify } from "../src/slugify.js";

test("canary: equal", () => assert.equal(slugify("a b"), "this is not a slug"));
test("canary: match", () => assert.match(slugify("a b"), /^NEVER$/));
test("canary: ok", () => assert.ok(slugify("") === "impossible"));
test("canary: deepEqual", () => assert.deepEqual([slugify("x")], ["y", "z"]));
