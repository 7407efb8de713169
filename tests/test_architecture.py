"""The shape of the code: no import cycles between ParaFlux's modules (lazy imports inside functions
included), and every registered benchmark renders its committed JSON to its committed Markdown."""

import ast
import json
from pathlib import Path

import pytest

from paraflux.engine.bench.registry import BENCHMARKS

ROOT = Path(__file__).resolve().parents[1]


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The ParaFlux modules a file imports anywhere in it (module or name imports alike)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + [node.module]) if node.module else ".".join(base)
            target = target.removeprefix("paraflux.")
            found |= {f"{target}.{a.name}" if f"{target}.{a.name}" in known else target for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("paraflux.") for a in node.names}
    return (found & known) - {name}


def import_graph() -> dict[str, set[str]]:
    files = {_module(p): p for top in ("engine", "app") for p in (ROOT / top).rglob("*.py")}
    return {name: _imports(path, name, set(files)) for name, path in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles():
    assert cycles(import_graph()) == []


@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_every_benchmark_renders_its_committed_tables(name):
    data = json.loads((ROOT / "docs" / "benchmarks" / f"{name}.json").read_text())
    assert BENCHMARKS[name].render(data) == (ROOT / "docs" / "benchmarks" / f"{name}.md").read_text()
