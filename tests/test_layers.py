"""The package's layers, visible in its folders, with one direction of travel (issue 27): a module imports only
from its own layer and the layers below it; the top (the public API and the command line) may
import any."""
import ast
from pathlib import Path

import workbench

PACKAGE = Path(workbench.__file__).resolve().parent


#: What a layer may take from the top package: the lazy sub-module look-up, nothing else (the API would climb).
TOP_ALLOWED = {"workbench.submodule_getattr"}


def _imports(path: Path, root: Path = PACKAGE):
    """(line, absolute module) of every ``from .x import``, ``import workbench.x`` and
    ``importlib.import_module("workbench.x")`` in ``path``; a name taken from the top package is ``workbench.<name>``."""
    parts = path.relative_to(root.parent).with_suffix("").parts  # ("workbench", "plan", "estimate")
    package = parts[:-1] if path.name != "__init__.py" else parts[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join((*base, node.module)) if node.module else ".".join(base)
                names = [f"{module}.{a.name}" for a in node.names] if not node.module else [module]
            elif node.module == "workbench":
                names = [f"workbench.{a.name}" for a in node.names]
            else:
                names = [node.module or ""]
            for name in names:
                if name.startswith("workbench"):
                    yield node.lineno, name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("workbench"):
                    yield node.lineno, alias.name
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and node.args[0].value.startswith("workbench")):
            yield node.lineno, node.args[0].value


def _layer(module: str):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in workbench.LAYERS else None


def test_the_folders_are_the_layers():
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert folders == sorted(workbench.LAYERS)
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert top == ["__init__.py", "cli.py"]  # the public API and the command line
    for layer in workbench.LAYERS:
        assert (PACKAGE / layer / "__init__.py").read_text().startswith('"""')  # each says what it holds


def test_no_module_imports_from_a_higher_layer():
    rank = {layer: i for i, layer in enumerate(workbench.LAYERS)}
    climbs = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = _layer(".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts))
        if own is None:
            continue  # the top may import any layer
        for line, module in _imports(path):
            target = _layer(module)
            if target is None:
                if module not in TOP_ALLOWED:  # the top package, its API or the command line
                    climbs.append(f"{path.relative_to(PACKAGE)}:{line} imports the top ({module})")
                continue
            if rank[target] > rank[own]:
                climbs.append(f"{path.relative_to(PACKAGE)}:{line} ({own}) imports {module} ({target})")
    assert climbs == []


def test_the_check_itself_sees_a_climb(tmp_path):
    # a lower module importing a higher one is found (the test above can fail)
    fake = PACKAGE / "formulas" / "compute.py"
    tree = list(_imports(fake))
    assert all(_layer(m) in ("formulas", "reference", None) for _, m in tree)
    probe = tmp_path / "workbench" / "formulas" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("from ..app import ui\n")
    assert [m for _, m in _imports(probe, tmp_path / "workbench")] == ["workbench.app"]
    assert _layer("workbench.app.ui") == "app" and _layer("workbench.cli") is None
    # the top's API, the top package itself and a dynamic import are seen too
    probe.write_text("from .. import Scenario\nimport workbench\nimport importlib\nimportlib.import_module('workbench.app.ui')\n")
    assert [m for _, m in _imports(probe, tmp_path / "workbench")] == ["workbench.Scenario", "workbench",
                                                                       "workbench.app.ui"]
