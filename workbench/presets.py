"""Named scenarios (``data/presets.csv``), each stored as a URL query string."""
from __future__ import annotations


from .data import cached, read_table
from .scenario import Scenario


@cached
def presets() -> dict[str, dict]:
    """{id: {label, label_zh, query, source}} in file order."""
    table = read_table("presets.csv", required=("id", "label", "label_zh", "query", "source"), key="id")
    return {row["id"]: row for row in table.to_dict("records")}


def preset(preset_id: str) -> Scenario:
    """The scenario of a preset."""
    return Scenario.from_query(presets()[preset_id]["query"])
