"""Realistic FOCUS 1.0 exports of a GPU training programme, for tests and the actuals benchmark: GPU instances,
managed ML, object and file storage, data transfer, logging and config audit, tagged by team, project, model
version and environment (with the tag names providers use: ``team``, ``Team``, ``cost_center``, ``env``), a share
untagged, a few credits. :func:`write_export` returns the totals the reader must find, computed from the
generated values (not by reading the file back)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

#: (ServiceCategory, ServiceName, workbench category, ResourceType, unit cost [USD], units per row (low, high))
ITEMS = (
    ("Compute", "Amazon Elastic Compute Cloud", "compute", "p5.48xlarge", 98.32, (1, 24)),
    ("AI and Machine Learning", "Amazon SageMaker", "compute", "ml.p4d.24xlarge", 40.96, (1, 12)),
    ("Storage", "Amazon Simple Storage Service", "storage", "bucket", 0.023 / 30, (1_000, 500_000)),
    ("Storage", "Amazon FSx for Lustre", "storage", "file system", 0.145 / 30, (1_000, 200_000)),
    ("Networking", "AWS Data Transfer", "network", "transfer", 0.09, (1, 2_000)),
    ("Management and Governance", "AmazonCloudWatch", "logging", "log group", 0.5, (1, 400)),
    ("Management and Governance", "AWS Config", "security", "config rule", 0.003, (10, 5_000)),
)
WEIGHTS = (0.35, 0.05, 0.2, 0.05, 0.15, 0.15, 0.05)
TEAMS = ("pretraining", "post-training", "platform", "serving")
TAG_NAMES = ("team", "Team", "cost_center")  # all carry the team (data/focus_tag_keys.csv)


def export_frame(n_rows: int, seed: int = 0, month: str = "2025-03") -> tuple[pd.DataFrame, dict]:
    """(the export as a frame of text, expected totals: by_category, by_team, unattributed, total) [USD]."""
    rng = np.random.default_rng(seed)
    item = rng.choice(len(ITEMS), size=n_rows, p=WEIGHTS)
    low = np.array([i[5][0] for i in ITEMS])[item]
    high = np.array([i[5][1] for i in ITEMS])[item]
    units = rng.integers(low, high + 1)
    cost = np.round(units * np.array([i[4] for i in ITEMS])[item], 6)
    credit = rng.random(n_rows) < 0.002
    cost = np.where(credit, -np.round(cost * 0.1, 6), cost)
    day = rng.integers(1, 29, size=n_rows)
    hour = rng.integers(0, 24, size=n_rows)
    start = pd.to_datetime([f"{month}-01"] * n_rows) + pd.to_timedelta(day - 1, "D") + pd.to_timedelta(hour, "h")
    team = rng.integers(0, len(TEAMS), size=n_rows)
    tagged = rng.random(n_rows) > 0.1
    tag_name = rng.integers(0, len(TAG_NAMES), size=n_rows)
    # the few distinct tag sets an export repeats
    tag_texts = {(t, k, v): json.dumps({TAG_NAMES[k]: TEAMS[t], "project": "assistant", "model_version": f"v{v}",
                                        "env": "prod" if t != 0 or v else "dev"})
                 for t in range(len(TEAMS)) for k in range(len(TAG_NAMES)) for v in range(3)}
    version = rng.integers(0, 3, size=n_rows)
    tags = [tag_texts[(t, k, v)] if ok else "NULL" for t, k, v, ok in zip(team, tag_name, version, tagged)]
    frame = pd.DataFrame({
        "BilledCost": [f"{c:.6f}" for c in cost], "EffectiveCost": [f"{c:.6f}" for c in cost],
        "BillingCurrency": "USD", "ChargeCategory": np.where(credit, "Credit", "Usage"),
        "ChargePeriodStart": start.strftime("%Y-%m-%dT%H:00:00Z"),
        "ChargePeriodEnd": (start + pd.Timedelta(hours=1)).strftime("%Y-%m-%dT%H:00:00Z"),
        "ProviderName": "AWS", "ServiceCategory": np.array([i[0] for i in ITEMS])[item],
        "ServiceName": np.array([i[1] for i in ITEMS])[item], "ResourceType": np.array([i[3] for i in ITEMS])[item],
        "ConsumedQuantity": units.astype(str), "Tags": tags,
    })
    category = np.array([i[2] for i in ITEMS])[item]
    frame_cost = cost
    expected = {
        "total": float(frame_cost.sum()),
        "by_category": pd.Series(frame_cost).groupby(category).sum().to_dict(),
        "by_team": pd.Series(frame_cost[tagged]).groupby(np.array(TEAMS)[team[tagged]]).sum().to_dict(),
        "unattributed": float(frame_cost[~tagged].sum()),
    }
    return frame, expected


def write_export(path, n_rows: int, seed: int = 0) -> dict:
    """Write an export of ``n_rows`` to ``path`` (``.csv``, ``.csv.gz`` or ``.parquet``); its expected totals."""
    frame, expected = export_frame(n_rows, seed)
    path = str(path)
    if path.endswith(".parquet"):
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)
    return expected
