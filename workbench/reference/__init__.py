"""Reference data: the table reader with its checks, the accelerator catalog and the price look-up."""
from .. import submodule_getattr

__getattr__ = submodule_getattr(__name__)
