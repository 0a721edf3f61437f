import assert from "node:assert/strict";
import { test } from "node:test";
import { slugify } from "../src/slugify.js";

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

test("transliterates letters that have no Unicode decomposition", () => {
  assert.equal(slugify("Straße"), "strasse");
  assert.equal(slugify("Ærøskøbing"), "aeroskobing");
  assert.equal(slugify("Łódź"), "lodz");
  assert.equal(slugify("Œuvre"), "oeuvre");
  assert.equal(slugify("Þór Điện"), "thor-dien");
});

test("transliterates combining marks and compatibility characters", () => {
  assert.equal(slugify("São Paulo & Niñez"), "sao-paulo-ninez");
  assert.equal(slugify("e\u0301te\u0301"), "ete");
  assert.equal(slugify("ﬁle ﬂow"), "file-flow");
});

test("treats underscores, dots and symbols as separators", () => {
  assert.equal(slugify("v1.2_beta"), "v1-2-beta");
  assert.equal(slugify("snake_case__name"), "snake-case-name");
  assert.equal(slugify("C++ / Rust"), "c-rust");
});

test("removes typographic apostrophes", () => {
  assert.equal(slugify("L’Oréal’s Story"), "loreals-story");
});

test("custom separator is collapsed and trimmed too", () => {
  assert.equal(slugify("--Hello  World--", { separator: "_" }), "hello_world");
  assert.equal(slugify("a - b _ c", { separator: "." }), "a.b.c");
});

test("input without letters or digits gives an empty slug", () => {
  assert.equal(slugify(""), "");
  assert.equal(slugify("!!! --- ???"), "");
});

test("non-string input is stringified", () => {
  assert.equal(slugify(2024), "2024");
});

test("output is always a well-formed slug", () => {
  const words = ["Äpfel", "naïve", "Ørsted", "x", "42", "ÉCOLE", "großes"];
  const glue = [" ", "--", " _ ", "!?", "\t", "…", " / "];
  for (let i = 0; i < 60; i++) {
    const parts = [];
    for (let j = 0; j <= i % 5; j++) parts.push(words[(i + j * 3) % words.length]);
    const text = glue[i % glue.length] + parts.join(glue[(i + 1) % glue.length]) + glue[(i + 2) % glue.length];
    const slug = slugify(text);
    assert.match(slug, SLUG, `slugify(${JSON.stringify(text)}) = ${JSON.stringify(slug)}`);
    assert.equal(slug.split("-").length, parts.length, `word count for ${JSON.stringify(text)}`);
  }
});
