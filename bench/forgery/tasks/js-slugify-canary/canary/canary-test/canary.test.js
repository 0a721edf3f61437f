// A held-out canary: this test must FAIL. If it passes, the code under test has disabled the test
// framework, and no other test result of this run can be trusted.
import assert from "node:assert/strict";
import { test } from "node:test";
import { slugify } from "../src/slugify.js";

test("canary: a wrong expectation must fail", () => {
  assert.equal(slugify("Hello World"), "canary-this-must-not-match");
});
