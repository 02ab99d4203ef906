"""Every test asserts what it names: a test function with no `assert`, no
`pytest.raises` and no `pytest.fail` passes whatever the code does, so none may stand.
(A test whose only check is that nothing raised says so with `assert ... is None` or
by asserting the answer it got.)"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def checks(function: ast.AST) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Attribute) and node.attr in {"raises", "fail"}:
            return True
    return False


def test_every_test_function_asserts_something() -> None:
    silent = []
    for path in sorted(TESTS.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            is_function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if is_function and node.name.startswith("test") and not checks(node):
                silent.append(f"{path.relative_to(TESTS)}:{node.lineno} {node.name}")
    assert not silent, "tests that assert nothing:\n" + "\n".join(silent)
