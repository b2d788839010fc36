"""Programmes: workstreams of scenarios over calendar months, fleets, the monthly timeline and the levers over plans."""
from .. import submodule_getattr

__getattr__ = submodule_getattr(__name__)
