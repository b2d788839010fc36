"""The bill: FOCUS exports read and checked, and the review of a bill against a plan."""
from .. import submodule_getattr

__getattr__ = submodule_getattr(__name__)
