import assert from "node:assert/strict";
import { test } from "node:test";
import { slugify } from "../src/slugify.js";

test("lower-cases and joins words with dashes", () => {
  assert.equal(slugify("Hello World"), "hello-world");
});

test("drops punctuation", () => {
  assert.equal(slugify("Hello, World!"), "hello-world");
});

test("transliterates accented letters", () => {
  assert.equal(slugify("Crème Brûlée"), "creme-brulee");
});

test("collapses runs of separators", () => {
  assert.equal(slugify("foo -- bar"), "foo-bar");
});

test("trims leading and trailing separators", () => {
  assert.equal(slugify("  --Hello--  "), "hello");
});

test("removes apostrophes", () => {
  assert.equal(slugify("Don't Stop"), "dont-stop");
});

test("supports a custom separator", () => {
  assert.equal(slugify("Hello World", { separator: "_" }), "hello_world");
});
