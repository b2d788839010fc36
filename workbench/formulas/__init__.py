"""Formulas: pure functions over numpy arrays, one module per concern; they read reference tables and import nothing above them."""
from .. import submodule_getattr

__getattr__ = submodule_getattr(__name__)
