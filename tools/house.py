"""The package's house: its module map and the numbers of its import graph.

    python tools/house.py [PACKAGE_DIR]     (default: sphinx_autocast_demo next to tools/)

Counted from the source with :mod:`ast`, nothing imported:

- rooms: modules (``engine/__init__.py`` counts when it has a line of code);
- arrows: distinct edges A -> B between the package's own modules, where A imports B anywhere
  in its body (module level, inside functions, and under ``if TYPE_CHECKING:``, each listed
  apart). ``from . import x`` is an arrow to module ``x``; ``from .engine import cache`` an
  arrow to ``engine.cache``; a package's ``__init__`` is an arrow only when it is what is
  imported (``from . import __version__``);
- circles: strongly connected components of more than one module (Tarjan), over every arrow;
- floors: the longest path of the graph with each circle collapsed into one room, in rooms;
- arrows back up: arrows between two modules of one circle (the edges a layering cannot point
  down).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
            if not path.read_text(encoding="utf-8").strip():
                continue
        found[".".join(parts) or "__init__"] = path
    return found


def _in_type_checking(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def _in_function(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return True
    return False


def arrows(name: str, path: Path, known: set[str], package: str) -> dict[str, str]:
    """Module -> how it is imported (``top``, ``function``, ``typing``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    is_pkg = path.name == "__init__.py"
    here = name.split(".") if name != "__init__" else []
    base = here if is_pkg else here[:-1]
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                up = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                prefix = [*up, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.split(".")[0] == package:
                prefix = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:
                sub = ".".join([*prefix, alias.name])
                targets.append(sub if sub in known else (".".join(prefix) or "__init__"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == package:
                    targets.append(".".join(parts[1:]) or "__init__")
        else:
            continue
        how = ("typing" if _in_type_checking(node, parents)
               else "function" if _in_function(node, parents) else "top")
        for target in targets:
            if target in known and target != name:
                # the strongest kind wins: top > function > typing
                rank = {"top": 0, "function": 1, "typing": 2}
                if target not in out or rank[how] < rank[out[target]]:
                    out[target] = how
    return out


def components(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def numbers(graph: dict[str, set[str]]) -> tuple[dict[str, int], dict[str, object]]:
    """Each module's floor, and the house's numbers, of ``graph``."""
    comps = components(graph)
    of = {m: i for i, comp in enumerate(comps) for m in comp}
    floor: dict[int, int] = {}

    def height(c: int) -> int:  # longest path down, in rooms; a module importing none: 1
        if c not in floor:
            below = {of[w] for v in comps[c] for w in graph[v] if of[w] != c}
            floor[c] = 1 + max((height(b) for b in below), default=0)
        return floor[c]

    circles = [c for c in comps if len(c) > 1]
    back = sorted((v, w) for v in graph for w in graph[v] if of[v] == of[w])
    return {m: height(of[m]) for m in graph}, {
        "rooms": len(graph),
        "floors": max((height(i) for i in range(len(comps))), default=0),
        "arrows": sum(len(t) for t in graph.values()),
        "arrows back up": f"{len(back)}" + (" (" + ", ".join(f"{v}->{w}" for v, w in back) + ")"
                                             if back else ""),
        "circles": f"{len(circles)}" + (" (" + "; ".join(" <-> ".join(c) for c in circles) + ")"
                                        if circles else ""),
    }


def main(argv: list[str]) -> int:
    root = (Path(argv[1]) if len(argv) > 1
            else Path(__file__).resolve().parent.parent / "sphinx_autocast_demo")
    package = root.name
    found = modules(root)
    known = set(found)
    edges = {name: arrows(name, path, known, package) for name, path in found.items()}
    runtime = {n: {t for t, how in e.items() if how != "typing"} for n, e in edges.items()}
    every = {n: set(e) for n, e in edges.items()}
    floors, said = numbers(runtime)
    lines = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in found.items()}
    print(f"module map of {package}: floor (runtime arrows), module, lines -> what it imports")
    for name in sorted(found, key=lambda n: (-floors[n], n)):
        typing = sorted(set(edges[name]) - runtime[name])
        print(f"  {floors[name]:>2}  {name:<20} {lines[name]:>5}  -> " + ", ".join(sorted(runtime[name]))
              + (f"  (types: {', '.join(typing)})" if typing else ""))
    kinds = [k for e in edges.values() for k in e.values()]
    print(f"lines: {sum(lines.values())}")
    print("house, runtime arrows (module level and in functions; "
          f"{kinds.count('top')} + {kinds.count('function')}):")
    for key, value in said.items():
        print(f"  {key}: {value}")
    print(f"house, every arrow (also the {kinds.count('typing')} only under TYPE_CHECKING):")
    for key, value in numbers(every)[1].items():
        print(f"  {key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
