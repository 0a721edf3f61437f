import { PYTHON_SITES_SCRIPT } from "./python-sites-script.js";

/**
 * The Python side of the Python twin language, shipped as a string so the compiled package carries it.
 * Run as `python3 -I -S -c <script>`: it reads one JSON request on stdin and writes one JSON answer on
 * stdout. It only parses test files with `ast` and writes them back with `ast.unparse`; it never imports
 * or runs them. Requests: `{"op":"analyse","files":[{path,source}]}` → `{"results":[FileAnalysis…]}`,
 * `{"op":"render","requests":[RenderRequest…]}` → `{"results":[RenderedFile…]}`, in request order.
 * Its first part (python-sites-script.ts) finds the mutation sites and draws their replacements.
 */
export const PYTHON_TWIN_SCRIPT = `${PYTHON_SITES_SCRIPT}${String.raw`
def base_name(b):
    if isinstance(b, ast.Name):
        return b.id
    if isinstance(b, ast.Attribute):
        return b.attr
    return ""


def test_class_names(tree):
    # Test* classes, TestCase subclasses, and classes deriving from either in this file.
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    names = set()
    grew = True
    while grew:
        grew = False
        for c in classes:
            if c.name in names:
                continue
            if c.name.startswith("Test") or any(
                base_name(b).endswith("TestCase") or base_name(b) in names for b in c.bases
            ):
                names.add(c.name)
                grew = True
    return names


def collect(body, prefix, test_classes, out):
    # Tests as pytest and unittest collect them: module-level test* functions and the test* methods of
    # test classes, nested classes included. Of equal names in one scope only the last one runs.
    defs = [s for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    counts = {}
    for s in defs:
        counts[s.name] = counts.get(s.name, 0) + 1
    later = {}
    for s in defs:
        later[s.name] = later.get(s.name, 0) + 1
        if later[s.name] < counts[s.name]:
            continue
        if isinstance(s, ast.ClassDef):
            if s.name in test_classes:
                collect(s.body, prefix + [s.name], test_classes, out)
        elif s.name.startswith("test"):
            out.append((prefix + [s.name], s, counts[s.name] > 1))


def defined_tests(tree):
    out = []
    collect(tree.body, [], test_class_names(tree), out)
    # Classes used as a base inside the file: their tests also run under the subclass.
    bases = {base_name(b) for n in ast.walk(tree) if isinstance(n, ast.ClassDef) for b in n.bases}
    return out, bases


def analyse_source(path, source):
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        return {"ok": False, "why": "syntax error at line %s: %s" % (e.lineno, e.msg)}
    tests, bases = defined_tests(tree)
    result = []
    for test_path, fn, duplicate in tests:
        entry = {"path": test_path, "sites": []}
        if duplicate:
            entry["note"] = "defined more than once in its scope: renaming the last would revive the first"
        elif any(c in bases for c in test_path[:-1]):
            entry["note"] = "its class is a base of another class here: a rename would rename that test too"
        else:
            sites, assertions = site_nodes(fn)
            for key, lit in sites:
                r = replacements(lit)
                if r:
                    entry["sites"].append({"key": key, "original": ast.unparse(lit), "replacements": r})
            if not entry["sites"]:
                entry["note"] = (
                    "its expected values are computed or not literals (a name, a subTest loop, a raise)"
                    if assertions
                    else "no assertEqual-style assertion, assert a == b or parametrize case to change"
                )
        result.append(entry)
    return {"ok": True, "tests": result}


def locate(tree, test_path):
    body = tree.body
    for name in test_path[:-1]:
        classes = [s for s in body if isinstance(s, ast.ClassDef) and s.name == name]
        if not classes:
            raise LookupError("no class %s" % name)
        body = classes[-1].body
    defs = [i for i, s in enumerate(body) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and s.name == test_path[-1]]
    if len(defs) != 1 or isinstance(body[defs[0]], ast.ClassDef):
        raise LookupError("no single test %s" % "::".join(test_path))
    return body, defs[0]


class Replace(ast.NodeTransformer):
    def __init__(self, target, new):
        self.target = target
        self.new = new

    def generic_visit(self, node):
        if node is self.target:
            return self.new
        return super().generic_visit(node)


def parse_replacement(text, original):
    node = ast.parse(text, mode="eval").body
    if literal_kind(node) != literal_kind(original):
        raise ValueError("replacement %r is not a literal of the same kind as %s" % (text, ast.unparse(original)))
    if literal_value(node) == literal_value(original):
        raise ValueError("replacement %r equals the original" % text)
    return node


def names_in(body):
    return {s.name for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def render_one(req):
    try:
        tree = ast.parse(req["source"], filename=req["path"])
    except SyntaxError as e:
        return {"ok": False, "why": "syntax error at line %s: %s" % (e.lineno, e.msg)}
    planned = []
    for t in req["tests"]:
        body, i = locate(tree, t["path"])
        planned.append((body, body[i], t))
    new_names = {}
    for body, fn, t in planned:
        taken = new_names.setdefault(id(body), names_in(body))
        for name in [t["name"]] + [w["name"] for w in t["twins"]]:
            if not name.isidentifier() or name in taken:
                raise ValueError("name %r is not a free identifier in its scope" % name)
            taken.add(name)
    for body, fn, t in planned:
        sites = dict(site_nodes(fn)[0])
        before, after = [], []
        for w in t["twins"]:
            if w["site"] not in sites:
                raise LookupError("no site %s in %s" % (w["site"], "::".join(t["path"])))
            twin = copy.deepcopy(fn)
            target = dict(site_nodes(twin)[0])[w["site"]]
            twin = Replace(target, parse_replacement(w["replacement"], target)).visit(twin)
            twin.name = w["name"]
            (before if w["before"] else after).append(twin)
        fn.name = t["name"]
        i = next(k for k, s in enumerate(body) if s is fn)
        body[i:i + 1] = before + [fn] + after
    content = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    # ast.unparse has corner cases (f-strings, odd constants); what it writes must mean the same tree.
    if ast.dump(ast.parse(content)) != ast.dump(tree):
        return {"ok": False, "why": "the module does not survive ast.unparse unchanged"}
    return {"ok": True, "content": content}


def guarded(fn, item):
    try:
        return fn(item)
    except Exception as e:
        return {"ok": False, "why": "%s: %s" % (type(e).__name__, e)}


def main():
    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    if request.get("op") == "analyse":
        results = [guarded(lambda f: analyse_source(f["path"], f["source"]), f) for f in request["files"]]
    elif request.get("op") == "render":
        results = [guarded(render_one, r) for r in request["requests"]]
    else:
        raise SystemExit("unknown op")
    sys.stdout.buffer.write(json.dumps({"results": results}, ensure_ascii=True).encode("ascii"))


main()
`}`;
