"""The product's structure (issue 36), read from the source with ``ast``: no module imports one above it in the layer
order (lazy imports in functions and ``TYPE_CHECKING`` imports count too), no import cycle at run time between
modules (nor between the parts of one layer), no reach into another module's private names, nothing under tests/
imported by the product or the benchmarks, Flask imported only by web_referee/, and one root for the product's
errors. Each failure names file:line (or the module and class)."""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("controller", "web_referee")

#: The layers, lowest first: a module may import modules of its own layer and of the layers below, never above.
#: Each entry names a module or a package (all of it); a module belongs to the longest entry it falls under.
LAYERS: list[list[str]] = [
    ["controller", "controller.errors", "controller.entrypoints", "controller.textfiles", "controller.docreader"],
    ["controller.rules"],
    ["controller.messages"],
    ["controller.sensing", "controller.setups_store", "controller.records", "controller.lights",
     "controller.board_geometry", "controller.board_svg", "controller.board_layers", "controller.hardware"],
    ["controller.bots"],
    ["controller.referee"],
    ["controller.announce"],
    ["controller.club"],
    ["controller.remote"],
    ["web_referee"],
    ["controller.commands"],
    ["controller.cli"],
]

#: Parts of one layer that import each other at run time, each pair with the issue that removes it.
ALLOWED_PART_CYCLES: set[frozenset[str]] = set()

#: Reaches into another object's private members still to be removed (file, expression): none since the read model (issue 36).
EXPECTED_PRIVATE: set[tuple[str, str]] = set()

#: Private names of libraries that offer no public way to the same thing (file prefix, expression, why).
LIBRARY_PRIVATE = [
    ("controller/commands/", "argparse._SubParsersAction", "the type add_subparsers() returns has no public name"),
    ("web_referee/common.py", "server._map", "waitress gives no public handle on a server's socket map, "
                                             "which its loop thread must close"),
]

#: A namedtuple's own API is public though it starts with an underscore.
NAMEDTUPLE_API = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})


@dataclass(frozen=True)
class Import:
    """One import statement's target, as written in ``path`` at ``line``."""

    source: str  # the importing module
    target: str  # the module imported (a product module when it is one, else the name as written)
    path: str  # the importing file, relative to the repository
    line: int
    type_only: bool  # under ``if TYPE_CHECKING:``: never run

    def where(self) -> str:
        return f"{self.path}:{self.line}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules(*tops: str) -> dict[str, Path]:
    """Every module under the folders ``tops``, by dotted name."""
    return {module_name(p): p for top in tops for p in sorted((ROOT / top).rglob("*.py"))}


@cache
def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(node: ast.AST, type_only: bool = False) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement under ``node`` (in functions and classes too), with whether it is type-only."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, type_only
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for stmt in child.body:
                yield from _import_nodes(ast.Module(body=[stmt], type_ignores=[]), True)
            for stmt in child.orelse:
                yield from _import_nodes(ast.Module(body=[stmt], type_ignores=[]), type_only)
        else:
            yield from _import_nodes(child, type_only)


