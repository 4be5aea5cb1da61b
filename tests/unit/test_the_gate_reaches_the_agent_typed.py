"""The loop and the sampling reach the verification gate through one typed port (verify/port.py): its
verdict is a `GateVerdict` everywhere, never `Any`, never probed with `getattr`, never a stand-in."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "fixloop"
SEAM_NAMES = {"gate", "verdict", "verdicts"}  # parameters and fields that carry the gate or its verdicts


def trees(*folders: str) -> list[tuple[str, ast.Module]]:
    paths = [path for folder in folders for path in sorted((PACKAGE / folder).rglob("*.py"))]
    return [
        (path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"))) for path in paths
    ]


def seam_annotations(tree: ast.Module) -> list[tuple[str, str]]:
    """(name, annotation) of every parameter and annotated field named for the gate or its verdicts."""
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                if arg.arg in SEAM_NAMES:
                    found.append((arg.arg, ast.unparse(arg.annotation) if arg.annotation else ""))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Attribute | ast.Name):
            name = node.target.attr if isinstance(node.target, ast.Attribute) else node.target.id
            if name in SEAM_NAMES:
                found.append((name, ast.unparse(node.annotation)))
    return found


def test_the_port_names_no_any() -> None:
    port = ast.parse((PACKAGE / "verify" / "port.py").read_text(encoding="utf-8"))
    names = {node.id for node in ast.walk(port) if isinstance(node, ast.Name)}
    attributes = {node.attr for node in ast.walk(port) if isinstance(node, ast.Attribute)}
    assert "Any" not in names | attributes
    methods = {
        node.name: ast.unparse(node.returns) if node.returns else ""
        for node in ast.walk(port)
        if isinstance(node, ast.AsyncFunctionDef)
    }
    assert methods == {"check": "GateVerdict", "judge": "GateVerdict", "screen": "bool", "accept": "None"}


def test_every_gate_and_verdict_in_the_agent_and_engine_is_typed_by_the_port() -> None:
    seen: dict[str, str] = {}
    for path, tree in trees("agent", "engine"):
        for name, annotation in seam_annotations(tree):
            seen[f"{path}: {name}"] = annotation
            assert "Any" not in annotation and "Gate" in annotation, (path, name, annotation)
    assert len(seen) >= 5


def test_the_verdict_is_read_not_probed() -> None:
    for path, tree in trees("agent", "engine"):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
                assert ast.unparse(node.args[0]) not in {"verdict", "result"}, path
            if isinstance(node, ast.ClassDef | ast.Name):
                assert getattr(node, "name", getattr(node, "id", "")) not in {
                    "GateAnswer",
                    "Judge",
                    "Refused",
                }
