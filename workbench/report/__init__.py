"""Reports: tidy frames for charts and tables, Altair builders, exports, links and language."""
from .. import submodule_getattr

__getattr__ = submodule_getattr(__name__)
