"""A plan of one run: the validated Scenario, its figures and cost lines (estimate), notes, sensitivity, uncertainty, sweeps and the calibration on published runs."""
from .. import submodule_getattr

__getattr__ = submodule_getattr(__name__)
