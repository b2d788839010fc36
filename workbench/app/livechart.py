"""The app's chart widget: a Vega-Lite stack whose data change in place.

Altair's ``JupyterChart`` re-embeds the whole specification on every change: the kernel rebuilds and sends
every chart, the browser recompiles and redraws them. Here the specification is sent when its shape changes
(:class:`workbench.report.charts.ChartStack` decides) and otherwise only the datasets, which the front end swaps into
the Vega view it already shows (``view.change``), so the scales, axes and marks update without a new view.

The front end is bundled with Vega, Vega-Lite and vega-embed by vl-convert and cached on disk
(:mod:`workbench.report.offline`): nothing is fetched from a CDN. After each draw the element carries
``data-wb-draws`` (a count) and ``data-wb-drawn-at`` (``performance.now()``), for tests and the browser benchmark.
"""
from __future__ import annotations

import anywidget
import traitlets

from ..report import offline

_FRONT_END = """
async function render({ model, el }) {
  let view = null;       // the Vega view on screen
  let shown = null;      // the datasets object it shows
  let queue = Promise.resolve();
  let draws = 0;
  const drawn = () => {
    draws += 1;
    el.dataset.wbDraws = String(draws);
    el.dataset.wbDrawnAt = String(performance.now());
  };
  const showError = (error) => {
    const box = document.createElement("div");
    box.className = "wb-chart-error";
    box.textContent = "Chart error: " + (error && error.message ? error.message : String(error));
    el.replaceChildren(box);
  };
  async function embed() {
    if (view) { view.finalize(); view = null; }
    const spec = model.get("spec");
    if (!spec) { el.replaceChildren(); return; }
    const datasets = model.get("datasets");
    const full = Object.assign(structuredClone(spec), { datasets: structuredClone(datasets) });
    const result = await vegaEmbed(el, full, { actions: false, renderer: "svg" });
    view = result.view;
    shown = datasets;
    drawn();
  }
  async function swap() {
    const datasets = model.get("datasets");
    if (!view || datasets === shown) { return; }
    for (const [name, rows] of Object.entries(datasets)) {
      view.change(name, view.changeset().remove(() => true).insert(structuredClone(rows)));
    }
    shown = datasets;
    await view.runAsync();
    drawn();
  }
  // one task at a time, in the order the kernel sent them: a swap never lands on a view being replaced
  const run = (task) => { queue = queue.then(task).catch(showError); return queue; };
  model.on("change:spec", () => run(embed));
  model.on("change:datasets", () => run(swap));
  await run(embed);
  return () => { if (view) { view.finalize(); } };
}
export default { render };
"""


class LiveChart(anywidget.AnyWidget):
    """``spec``: a Vega-Lite specification whose data are named datasets; ``datasets``: {name: rows}."""

    spec = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    datasets = traitlets.Dict().tag(sync=True)

    def __init__(self, **kwargs):
        # the bundle is read (or built) on first use, not at import: importing this module stays cheap
        if not getattr(type(self), "_esm", None):
            type(self)._esm = self.bundle()
        super().__init__(**kwargs)

    @staticmethod
    def bundle() -> str:
        return offline.widget_bundle("livechart", _FRONT_END)

    @staticmethod
    def bundle_path():
        return offline.bundle_path("livechart", _FRONT_END)

    def show(self, spec: dict | None, datasets: dict):
        """Draw ``spec`` (None: keep the one shown) with ``datasets``, in one message to the front end."""
        with self.hold_sync():
            if spec is not None:
                self.spec = spec
            self.datasets = datasets
