/**
 * The first part of the Python twin script: where a test writes its expected values as literals (the
 * mutation sites), and the wrong values of the same shape that replace them.
 *
 * Replacement values (the wrong expected values a twin carries) are drawn so that, given the original
 * and its replacements as a set, any member is about equally likely to be the original:
 * - int n: a window of 4 consecutive integers holding n at a uniformly random offset; the other three are
 *   the replacements. The window keeps the literal's sign (a written `-n` stays negative, anything else
 *   stays ≥ 0), so near zero the offsets that would cross it are not drawn and the original is somewhat
 *   more likely the window's lower end; that is the price of never turning a count into a negative one.
 * - float: the same window on its last written decimal digit (`1.5` → 1.3 … 1.6, from repr).
 * - str: up to 3 distinct permutations of its characters; when there are none (length < 2, or all one
 *   character), up to 3 copies with one character changed to another of its class (a-z, A-Z, 0-9).
 * - bool: the other bool.
 */
// biome-ignore lint/complexity/noUselessStringRaw: a backslash later written in the Python text must stay one
export const PYTHON_SITES_SCRIPT = String.raw`
import ast
import copy
import json
import random
import string
import sys
from decimal import Decimal

RNG = random.SystemRandom()
EQUAL_METHODS = {
    "assertEqual", "assertEquals", "assertListEqual", "assertDictEqual", "assertTupleEqual",
    "assertSetEqual", "assertSequenceEqual", "assertCountEqual", "assertAlmostEqual",
}
SECOND_ARG = ("second", "seq2", "list2", "d2", "tuple2", "set2")
CLASSES = (string.ascii_lowercase, string.ascii_uppercase, string.digits)


def literal_kind(node):
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool):
            return "bool"
        if isinstance(v, int):
            return "int"
        if isinstance(v, float):
            return "float"
        if isinstance(v, str):
            return "str"
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        v = node.operand.value
        if isinstance(v, bool):
            return None
        if isinstance(v, int):
            return "int"
        if isinstance(v, float):
            return "float"
    return None


def literal_value(node):
    return -node.operand.value if isinstance(node, ast.UnaryOp) else node.value


def literals_in(expr):
    # Values, not structure: dict keys, called names, subscripts, f-strings and comprehensions are skipped.
    out = []

    def visit(node):
        if node is None:
            return
        if literal_kind(node):
            out.append(node)
            return
        if isinstance(node, ast.Dict):
            children = node.values
        elif isinstance(node, ast.Call):
            children = list(node.args) + [k.value for k in node.keywords]
        elif isinstance(node, ast.Subscript):
            children = [node.value]
        elif isinstance(node, (ast.JoinedStr, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        else:
            children = list(ast.iter_child_nodes(node))
        for c in children:
            visit(c)

    visit(expr)
    out.sort(key=lambda n: (n.lineno, n.col_offset))
    return out


def expected_of(node):
    if isinstance(node, ast.Assert):
        t = node.test
        if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq):
            return t.comparators[0]
        return None
    if len(node.args) >= 2:
        return node.args[1]
    for k in node.keywords:
        if k.arg in SECOND_ARG:
            return k.value
    return None


def is_assertion(node):
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        f = node.func
        return f.attr in EQUAL_METHODS and isinstance(f.value, ast.Name) and f.value.id == "self"
    return False


def is_parametrize(d):
    if not isinstance(d, ast.Call) or not isinstance(d.func, ast.Attribute) or d.func.attr != "parametrize":
        return False
    v = d.func.value
    return (isinstance(v, ast.Attribute) and v.attr == "mark") or (isinstance(v, ast.Name) and v.id == "mark")


def arg(call, index, name):
    if len(call.args) > index:
        return call.args[index]
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def case_expectations(d):
    # The last element of each case of a parametrize with two or more names: the expected value.
    names = arg(d, 0, "argnames")
    values = arg(d, 1, "argvalues")
    if isinstance(names, ast.Constant) and isinstance(names.value, str):
        count = len([n for n in names.value.split(",") if n.strip()])
    elif isinstance(names, (ast.List, ast.Tuple)):
        count = len(names.elts)
    else:
        return []
    if count < 2 or not isinstance(values, (ast.List, ast.Tuple)):
        return []
    out = []
    for case in values.elts:
        elts = None
        if isinstance(case, (ast.Tuple, ast.List)):
            elts = case.elts
        elif isinstance(case, ast.Call) and isinstance(case.func, ast.Attribute) and case.func.attr == "param":
            elts = case.args
        elif isinstance(case, ast.Call) and isinstance(case.func, ast.Name) and case.func.id == "param":
            elts = case.args
        out.append(elts[-1] if elts and len(elts) == count else None)
    return out


def is_subtest(node):
    f = node.func if isinstance(node, ast.Call) else None
    return isinstance(f, ast.Attribute) and f.attr == "subTest"


def site_nodes(fn):
    # (key, literal node) in source order: "<assertion>.<literal>", then "p<case>.<literal>".
    # Assertions inside a subTest block count for the numbering but have no site: they check many
    # generated cases, so one changed literal is not one wrong expectation.
    found = []
    in_subtest = set()
    for stmt in fn.body:
        for node in ast.walk(stmt):
            if is_assertion(node):
                found.append(node)
            if isinstance(node, ast.With) and any(is_subtest(i.context_expr) for i in node.items):
                in_subtest.update(id(n) for n in ast.walk(node))
    found.sort(key=lambda n: (n.lineno, n.col_offset))
    sites = []
    for ai, node in enumerate(found):
        if id(node) in in_subtest:
            continue
        for li, lit in enumerate(literals_in(expected_of(node))):
            sites.append(("%d.%d" % (ai, li), lit))
    ci = 0
    for d in fn.decorator_list:
        if not is_parametrize(d):
            continue
        for expected in case_expectations(d):
            for li, lit in enumerate(literals_in(expected)):
                sites.append(("p%d.%d" % (ci, li), lit))
            ci += 1
    return sites, len(found)


def int_window(n, lo):
    offsets = [k for k in range(4) if n - k >= lo]
    start = n - RNG.choice(offsets)
    return [m for m in range(start, start + 4) if m != n]


def number_replacements(node, kind):
    negative = isinstance(node, ast.UnaryOp)
    magnitude = node.operand.value if negative else node.value
    lo = 1 if negative else 0
    if kind == "int":
        values = int_window(magnitude, lo)
    else:
        d = Decimal(repr(magnitude))
        if not d.is_finite():
            return []
        t = d.as_tuple()
        coefficient = int("".join(str(x) for x in t.digits))
        values = []
        for c in int_window(coefficient, lo):
            v = float(Decimal((0, tuple(int(x) for x in str(c)), t.exponent)))
            if v != magnitude and v not in values:
                values.append(v)
    return [-v if negative else v for v in values]


def string_replacements(s):
    out = []
    if len(set(s)) >= 2:
        for _ in range(60):
            p = "".join(RNG.sample(s, len(s)))
            if p != s and p not in out:
                out.append(p)
            if len(out) == 3:
                break
        return out
    positions = [i for i, ch in enumerate(s) if any(ch in c for c in CLASSES)]
    for _ in range(60):
        if not positions or len(out) == 3:
            break
        i = RNG.choice(positions)
        cls = next(c for c in CLASSES if s[i] in c)
        p = s[:i] + RNG.choice([x for x in cls if x != s[i]]) + s[i + 1:]
        if p not in out:
            out.append(p)
    return out


def to_node(value):
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=-value))
    return ast.Constant(value=value)


def replacements(node):
    kind = literal_kind(node)
    if kind == "bool":
        values = [not node.value]
    elif kind == "str":
        values = string_replacements(node.value)
    else:
        values = number_replacements(node, kind)
    return [ast.unparse(to_node(v)) for v in values]
`;
