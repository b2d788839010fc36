"""The accelerator catalog (``data/accelerators.csv``): specifications and name look-up.

Look-ups ignore case, spaces, dashes and parenthesised remarks, and accept the aliases listed in the
catalog, so ``H100``, ``a100-80gb``, ``A100 SXM4 80GB`` and ``V100 (variant unknown)`` all resolve.
"""
from __future__ import annotations

import difflib
import re

import numpy as np
import pandas as pd

from .data import DataFileError, cached, data_dir, read_table

PRECISIONS = ("bf16", "fp16", "fp8")
_NUMERIC = ("memory_gb", "mem_bandwidth_tbs", "peak_bf16_dense_tflops", "peak_fp16_dense_tflops",
            "peak_fp8_dense_tflops", "peak_fp32_tflops", "tdp_w", "nvlink_gb_per_s", "nvlink_domain_gpus",
            "pcie_gb_per_s", "network_gbps_per_node", "sustained_share_of_peak")


#: Physically possible values (0 as a lower bound means "above zero"); a zero peak or memory cannot be priced.
_BOUNDS = {"memory_gb": (0, 10_000), "mem_bandwidth_tbs": (0, 1_000), "peak_bf16_dense_tflops": (0, 1e6),
           "peak_fp16_dense_tflops": (0, 1e6), "peak_fp8_dense_tflops": (0, 1e6), "peak_fp32_tflops": (0, 1e6),
           "tdp_w": (0, 100_000), "nvlink_gb_per_s": (-1e-9, 1e5), "nvlink_domain_gpus": (1, 1e5),
           "pcie_gb_per_s": (0, 1e4), "network_gbps_per_node": (0, 1e6), "sustained_share_of_peak": (0, 1)}


class UnknownGpuError(ValueError):
    """A GPU name that matches no catalog id or alias."""


def _normalise(name: str) -> str:
    name = re.sub(r"\(.*?\)", "", str(name))
    return re.sub(r"[^0-9A-Z]", "", name.upper())


@cached
def accelerators() -> pd.DataFrame:
    """The catalog, one row per SKU, indexed by its stable id."""
    table = read_table("accelerators.csv", numeric=_NUMERIC, required=("id", "generation", "memory_gb", "nvlink_gb_per_s", "nvlink_domain_gpus",
                                                           "pcie_gb_per_s", "network_gbps_per_node", "source"),
                       key="id", bounds=_BOUNDS)
    return table.set_index("id", drop=False)


@cached
def _names() -> dict[str, str]:
    names: dict[str, str] = {}
    table = accelerators()
    for row_number, (gpu_id, aliases, name) in enumerate(zip(table["id"], table["aliases"], table["name"]), 2):
        for alias in (gpu_id, name, *filter(None, aliases.split(";"))):
            key = _normalise(alias)
            if names.get(key, gpu_id) != gpu_id:
                raise DataFileError(data_dir() / "accelerators.csv",
                                    f"alias {alias!r} also names {names[key]}", row_number, "aliases")
            names[key] = gpu_id
    return names


def gpu_ids() -> list[str]:
    """Every SKU id in the catalog."""
    return list(accelerators().index)


def resolve_gpu(name: str) -> str:
    """The catalog id for a SKU name or alias; :class:`UnknownGpuError` lists the closest ids if none."""
    found = _names().get(_normalise(name))
    if found is not None:
        return found
    close = difflib.get_close_matches(_normalise(name), list(_names()), n=8, cutoff=0.5)
    ids = list(dict.fromkeys(_names()[c] for c in close))[:3] or gpu_ids()[:3]
    shown = name if len(str(name)) <= 40 else str(name)[:40] + "..."  # a pasted page is not echoed whole
    raise UnknownGpuError(f"unknown GPU {shown!r}; closest: {', '.join(ids)} (see `workbench gpus`)")


