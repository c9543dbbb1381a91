"""No import circles in clusterdoc: no module imports (at the top or inside a function) one that imports it back,
directly or through others (the brief's rule; shim/env.py, debug.py and exchange.py once made one); and none
between packages either, where importing clusterdoc.x.y runs clusterdoc/x/__init__.py too (issue 37: `why` and
`launch`, `checks` and `wheel`, `doctor` and `wheel`, `probe` and `doctor` once made circles that imports inside
functions hid). A few layers are spelled out as rules (FORBIDDEN)."""
import ast
import shutil
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "clusterdoc"


def imports(package: Path = PACKAGE) -> dict[str, set[str]]:
    mods = {}
    for p in package.rglob("*.py"):
        name = ".".join(p.relative_to(package.parent).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = p
    graph = {}
    for name, p in mods.items():
        pkg = name if p.name == "__init__.py" else name.rsplit(".", 1)[0]
        deps = set()
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                deps |= {f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names}
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names}
        graph[name] = {d for d in deps if d in mods and d != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_detector_sees_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circles_in_clusterdoc():
    graph = imports()
    assert "clusterdoc.shim.rendezvous" in graph["clusterdoc.shim.exchange"]  # lazy and relative imports seen
    assert circles(graph) == []


# --- packages ---------------------------------------------------------------------------------------------------

# (importer, imported): the layers. `why` explains a job from its folder and Slurm (clusterdoc/jobs/) without the
# launcher that made it; the checks judge facts without the wheel builder (both read clusterdoc/gpuarch.py); the
# probe (sent to nodes, and its payload maker) never needs the doctor that sends it.
FORBIDDEN = [
    ("clusterdoc.why", "clusterdoc.launch"),
    ("clusterdoc.checks", "clusterdoc.wheel"),
    ("clusterdoc.probe", "clusterdoc.doctor"),
]


def package_of(module: str) -> str:
    """clusterdoc.why.main -> clusterdoc.why; a top-level module (clusterdoc.cli) is its own node."""
    return ".".join(module.split(".")[:2])


def with_parents(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Importing a.b.c runs a/__init__.py and a/b/__init__.py first: each import also imports the parents of what
    it names (below the top `clusterdoc`, whose __init__ loads its API lazily by name and imports nothing at run
    time: test_the_top_package_imports_nothing_at_run_time).
    A module's own parents are not counted: they are already running when it loads (probe/__init__ imports its
    modules, as packages do)."""
    out = {}
    for mod, deps in graph.items():
        own = {".".join(mod.split(".")[:i]) for i in range(1, mod.count(".") + 2)}
        more = set(deps)
        for d in deps:
            parts = d.split(".")
            more |= {".".join(parts[:i]) for i in range(2, len(parts))}
        out[mod] = {d for d in more if d in graph and d not in own}
    return out


def packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The package graph: an edge p -> q when any module of p imports any of q (parents' __init__ counted)."""
    out: dict[str, set[str]] = {}
    for mod, deps in with_parents(graph).items():
        if mod == "clusterdoc":
            continue
        p = package_of(mod)
        out.setdefault(p, set())
        out[p] |= {package_of(d) for d in deps if d != "clusterdoc" and package_of(d) != p}
    return out


def broken_rules(graph: dict[str, set[str]]) -> list[str]:
    pkg = packages(graph)
    return [f"{a} imports {b}" for a, b in FORBIDDEN if b in pkg.get(a, set())]


def test_the_package_rules_see_a_parent_init_and_a_planted_import():
    graph = {"clusterdoc.a.x": {"clusterdoc.b.y"}, "clusterdoc.b.y": set(), "clusterdoc.b": {"clusterdoc.a.z"},
             "clusterdoc.a": set(), "clusterdoc.a.z": set()}
    # a.x imports b.y only, but b/__init__ runs first and imports a.z: a package circle
    assert circles(packages(graph)) == [["clusterdoc.a", "clusterdoc.b"]]
    planted = dict(imports())
    planted["clusterdoc.why.main"] = planted["clusterdoc.why.main"] | {"clusterdoc.launch.submit"}
    assert broken_rules(planted) == ["clusterdoc.why imports clusterdoc.launch"]


def test_a_planted_why_to_launch_import_in_a_copy_of_the_package_fails(tmp_path):
    """The rule reads the source as it is: a copy with one line added to why/evidence.py breaks it (inside a
    function, where a circle would once have hidden)."""
    copy = tmp_path / "clusterdoc"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    ev = copy / "why" / "evidence.py"
    ev.write_text(ev.read_text() + "\n\ndef _planted():\n    from clusterdoc.launch import job  # noqa\n")
    graph = imports(copy)
    assert broken_rules(graph) == ["clusterdoc.why imports clusterdoc.launch"]
    assert ["clusterdoc.launch", "clusterdoc.why"] in circles(packages(graph))  # launch reads why's verdicts


def test_no_package_circles_and_the_layers_hold():
    graph = imports()
    assert "clusterdoc.jobs" in packages(graph)["clusterdoc.why"]  # the job folder and Slurm, below why
    assert circles(packages(graph)) == []
    assert broken_rules(graph) == []
    assert circles(with_parents(graph)) == []


def test_the_top_package_imports_nothing_at_run_time():
    """clusterdoc/__init__.py names its API for type checkers only (and loads it by name on first use): were it to
    import a submodule, every module would import it back through its parent."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            assert not (getattr(node, "module", "") or "").startswith("clusterdoc"), ast.unparse(node)
        assert not (isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test) and any(
            isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(node))), ast.unparse(node)


@pytest.mark.parametrize("importer, imported", FORBIDDEN)
def test_each_rule_can_fail(importer, imported):
    graph = {f"{importer}.m": {f"{imported}.n"}, f"{imported}.n": set()}
    assert broken_rules(graph) == [f"{importer} imports {imported}"]
