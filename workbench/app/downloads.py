"""Download links whose files are made when a user asks for one, not on every change of the plan.

Building the cost lines' CSV and the scenario's JSON as data links on every slider move cost the kernel
~3 ms and sent ~20 kB per change that nobody downloaded. Here a click asks the kernel for the file (a custom
widget message); the kernel makes it from the plan as it is at that moment and sends it back, and the page
saves it under its name. Offline: the file travels over the widget connection and is saved from a data URL.
"""
from __future__ import annotations

import base64
import logging
from typing import Callable

import anywidget
import traitlets

log = logging.getLogger(__name__)

#: The media type of an .xlsx workbook.
XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


class Downloads(anywidget.AnyWidget):
    """Links for ``files`` ([{"name", "mime", "label"}]); ``provider(name) -> bytes`` makes a file on request."""

    _esm = """
    function render({ model, el }) {
      function draw() {
        el.replaceChildren();
        model.get("files").forEach((file, i) => {
          if (i) { el.append(" · "); }
          const a = document.createElement("a");
          a.className = "wb-download";
          a.download = file.name;
          a.href = "#";
          a.textContent = file.label;
          a.onclick = (event) => { event.preventDefault(); model.send({ request: file.name }); };
          el.append(a);
        });
      }
      model.on("msg:custom", (msg) => {
        if (!msg || !msg.name || !msg.data) { return; }
        const save = document.createElement("a");
        save.download = msg.name;
        save.href = "data:" + msg.mime + ";base64," + msg.data;
        document.body.append(save);
        save.click();
        save.remove();
        el.dataset.wbSaved = msg.name;
      });
      model.on("change:files", draw);
      draw();
    }
    export default { render };
    """
    files = traitlets.List().tag(sync=True)

    def __init__(self, provider: Callable[[str], bytes], **kwargs):
        super().__init__(**kwargs)
        self._provider = provider
        self.on_msg(self._requested)

    def payload(self, name: str) -> bytes:
        """The file ``name`` as the page would receive it now."""
        if name not in {f["name"] for f in self.files}:
            raise KeyError(f"no download named {name!r}")
        return self._provider(name)

    def _requested(self, _widget, content, _buffers):
        name = content.get("request") if isinstance(content, dict) else None
        mime = {f["name"]: f["mime"] for f in self.files}.get(name) if isinstance(name, str) else None
        if mime is None:  # not one of ours: a stale page or a forged message
            return
        try:
            data = base64.b64encode(self.payload(name)).decode("ascii")
        except Exception:  # noqa: BLE001 - the page keeps working; the reason goes to the server log
            log.exception("making the download %s failed", name)
            return
        self.send({"name": name, "mime": mime, "data": data})
