"""Named scenarios (``data/presets.csv``), each stored as a URL query string."""
from __future__ import annotations

from ..reference.data import DataFileError, cached, data_dir, read_table
from .scenario import Scenario, ScenarioError


@cached
def presets() -> dict[str, dict]:
    """{id: {label, label_zh, query, source}} in file order; every query is checked to be a valid scenario."""
    table = read_table("presets.csv", required=("id", "label", "label_zh", "query", "source"), key="id")
    for row_number, query in enumerate(table["query"], start=2):
        try:
            Scenario.from_query(query)
        except ScenarioError as error:
            raise DataFileError(data_dir() / "presets.csv", f"not a valid scenario: {error}", row_number, "query") from None
    return {row["id"]: row for row in table.to_dict("records")}


def preset(preset_id: str) -> Scenario:
    """The scenario of a preset."""
    return Scenario.from_query(presets()[preset_id]["query"])
