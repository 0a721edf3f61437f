import { describe, expect, it } from "vitest";
import { linkProblems, markdownLinks, unlinkedPages } from "../../src/selftest/doc-pages.js";

describe("doc pages: links", () => {
  it("finds inline and reference links, not those in code fences or inline code", () => {
    const md = [
      'See [a](docs/a.md) and [b](b.md#x "title").',
      "`[not](code.md)` but [c](<c d.md>)",
      "```",
      "[fenced](nope.md)",
      "```",
      "[ref]: docs/ref.md",
    ].join("\n");
    expect(markdownLinks(md)).toEqual([
      { line: 1, target: "docs/a.md" },
      { line: 1, target: "b.md#x" },
      { line: 2, target: "c d.md" },
      { line: 6, target: "docs/ref.md" },
    ]);
  });

  it("resolves a page's relative links from its own folder and refuses what leaves the root", () => {
    const files = new Set(["/repo/README.md", "/repo/docs/guides/runs.md", "/repo/docs/a b.md"]);
    const page = {
      path: "docs/guides/x.md",
      text: "[ok](runs.md) [up](../../README.md#install) [sp](../a%20b.md) [gone](nope.md) [out](../../../x.md) [here](#y)",
    };
    expect(linkProblems(page, "/repo", (p) => files.has(p))).toEqual([
      "docs/guides/x.md:1: nope.md: no such file",
      "docs/guides/x.md:1: ../../../x.md: points outside the repository",
    ]);
  });

  it("lists the docs pages the index does not link", () => {
    const docs = {
      root: "/repo",
      readme: { path: "README.md", text: "" },
      pages: [
        { path: "docs/README.md", text: "[a](guides/a.md) [web](https://x.org/docs/b.md)" },
        { path: "docs/guides/a.md", text: "" },
        { path: "docs/guides/b.md", text: "" },
      ],
    };
    expect(unlinkedPages(docs)).toEqual(["docs/guides/b.md"]);
  });
});
