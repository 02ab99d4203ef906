"""Two rules of ARCHITECTURE.md that import-linter does not check, read off the source:

- no import cycle: no module imports a module that imports it back, however far round,
  imports made under `if TYPE_CHECKING:` and inside functions included (a cycle the
  interpreter tolerates is still two modules that cannot be read one before the other);
- no module imports a name starting with `_` from another module: what a module keeps
  to itself stays there, and what another needs is given a public name.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "server" / "hopper"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def absolute(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    """The module an ImportFrom names, relative imports resolved."""
    if node.level == 0:
        return node.module or ""
    base = name.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported(name: str, path: Path, known: set[str]) -> set[str]:
    """The hopper modules `name` imports: `from a import b` names the module a.b when
    there is one, else a itself."""
    found = set()
    for node in imports(path):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        source = absolute(node, name, path.name == "__init__.py")
        for alias in node.names:
            inner = f"{source}.{alias.name}"
            found.add(inner if inner in known else source)
    return {other for other in found if other in known and other != name}


def cycle_from(start: str, graph: dict[str, set[str]]) -> list[str] | None:
    """A shortest path from `start` back to itself, or None (breadth first)."""
    paths = {other: [start, other] for other in graph[start]}
    queue = list(paths)
    while queue:
        here = queue.pop(0)
        if here == start:
            return paths[here]
        for other in graph[here]:
            if other not in paths:
                paths[other] = [*paths[here], other]
                queue.append(other)
    return None


def test_no_module_imports_one_that_imports_it_back() -> None:
    found = modules()
    graph = {name: imported(name, path, set(found)) for name, path in found.items()}
    cycles = {" -> ".join(c) for name in graph if (c := cycle_from(name, graph)) is not None}
    assert not cycles, "import cycles:\n" + "\n".join(sorted(cycles))


def test_the_walk_sees_type_checking_imports_as_imports() -> None:
    # given a module that imports its importer only for type checking
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hopper.a import A\n"
    node = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)
                and n.module == "hopper.a")
    # then the walk counts it as an edge
    assert absolute(node, "hopper.b", False) == "hopper.a"
    graph = {"hopper.a": {"hopper.b"}, "hopper.b": {"hopper.a"}}
    assert cycle_from("hopper.a", graph) == ["hopper.a", "hopper.b", "hopper.a"]


def private_imports(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in imports(path):
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                continue
            for alias in node.names:
                last = alias.name.rsplit(".", 1)[-1]
                if last.startswith("_") and not last.startswith("__"):
                    where = path.relative_to(ROOT)
                    found.append(f"{where}:{node.lineno} imports {alias.name}")
    return found


def test_no_module_imports_another_modules_private_name() -> None:
    found = private_imports(PACKAGE) + private_imports(ROOT / "tests")
    assert not found, "\n".join(found)
