"""Imported first by the app (``workbench.app.ui``): a served page's kernel loads pandas without pyarrow.

pandas 3 imports pyarrow, when it is installed, as it is imported itself: 35 MB more in every app session (the
planner kernel went from 145 to 185 MB, above the 180 MB the app targets), for a library only a Parquet bill needs.
The workbench itself no longer needs pyarrow (DuckDB reads Parquet bills, :mod:`workbench.bill.focus_reader`), but
where it is installed (the test extras install it) the app's kernel keeps it out of pandas' start. A process that
imported pandas already (a notebook, the tests, the command line) is left as it is. ``WORKBENCH_KEEP_PYARROW=1`` keeps pyarrow in the app's kernel too.
"""
import os
import sys

if "pandas" not in sys.modules and os.environ.get("WORKBENCH_KEEP_PYARROW") != "1":
    sys.modules.setdefault("pyarrow", None)  # None: "import pyarrow" fails, and pandas goes on without it
