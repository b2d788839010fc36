"""LLM Cost Workbench: the cost of training (and serving) large language models, formula by formula.

    >>> import workbench
    >>> est = workbench.estimate(workbench.Scenario(params="70B", tokens="2T", gpu="A100-SXM4-80GB"))
    >>> est.gpu_hours, est.total_cost_usd, est.lines

See docs/architect-guide.md for a tour of the modules and docs/cost-model.md for where each default comes from.
"""
import importlib
import sys

#: What ``workbench.X`` gives, and the module it comes from. Imported on first use (PEP 562), so that a
#: process that needs one module (the Voilà server imports only ``workbench.app.serve``) does not load pandas and
#: the whole engine first, and a Ctrl-C while it starts ends it quietly.
_EXPORTS = {
    "Scenario": "plan.scenario", "ScenarioError": "plan.scenario", "SCHEMA_VERSION": "plan.scenario",
    "estimate": "plan.estimate", "Estimate": "plan.estimate", "sensitivity": "plan.sensitivity",
    "monte_carlo": "plan.uncertainty", "resolve_gpu": "reference.catalog", "gpu_ids": "reference.catalog",
    "UnknownGpuError": "reference.catalog", "DataFileError": "reference.data", "Programme": "programmes.programme",
    "ProgrammeError": "programmes.programme", "levers": "programmes.levers",
}
#: The layers, lowest first: a module imports only from its own layer and the ones before it (tests/test_layers.py).
LAYERS = ("reference", "formulas", "plan", "programmes", "bill", "report", "app")

__all__ = [*_EXPORTS, *LAYERS]
__version__ = "0.1.0"


def submodule_getattr(package: str):
    """A package's ``__getattr__`` (PEP 562): ``workbench.<layer>.<module>`` imports the module on first use, as an
    import statement would; so does ``workbench.<layer>``."""
    def __getattr__(name):
        try:
            value = importlib.import_module(f".{name}", package)
        except ModuleNotFoundError as error:
            if error.name != f"{package}.{name}":
                raise
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        setattr(sys.modules[package], name, value)
        return value
    return __getattr__


_submodule = submodule_getattr(__name__)


def __getattr__(name):
    if name not in _EXPORTS:
        return _submodule(name)
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted([*globals(), *_EXPORTS, *LAYERS])
