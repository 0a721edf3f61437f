import { camel, differentLiterals, distinctNames, plausibleName } from "./names.js";
import type { PlantedCanary } from "./test-report.js";

const CANARY_METHODS = 10;

/** The canary's methods for a unittest.TestCase: each fails through a different assertion. */
function testCaseMethods(names: readonly string[], a: string, b: string): string[] {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  const bodies = [
    `self.assertEqual(${x}, ${y})`,
    `self.assertTrue(${x} == ${y})`,
    `self.assertFalse(${x} != ${y})`,
    `self.assertIn(${x}, [${y}])`,
    `self.assertDictEqual({"v": ${x}}, {"v": ${y}})`,
    "with self.assertRaises(ValueError):\n            pass",
    "self.assertAlmostEqual(1.0, 2.0)",
    `self.assertRegex(${x}, "^${b}$")`,
    `assert ${x} == ${y}`,
    `self.fail(${x})`,
  ];
  return names.map((n, i) => `    def ${n}(self):\n        ${bodies[i % bodies.length]}\n`);
}

/** A planted test module's text and the names of the tests in it that must all fail. */
export interface PythonCanary {
  content: string;
  canary: PlantedCanary;
}

/** A unittest canary module: one TestCase whose every method fails through a different assertion. */
export function unittestCanary(): PythonCanary {
  const [a, b] = differentLiterals();
  const methods = distinctNames(CANARY_METHODS, () => `test_${plausibleName("_")}`);
  const className = `${camel(plausibleName("-"))}Test`;
  const content = `import unittest\n\n\nclass ${className}(unittest.TestCase):\n${testCaseMethods(methods, a, b).join("\n")}`;
  return { content, canary: { tests: methods, scope: "run" } };
}

/** A pytest canary module: plain functions (assert, pytest.fail, raise) and a unittest.TestCase. */
export function pytestCanary(): PythonCanary {
  const [a, b] = differentLiterals();
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  const fns = distinctNames(5, () => `test_${plausibleName("_")}`);
  const methods = distinctNames(CANARY_METHODS, () => `test_${plausibleName("_")}`).filter(
    (m) => !fns.includes(m),
  );
  const bodies = [
    `assert ${x} == ${y}`,
    `assert ${x} in [${y}]`,
    `assert not (${x} != ${y})`,
    `pytest.fail(${x})`,
    `raise AssertionError(${x})`,
  ];
  const functions = fns.map((n, i) => `def ${n}():\n    ${bodies[i]}\n`).join("\n\n");
  const content = `import unittest\n\nimport pytest\n\n\n${functions}\n\nclass Test${camel(plausibleName("-"))}(unittest.TestCase):\n${testCaseMethods(methods, a, b).join("\n")}`;
  return { content, canary: { tests: [...fns, ...methods], scope: "run" } };
}

/** A fresh module name for a planted canary (`test_parse_edge_41`). */
export function canaryModuleName(): string {
  return `test_${plausibleName("_")}`;
}
