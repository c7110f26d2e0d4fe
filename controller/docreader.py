"""Walks a parsed YAML document (a game file, a hardware profile) so every complaint names the file, the path
inside the document and what was expected; and loads YAML safely and strictly (``load_yaml``): a key given twice
in one mapping is refused with both places (plain PyYAML silently keeps the last), and so are documents nested
absurdly deep, holding numbers too long to convert, or growing through aliases (``*name``) past ``MAX_NODES`` values
(the "billion laughs" bomb: a few kB of text that expands to billions of values), counted from the parser's events
before anything is built from them. PyYAML is imported on the first load, not with this module (~10 ms of CPU here,
which a shipped game read from its JSON mirror never needs: controller/rules/mirror.py)."""

from __future__ import annotations

from collections.abc import Collection
from functools import cache
from typing import TYPE_CHECKING, Any

from controller.errors import FaceDownError

if TYPE_CHECKING:
    import yaml
from controller.textfiles import nesting_depth

#: Deepest nesting a YAML document may have (FaceDown's need fewer than ten levels).
MAX_DEPTH = 200
#: Most values (scalars, lists, mappings) a YAML document may hold once every alias is expanded. The largest
#: shipped file holds under 3,000 (sanjunqi.yaml, which reuses lists of pieces through aliases).
MAX_NODES = 50_000


class DocumentProblem(FaceDownError):
    """A YAML document that parses but cannot be accepted: ``where`` in it, and what was ``expected``."""

    def __init__(self, where: str, expected: str) -> None:
        super().__init__(f"{where}: {expected}")
        self.where = where
        self.expected = expected


def _unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: the mapping check below reports it
            continue
        if first is not None:
            a, b = first.start_mark, key_node.start_mark
            raise DocumentProblem(f"line {b.line + 1}, column {b.column + 1}",
                                  f"each key once in a mapping; {key!r} was already given at line {a.line + 1}, "
                                  f"column {a.column + 1}")
        seen[key] = key_node
    return loader.construct_mapping(node, deep=deep)


def _unique(base: type) -> type:
    import yaml

    loader = type(f"Unique{base.__name__}", (base,), {"__doc__": "A safe loader that refuses duplicate keys."})
    loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)
    return loader


@cache
def unique_loader(fast: bool) -> type:
    """A safe loader refusing duplicate keys: the C parser (libyaml) when PyYAML has it and ``fast``, else pure
    Python."""
    import yaml

    return _unique(getattr(yaml, "CSafeLoader", yaml.SafeLoader) if fast else yaml.SafeLoader)


