"""The rules package's shape: its modules import one another without a cycle, at the top (no import tucked inside
a function to dodge one), the shared records live in the leaf module ``base``, and every hook a game names is
registered through the ``facedown.hooks`` entry points and declares the whole Hook interface."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import controller.rules as rules
from controller.rules import game_ids, load_game
from controller.rules.hooks import HOOKS, Hook

PACKAGE = Path(rules.__file__).parent
MODULES = {p.stem: p for p in PACKAGE.glob("*.py")}


def _imports(path: Path) -> tuple[set[str], list[str]]:
    """(package modules imported at run time at module level, imports found inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top: set[str] = set()
    inner: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue  # annotations only
        for sub in ast.walk(node):
            if isinstance(sub, ast.ImportFrom) and sub.level == 1:
                names = [sub.module] if sub.module else [a.name for a in sub.names]
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    inner.append(f"{path.name}:{sub.lineno}: from .{sub.module or ''} import ...")
                else:
                    top.update(n.split(".")[0] for n in names if n)
    return top & set(MODULES), inner


def test_no_import_cycle_and_no_import_inside_a_function() -> None:
    graph = {}
    inner_all = []
    for name, path in MODULES.items():
        graph[name], inner = _imports(path)
        inner_all += inner
    assert inner_all == []
    assert graph["say"] == set() and graph["errors"] == set()  # the leaves
    assert graph["base"] <= {"say"}  # the shared records name message objects, nothing else
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        if state.get(node) == 2:
            return
        assert state.get(node) != 1, f"import cycle: {' -> '.join([*trail, node])}"
        state[node] = 1
        for nxt in sorted(graph[node]):
            visit(nxt, [*trail, node])
        state[node] = 2

    for name in sorted(graph):
        visit(name, [])


def test_every_named_hook_is_a_registered_hook() -> None:
    named = {h for g in game_ids() for h in load_game(g).hooks}
    assert named <= set(HOOKS)
    for name in HOOKS:
        hook = HOOKS[name]
        assert isinstance(hook, Hook) and hook.name == name
        assert HOOKS.origin(name).startswith("facedown: controller.rules.")


def test_an_unknown_hook_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        HOOKS["no_such_hook"]


def test_a_checkout_that_is_not_installed_is_told_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """No entry points at all (FaceDown run from a checkout it was never installed from): the loader says why."""
    from controller.rules import GameFileError, catalog, loader
    from controller.rules.hooks import Registry

    monkeypatch.setattr(loader, "HOOKS", Registry("facedown.no_such_group"))
    text = (catalog.PACKAGE_GAMES / "stratego.yaml").read_text(encoding="utf-8")
    with pytest.raises(GameFileError, match=r"hooks\[0\]: a rule hook, but none is registered \('two_squares'\): .*install it"):
        loader.parse_game(text, "stratego.yaml")
