"""The app: ipywidgets and Voila (state and events, rendering, controls, panels, downloads, the chart widget, the server)."""
from .. import submodule_getattr

__getattr__ = submodule_getattr(__name__)
