"""Read and check every data table at once, so that a bad data folder is refused before any work starts
(with the file, row and column of the first problem) rather than half-way through a command or a page."""
from __future__ import annotations

from ..bill import actuals
from ..plan import boundaries, contingency, presets, scenario, uncertainty
from ..reference import catalog, data, prices, region_prices
from ..formulas import failures, hidden, mfu, ownership, scaling
from ..programmes import programme_presets, timeline
from ..programmes.levers import lever_table  # the module's name is the function's: workbench.levers is levers()


def check_all() -> None:
    """Load every table of the data folder; raises :class:`workbench.DataFileError` on the first bad one."""
    scenario.fields()
    catalog.accelerators()
    catalog._names()
    prices.prices()
    region_prices.region_prices()
    region_prices.regions_table()
    ownership.hardware_prices()
    scaling.scaling_laws()
    data.published_runs()
    mfu.run_table()
    mfu.scaling_table()
    mfu.parameters()
    mfu.speedups()
    mfu.kernel_efficiency(catalog.gpu_ids())
    prices.api_prices()
    uncertainty.distributions()
    presets.presets()
    timeline.profiles()
    programme_presets.presets()
    hidden.table()
    actuals.category_table()
    actuals.tag_keys()
    failures.precision_risks()
    boundaries.table()
    lever_table()
    contingency.weights()