def _depth(text: str) -> int:
    """An upper bound of a YAML document's flow nesting ([ and {), and of its block nesting by indentation."""
    indent = max((len(line) - len(line.lstrip(" ")) for line in text.splitlines()), default=0)
    return max(nesting_depth(text), indent // 2)


def _where(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _too_many(mark: Any) -> DocumentProblem:
    return DocumentProblem(_where(mark), f"a document of at most {MAX_NODES:,} values, an alias (*name) counting as all "
                           f"it stands for; it holds more than that by here (a YAML alias bomb? use aliases less)")


def count_values(text: str, *, fast: bool = True) -> int:
    """How many values (scalars, lists, mappings) the YAML document in ``text`` holds with every alias expanded,
    counted from the parser's events as they come, before anything is built: DocumentProblem as soon as the count
    passes MAX_NODES or the expanded nesting passes MAX_DEPTH, or at an alias inside its own anchor (``&a [*a]``).
    Memory stays small whatever the document: one number per anchor and per open list or mapping."""
    import yaml

    parser = unique_loader(fast)(text)
    total = 0
    anchors: dict[str, tuple[int, int]] = {}  # anchor -> (values, depth) of the finished node it names
    stack: list[list[Any]] = []  # per open list or mapping: [anchor, total at its start, deepest child]
    try:
        while parser.check_event():
            ev = parser.get_event()
            if isinstance(ev, yaml.AliasEvent):
                if any(s[0] == ev.anchor for s in stack):
                    raise DocumentProblem(_where(ev.start_mark), "a value that does not contain itself (the alias "
                                          f"*{ev.anchor} is inside its own anchor)")
                size, depth = anchors.get(ev.anchor, (1, 1))  # an unknown anchor: the loader says so after
            elif isinstance(ev, yaml.ScalarEvent):
                size, depth = 1, 1
                if ev.anchor:
                    anchors[ev.anchor] = (1, 1)
            elif isinstance(ev, yaml.CollectionStartEvent):
                total += 1
                stack.append([ev.anchor, total, 0])
                continue
            elif isinstance(ev, yaml.CollectionEndEvent):
                anchor, began, deepest = stack.pop()
                size, depth = 0, deepest + 1  # its values were counted as they came
                if anchor:
                    anchors[anchor] = (total - began + 1, depth)
            else:
                continue
            total += size
            if total > MAX_NODES:
                raise _too_many(ev.start_mark)
            if stack:
                stack[-1][2] = max(stack[-1][2], depth)
                if len(stack) + depth > MAX_DEPTH:
                    raise DocumentProblem(_where(ev.start_mark), f"a document nested at most {MAX_DEPTH} levels deep "
                                          "with its aliases (*name) expanded")
    finally:
        parser.dispose()
    return total


def load_yaml(text: str, *, fast: bool = True) -> Any:
    """The YAML document in ``text``, loaded safely; DocumentProblem for a duplicate key, nesting deeper than
    MAX_DEPTH, more than MAX_NODES values with aliases expanded (``count_values``, before anything is built), or a
    number too long to convert; yaml.YAMLError for text that is not YAML."""
    if _depth(text) > MAX_DEPTH:
        raise DocumentProblem("(document)", f"a document nested at most {MAX_DEPTH} levels deep")
    import yaml

    try:
        count_values(text, fast=fast)
        return yaml.load(text, Loader=unique_loader(fast))  # noqa: S506 - safe loaders
    except RecursionError:
        raise DocumentProblem("(document)", f"a document nested at most {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # int() of more than 4,300 digits
        raise DocumentProblem("(document)", f"numbers of a sensible length ({str(exc).split(':')[0]})") from None


def kind_of(value: Any) -> str:
    """A value's kind as a sentence says it: 'a mapping', 'a list', 'text', 'nothing'..."""
    return {dict: "a mapping", list: "a list", str: "text", type(None): "nothing"}.get(type(value), type(value).__name__)


def join(where: str, key: str | int) -> str:
    """The path of ``key`` inside ``where``: ``pieces[3]``, ``setup.zones``."""
    if isinstance(key, int):
        return f"{where}[{key}]"
    return f"{where}.{key}" if where else key


class DocReader:
    """Checks the shapes every document shares; ``error`` is the exception class a failure raises, built as
    ``error(file, where, expected)``."""

    error: type[Exception] = ValueError

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, where: str, expected: str) -> Exception:
        return self.error(self.file, where or "(top level)", expected)

    def mapping(self, value: Any, where: str, *, allowed: Collection[str] | None = None, required: Collection[str] = frozenset()) -> dict:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected a mapping, got {kind_of(value)}")
        for key in value:
            if not isinstance(key, str):
                raise self.fail(where, f"expected text keys, got {key!r}")
            if allowed is not None and key not in allowed:
                raise self.fail(join(where, key), f"unknown key; expected one of: {', '.join(sorted(allowed))}")
        for key in sorted(required):
            if key not in value:
                raise self.fail(join(where, key), "required key is missing")
        return value

    def seq(self, value: Any, where: str, *, nonempty: bool = False) -> list:
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list, got {kind_of(value)}")
        if nonempty and not value:
            raise self.fail(where, "expected a non-empty list")
        return value

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"expected text, got {kind_of(value)}")
        return value

    def boolean(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"expected true or false, got {value!r}")
        return value

    def one_of(self, value: Any, where: str, choices: Collection[Any], what: str) -> Any:
        if value not in choices:
            listed = choices if isinstance(choices, list | tuple) else sorted(choices, key=str)
            raise self.fail(where, f"expected {what} (one of: {', '.join(map(str, listed))}), got {value!r}")
        return value