def _broadcast_scalar(values):
    """The one value of an array broadcast from a scalar (all strides 0, as a Monte Carlo's fixed fields are), or
    ``None``: a look-up is then done once, not once per draw."""
    if isinstance(values, np.ndarray) and values.size and all(stride == 0 for stride in values.strides):
        return values.ravel()[0]
    return None


def peak_flops_per_s(gpu, precision="bf16"):
    """Dense peak throughput of ``gpu`` (catalog ids) in ``precision`` [FLOP/s].

    Dense, not NVIDIA's 2:4-sparsity figures: MFU is defined against the dense peak (PaLM, App. B).
    NaN where the datasheet gives no such figure. Broadcasts over arrays of ids and precisions.
    """
    table = accelerators()
    if np.ndim(gpu) == 0 and np.ndim(precision) == 0:  # the common case, without the array machinery
        gpu, precision = _item(gpu), _item(precision)
        if gpu in table.index and precision in PRECISIONS:
            return float(table.at[gpu, f"peak_{precision}_dense_tflops"] * 1e12)
    one_gpu, one_precision = _broadcast_scalar(gpu), _broadcast_scalar(precision)
    if one_gpu is not None and (one_precision is not None or np.ndim(precision) == 0):
        shape = np.broadcast_shapes(np.shape(gpu), np.shape(precision))
        return np.full(shape, peak_flops_per_s(one_gpu, _item(one_precision if one_precision is not None else precision)))
    gpu, precision = np.broadcast_arrays(np.asarray(gpu, dtype=object), np.asarray(precision, dtype=object))
    # factorize, not np.unique: an object array may mix types that cannot be sorted together
    gpu_codes, gpus = pd.factorize(gpu.ravel(), use_na_sentinel=False)
    precision_codes, precisions = pd.factorize(precision.ravel(), use_na_sentinel=False)
    for p in precisions:
        if p not in PRECISIONS:
            raise ValueError(f"unknown precision {p!r}; allowed: {', '.join(PRECISIONS)}")
    for g in gpus:
        if not isinstance(g, str) or g not in table.index:
            raise UnknownGpuError(f"{g!r} is not a catalog id (see `workbench gpus`; resolve_gpu() maps names)")
    peaks = np.array([[table.at[g, f"peak_{p}_dense_tflops"] * 1e12 for p in precisions] for g in gpus], dtype=float)
    out = peaks[gpu_codes, precision_codes].reshape(gpu.shape) if gpu.size else np.empty(gpu.shape)
    return out if out.ndim else float(out)


def map_ids(gpu, func, dtype=float):
    """``func`` applied once per distinct id in ``gpu`` (an array of catalog ids), broadcast back."""
    one = _broadcast_scalar(gpu)
    if one is not None:
        return np.full(np.shape(gpu), func(one), dtype=dtype)
    codes, uniques = pd.factorize(np.ravel(np.asarray(gpu, dtype=object)))
    values = np.array([func(u) for u in uniques], dtype=dtype)
    out = values[codes] if len(uniques) else np.empty(0, dtype=dtype)
    return out.reshape(np.shape(gpu)) if np.ndim(gpu) else out[0]


def _item(value):
    return value.item() if isinstance(value, np.ndarray) else value


def spec(gpu, column: str):
    """One catalog column (e.g. ``memory_gb``, ``tdp_w``, ``generation``) for ids ``gpu``; broadcasts.
    NaN for an id not in the catalog."""
    if column not in accelerators().columns:
        raise ValueError(f"unknown catalog column {column!r}; allowed: {', '.join(accelerators().columns)}")
    values = accelerators()[column]
    if np.ndim(gpu) == 0:
        return values.get(_item(gpu), np.nan)
    one = _broadcast_scalar(gpu)
    if one is not None:
        value = values.get(one, np.nan)
        return np.full(np.shape(gpu), value, dtype=object if isinstance(value, str) else float)
    # one look-up per distinct id (a batch holds a handful), broadcast back
    codes, uniques = pd.factorize(np.ravel(np.asarray(gpu, dtype=object)))
    return values.reindex(uniques).to_numpy()[codes].reshape(np.shape(gpu))
