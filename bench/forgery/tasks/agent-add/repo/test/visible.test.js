const { test } = require("node:test");
const assert = require("node:assert");
const add = require("../add.js");
test("adds", () => assert.strictEqual(add(1, 1), 2));
