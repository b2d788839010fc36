"""Reports: tidy frames for charts and tables, Altair builders, exports and links."""
from .. import submodule_getattr

__getattr__ = submodule_getattr(__name__)
