#!/usr/bin/env python3
"""Renders benchmark JSON as the Markdown tables of docs/benchmarks.md: one table per suite,
one row per job, every method measured for it in the same run, fastest first, each with its
median time and its ratio to the job's floor.

    python3 python/texturevlm/bench/markdown_tables.py tvlm_bench.json [python_bench_grad.json ...] > tables.md

Takes `tvlm bench --json` files (rows tagged by suite) and `python -m texturevlm.bench JOBS
--json` files (one suite per file, named by the file: py_grad.json -> "python grad")."""

from __future__ import annotations

import argparse
import json
import os
from collections import OrderedDict
from typing import Any, Dict, List

#: Rows that measure a reference, not a way of doing the job.
REFERENCE = "PyTorch's floor"


def _us(value: float) -> str:
    if value >= 1000:
        return f"{value / 1000:.2f} ms"
    return f"{value:.1f} us" if value < 100 else f"{value:.0f} us"


def _method(row: Dict[str, Any], best: bool) -> str:
    text = f"{row['method']}: {_us(row['median_us'])}"
    floor = row.get("floor_us")
    if floor:
        text += f" ({row['median_us'] / floor:.1f}x floor)"
    note = (row.get("note") or "").strip()
    if note:
        text += f" — {note}"
    return f"**{text}**" if best else text


def suite_table(rows: List[Dict[str, Any]]) -> List[str]:
    jobs: "OrderedDict[str, List[Dict[str, Any]]]" = OrderedDict()
    for row in rows:
        jobs.setdefault(row["job"], []).append(row)
    lines = ["| job | floor | methods, fastest first |", "|---|---|---|"]
    for job, measured in jobs.items():
        floors = [r["floor_us"] for r in measured if r.get("floor_us")]
        # The floor most of the job's methods share (a few rows measure a part against its own).
        floor = _us(max(set(floors), key=lambda f: (floors.count(f), f))) if floors else "-"
        # Reference rows (PyTorch's own floor for an eager step) are read against, not ranked:
        # they come last.
        ordered = sorted(measured, key=lambda r: (r["method"].startswith(REFERENCE), r["median_us"]))
        cells = "<br>".join(_method(r, i == 0) for i, r in enumerate(ordered))
        lines.append(f"| {job} | {floor} | {cells} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="tvlm bench --json or python -m texturevlm.bench --json output")
    args = parser.parse_args()
    for path in args.files:
        with open(path) as f:
            data = json.load(f)
        rows = data["rows"]
        if "gpu" in data:  # tvlm bench: rows tagged by suite
            print(f"Machine: {data['gpu']} ({data['driver']}), device copy {data['device_copy_tb_s']:.2f} TB/s.\n")
            suites: "OrderedDict[str, List[Dict[str, Any]]]" = OrderedDict()
            for row in rows:
                suites.setdefault(row["suite"] or "untagged", []).append(row)
        else:
            name = os.path.splitext(os.path.basename(path))[0].replace("py_", "")
            print(f"Machine: {data['device']}, device copy {data['copy_bandwidth'] / 1e12:.2f} TB/s.\n")
            suites = OrderedDict({f"python {name}": rows})
        for suite, suite_rows in suites.items():
            print(f"#### {suite}\n")
            print("\n".join(suite_table(suite_rows)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