def imports(name: str, path: Path, known: dict[str, Path]) -> list[Import]:
    """The imports of module ``name``; ``from pkg import mod`` targets ``pkg.mod`` when that is one of ``known``."""
    rel = str(path.relative_to(ROOT))
    out = []
    for node, type_only in _import_nodes(tree(path)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                package = package[:len(package) - (node.level - 1)]
                base = ".".join(package + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        out += [Import(name, target, rel, node.lineno, type_only) for target in targets]
    return out


@cache
def product_imports() -> tuple[Import, ...]:
    known = modules(*PRODUCT)
    return tuple(imp for name, path in known.items() for imp in imports(name, path, known))


def part(module: str) -> str | None:
    """The LAYERS entry ``module`` falls under (the longest), None if none."""
    found = [entry for layer in LAYERS for entry in layer
             if module == entry or (entry != "controller" and module.startswith(entry + "."))]
    return max(found, key=len) if found else None


def layer(module: str) -> int | None:
    entry = part(module)
    return None if entry is None else next(i for i, names in enumerate(LAYERS) if entry in names)


def is_product(module: str) -> bool:
    return module.split(".")[0] in PRODUCT


# ---------------------------------------------------------------------- (a) layers
def test_every_product_module_has_a_layer() -> None:
    lost = [f"{path.relative_to(ROOT)}: module {name} is in no layer: add it to LAYERS in tests/test_layering.py"
            for name, path in modules(*PRODUCT).items() if layer(name) is None]
    assert not lost, "\n".join(lost)


def test_no_module_imports_one_above_it() -> None:
    upward = []
    for imp in product_imports():
        if not is_product(imp.target):
            continue
        low, high = layer(imp.source), layer(imp.target)
        if low is not None and high is not None and high > low:
            upward.append(f"{imp.where()}: {imp.source} (layer {part(imp.source)}) imports {imp.target}, a layer above "
                          f"({part(imp.target)}){' under TYPE_CHECKING' if imp.type_only else ''}")
    assert not upward, "imports that go up the layers:\n" + "\n".join(upward)


# ---------------------------------------------------------------------- (b) cycles
def runtime_graph(parts: bool = False) -> dict[str, dict[str, Import]]:
    """Run-time imports (at module level or in a function, not under TYPE_CHECKING): source -> target -> the first
    import statement. With ``parts``, between LAYERS entries instead of modules."""
    graph: dict[str, dict[str, Import]] = {}
    for imp in product_imports():
        if imp.type_only or not is_product(imp.target):
            continue
        a, b = (part(imp.source), part(imp.target)) if parts else (imp.source, imp.target)
        if a is not None and b is not None and a != b:
            graph.setdefault(a, {}).setdefault(b, imp)
    return graph


def strongly_connected(graph: dict[str, dict[str, Import]]) -> list[list[str]]:
    """The groups of nodes that reach each other (Tarjan's algorithm, iterative), each of two nodes or more."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, {}))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def a_cycle(graph: dict[str, dict[str, Import]], group: list[str]) -> list[Import]:
    """One cycle through the group's first node, as the import statements that make it (breadth-first: the shortest)."""
    members = set(group)
    start = group[0]
    came: dict[str, tuple[str, Import]] = {}  # node -> (the node it was reached from, the import that reached it)
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child, imp in sorted(graph.get(node, {}).items()):
                if child not in members or child in came:
                    continue
                came[child] = (node, imp)
                if child == start:
                    path, at = [imp], node
                    while at != start:
                        at, step = came[at]
                        path.insert(0, step)
                    return path
                following.append(child)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover - Tarjan's group always holds one


def cycle_text(cycle: list[Import]) -> str:
    return "\n".join(f"  {imp.where()}: {imp.source} imports {imp.target}" for imp in cycle)


def test_no_import_cycle_between_modules_at_run_time() -> None:
    graph = runtime_graph()
    found = [cycle_text(a_cycle(graph, group)) for group in strongly_connected(graph)]
    assert not found, "modules that import each other at run time (directly or round a loop):\n" + "\n\n".join(found)


def test_the_rules_package_has_no_import_cycle_at_run_time() -> None:
    graph = {a: {b: imp for b, imp in out.items() if b.startswith("controller.rules")}
             for a, out in runtime_graph().items() if a.startswith("controller.rules")}
    found = [cycle_text(a_cycle(graph, group)) for group in strongly_connected(graph)]
    assert not found, "import cycles in controller.rules:\n" + "\n\n".join(found)


def test_no_import_cycle_between_the_parts_of_a_layer() -> None:
    """Parts of one layer (controller.sensing, controller.records...) may use each other, one way only."""
    graph = runtime_graph(parts=True)
    found = [cycle_text(a_cycle(graph, group)) for group in strongly_connected(graph)
             if frozenset(group) not in ALLOWED_PART_CYCLES]
    assert not found, "parts (LAYERS entries) that import each other at run time:\n" + "\n\n".join(found)


def test_the_allowed_part_cycles_still_exist() -> None:
    """An allowed cycle that is gone must leave ALLOWED_PART_CYCLES, so that it cannot come back unnoticed."""
    groups = {frozenset(g) for g in strongly_connected(runtime_graph(parts=True))}
    gone = [sorted(pair) for pair in ALLOWED_PART_CYCLES if pair not in groups]
    assert not gone, f"no longer a cycle: drop {gone} from ALLOWED_PART_CYCLES in tests/test_layering.py"


# ---------------------------------------------------------------------- (c) private names
def _imported_modules(module: ast.Module) -> set[str]:
    """Names bound to modules by the file's imports (``import x``, ``import a.b as c``; ``from a import b`` too,
    since b may be a module: a private name reached through it is another module's either way)."""
    names = set()
    for node, _type_only in _import_nodes(module):
        for alias in node.names:
            names.add(alias.asname or alias.name.split(".")[0])
    return names


def private_reaches(path: Path) -> Iterator[tuple[int, str, str]]:
    """(line, expression, what) for each reach into a private name that is not the object's own."""
    module = tree(path)
    for node, _type_only in _import_nodes(module):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    yield node.lineno, f"from {node.module} import {alias.name}", "imports another module's private name"
    modules_here = _imported_modules(module)
    for node in ast.walk(module):
        if isinstance(node, ast.Attribute):
            name, owner = node.attr, node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr", "hasattr") \
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            name, owner = node.args[1].value, node.args[0]
        else:
            continue
        if not name.startswith("_") or (name.startswith("__") and name.endswith("__")) or name in NAMEDTUPLE_API:
            continue
        text = ast.unparse(owner)
        if text in ("self", "cls", "super()"):
            continue
        what = "another module's private name" if isinstance(owner, ast.Name) and owner.id in modules_here \
            else "a private member of an object that is not self"
        yield node.lineno, f"{text}.{name}", what


def test_no_access_to_private_names_of_another_module() -> None:
    found, expected_seen = [], set()
    for _name, path in modules(*PRODUCT).items():
        rel = str(path.relative_to(ROOT))
        for line, expr, what in private_reaches(path):
            if (rel, expr) in EXPECTED_PRIVATE:
                expected_seen.add((rel, expr))
            elif not any(rel.startswith(prefix) and expr == allowed for prefix, allowed, _why in LIBRARY_PRIVATE):
                found.append(f"{rel}:{line}: {expr}: {what} (give it a public name, or pass in what is needed)")
    assert not found, "reaches into private names:\n" + "\n".join(found)
    gone = sorted(EXPECTED_PRIVATE - expected_seen)
    assert not gone, f"fixed: drop {gone} from EXPECTED_PRIVATE in tests/test_layering.py"


# ---------------------------------------------------------------------- (d) tests and Flask
def names_under_tests() -> set[str]:
    """Top-level names a file could import from tests/ (``tests``, and its modules and packages when tests/ is on
    sys.path, as pytest and some benchmarks put it)."""
    return {"tests"} | {p.stem for p in (ROOT / "tests").glob("*.py")} | \
        {p.name for p in (ROOT / "tests").iterdir() if (p / "__init__.py").exists()}


def test_the_product_imports_nothing_under_tests_benchmarks_or_harness() -> None:
    names = names_under_tests()
    found = [f"{imp.where()}: {imp.source} imports {imp.target}, which is under tests/"
             for imp in product_imports() if imp.target.split(".")[0] in names]
    found += [f"{imp.where()}: {imp.source} imports {imp.target}, which is under {imp.target.split('.')[0]}/"
              for imp in product_imports() if imp.target.split(".")[0] in ("benchmarks", "harness")]
    assert not found, "\n".join(found)


def test_the_benchmarks_import_nothing_under_tests() -> None:
    # what a benchmark shares with the tests (the firmware on a stand-in or an emulated chip, the broker, the web
    # table) is in harness/
    names = names_under_tests()
    known = modules("benchmarks")
    found = [f"{imp.where()}: {imp.source} imports {imp.target}, which is under tests/ (move it to harness/)"
             for name, path in known.items() for imp in imports(name, path, known)
             if imp.target.split(".")[0] in names]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("library", ["flask", "werkzeug"])
def test_only_web_referee_imports_flask(library: str) -> None:
    found = [f"{imp.where()}: {imp.source} imports {imp.target}: Flask belongs to web_referee/ alone"
             for imp in product_imports() if imp.target.split(".")[0] == library and not imp.source.startswith("web_referee")]
    assert not found, "\n".join(found)


# ---------------------------------------------------------------------- one error root
#: Errors not yet under FaceDownError (module, class): removed by the read-model change (issue 36), which re-roots it.
EXPECTED_UNROOTED: set[tuple[str, str]] = set()


def test_every_error_the_product_defines_derives_from_facedown_error() -> None:
    from controller.errors import FaceDownError

    unrooted = set()
    for name in modules(*PRODUCT):
        module = importlib.import_module(name)
        for cls_name, cls in vars(module).items():
            if inspect.isclass(cls) and issubclass(cls, BaseException) and cls.__module__ == name \
                    and not issubclass(cls, FaceDownError):
                unrooted.add((name, cls_name))
    found = sorted(unrooted - EXPECTED_UNROOTED)
    assert not found, "errors outside the one root (derive them from controller.errors.FaceDownError and keep their " \
        "built-in base, e.g. class XError(FaceDownError, ValueError)):\n" + "\n".join(f"{m}.{c}" for m, c in found)
    gone = sorted(EXPECTED_UNROOTED - unrooted)
    assert not gone, f"fixed: drop {gone} from EXPECTED_UNROOTED in tests/test_layering.py"
