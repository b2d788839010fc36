"""LLM Cost Workbench: the cost of training (and serving) large language models, formula by formula.

    >>> import workbench
    >>> est = workbench.estimate(workbench.Scenario(params="70B", tokens="2T", gpu="A100-SXM4-80GB"))
    >>> est.gpu_hours, est.total_cost_usd, est.lines

See the README for a tour of the modules and where each default comes from.
"""
from .catalog import UnknownGpuError, gpu_ids, resolve_gpu
from .data import DataFileError
from .estimate import Estimate, estimate
from .scenario import SCHEMA_VERSION, Scenario, ScenarioError
from .sensitivity import sensitivity
from .uncertainty import monte_carlo
from . import budget

__all__ = ["Scenario", "ScenarioError", "estimate", "Estimate", "sensitivity", "monte_carlo", "budget", "SCHEMA_VERSION",
           "resolve_gpu", "gpu_ids", "UnknownGpuError", "DataFileError"]
__version__ = "0.1.0"
