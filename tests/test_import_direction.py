"""The package's folders are the trust flow (docs/design.md §Module map): nothing imports upwards.

Every module's imports are read with ``ast`` (imports inside functions included), and each
``recompute.*`` import must point into the module's own room or a room on a lower level.
Rooms on the same level (``layout`` and ``sources``, ``vectors`` and ``watch``) do not
import each other. Nor does any module reach itself through imports (a cycle), counting those
inside functions, those for types only (under ``if TYPE_CHECKING:``) and a package's face: a
module can be read with only what is below it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import recompute

PACKAGE = Path(recompute.__file__).resolve().parent

# room -> level; a room may import rooms of strictly lower levels, and itself.
LEVELS = {
    "": 0,  # recompute/__init__.py (the version, the public API re-exports: see below)
    "core": 0,
    "disk": 0,  # the one place files are written (recompute/disk/whole_file.py)
    "data": 0,
    "lightclient": 1,
    "layout": 2,
    "sources": 2,
    "recipes": 3,
    "devnet": 3,
    "l2": 3,
    "evaluator": 4,
    "vectors": 5,
    "watch": 5,
    "cli": 6,
}
# recompute/__init__.py, recompute/api.py and recompute/recipe.py (for recipe authors) are the
# public library surface: they sit on top
# (they re-export from every room) but nothing inside the package may import them.
TOP = {"recompute", "recompute.api", "recompute.recipe", "recompute.__main__"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LEVELS else ""


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return [(line, name) for line, name in found if name.split(".")[0] == "recompute"]


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


MODULES = {_module_name(p) for p in _modules()}


def test_every_room_is_known():
    parts = [p.relative_to(PACKAGE).parts for p in _modules()]
    rooms = {part[0] for part in parts if len(part) > 1}
    assert rooms <= set(LEVELS), f"rooms without a level: {sorted(rooms - set(LEVELS))}"


def test_no_import_runs_upwards():
    violations = []
    for path in _modules():
        module = _module_name(path)
        if module in TOP:
            continue
        room = _room(module)
        for line, target in _imports(path):
            if target in TOP or any(target.startswith(top + ".") for top in TOP - {"recompute"}) \
                    or target.rpartition(".")[0] == "recompute" and target not in MODULES:
                violations.append(f"{module}:{line} imports the public surface {target}")
                continue
            other = _room(target)
            if other == room:
                continue
            if LEVELS[other] >= LEVELS[room]:
                violations.append(f"{module}:{line} ({room or 'top'}, level {LEVELS[room]}) "
                                  f"imports {target} ({other or 'top'}, level {LEVELS[other]})")
    assert not violations, "imports that run upwards or sideways:\n" + "\n".join(violations)


def test_only_the_cli_knows_click():
    users = [f"{_module_name(p)}" for p in _modules()
             if _room(_module_name(p)) != "cli"
             and any(n.split(".")[0] == "click" for n in _all_imports(p))]
    assert not users, f"click imported outside recompute/cli: {users}"


def _all_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_the_core_does_no_io():
    """The core checks bytes; it never opens a socket, a file or a process."""
    io_modules = {"requests", "socket", "http", "urllib", "subprocess", "web3", "aiohttp"}
    users = {_module_name(p): sorted({n.split(".")[0] for n in _all_imports(p)} & io_modules)
             for p in (PACKAGE / "core").glob("*.py")}
    assert not {m: u for m, u in users.items() if u}


def test_the_readme_map_matches_the_tree():
    """Every folder the repository table (docs/repository.md) names exists, and every room of
    the package and every top-level folder of the checkout is in the table."""
    root = PACKAGE.parent
    readme = (root / "docs" / "repository.md").read_text()
    table = readme[readme.index("| path | holds |"):]
    named = set()
    for line in table.splitlines():
        if line.startswith("| `"):
            cell = line.split("|")[1]
            named |= {part.strip().strip("`").rstrip("/") for part in cell.split(", ")}
    assert all((root / name).exists() for name in named), sorted(
        n for n in named if not (root / n).exists())
    rooms = {f"recompute/{p.name}" for p in PACKAGE.iterdir()
             if p.is_dir() and (p / "__init__.py").exists()}
    untracked = ("node_modules", "build", "dist", "site")
    tops = {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")
            and p.name not in untracked and not p.name.endswith(".egg-info")}
    assert rooms <= named, f"package rooms missing from the README map: {sorted(rooms - named)}"
    assert tops - {"recompute"} <= named | {".ci"}, sorted(tops - named - {"recompute"})


# ---- import cycles --------------------------------------------------------------------------


def _every_import(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement: module level, inside functions and classes, and those under
    ``if TYPE_CHECKING:`` (a type is a dependency as much as a call)."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


def import_graph() -> dict[str, set[str]]:
    """module -> the package modules it imports. ``from package import name`` reads the
    package's face (its ``__init__``), and the submodule ``package.name`` when there is one;
    ``import a.b`` and ``from a.b import x`` point at ``a.b`` alone (the parent packages Python
    imports on the way are not edges: that would make every re-exporting ``__init__`` a
    cycle)."""
    modules = {_module_name(p): p for p in _modules()}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets: set[str] = set()
        for node in _every_import(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                names = [base] + [f"{base}.{alias.name}" for alias in node.names
                                  if f"{base}.{alias.name}" in modules]
            for name in names:
                while name and name not in modules:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    targets.add(name)
        graph[module] = targets
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(cycles)


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import():
    """The finder itself bites: a three-module cycle; an import inside a function counts, and
    so does one under ``if TYPE_CHECKING:``."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]
    tree = ast.parse("def f():\n    import recompute.x\n"
                     "if TYPE_CHECKING:\n    import recompute.y\n")
    assert sorted(n.names[0].name for n in _every_import(tree)) == ["recompute.x", "recompute.y"]


def test_no_import_cycles():
    """No module reaches itself through imports, those inside functions and those for types
    only included."""
    cycles = import_cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)
