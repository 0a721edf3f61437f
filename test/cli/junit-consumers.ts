// What CI systems do with a JUnit file: validate it against the Ant/Jenkins schema (xmllint, in wasm)
// and read it with a real JUnit consumer (test-results-parser), for the report tests.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type ITestResult, parse } from "test-results-parser";
import { validateXML } from "xmllint-wasm";

const XSD = resolve(import.meta.dirname, "../fixtures/junit/junit.xsd");

/** xmllint's verdict on `xml` against test/fixtures/junit/junit.xsd: null when valid, else the errors. */
export async function junitSchemaErrors(xml: string): Promise<string | null> {
  const r = await validateXML({
    xml: { fileName: "report.xml", contents: xml },
    schema: { fileName: "junit.xsd", contents: readFileSync(XSD, "utf8") },
  });
  return r.valid ? null : r.errors.map((e) => e.rawMessage).join("\n") || r.rawOutput;
}

/** What test-results-parser (a JUnit reader used by CI reporters) sees in `xml`. */
export function readAsCi(xml: string): ITestResult {
  const dir = mkdtempSync(join(tmpdir(), "loopgate-junit-"));
  try {
    const file = join(dir, "report.xml");
    writeFileSync(file, xml);
    return parse({ type: "junit", files: [file] });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
