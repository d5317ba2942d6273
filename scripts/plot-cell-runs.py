#!/usr/bin/env python3
"""Overlay the loading curves of several `wgdem cell` runs.

    python3 scripts/plot-cell-runs.py OUT.svg DIR=LABEL [DIR=LABEL ...]

Reads each DIR/cell.csv (its loading rows) and draws the stress ratio q/p and the volumetric
strain (negative: dilation) against the loading strain, in per cent, one line per run. Needs
matplotlib (`pip install "./python[plot]"`).
"""

import csv
import sys
from pathlib import Path


COLUMNS = ("stage", "loading_strain", "stress_ratio", "volumetric_strain")


def loading_rows(directory: Path) -> tuple[list[float], list[float], list[float]]:
    path = directory / "cell.csv"
    strain, ratio, volumetric = [], [], []
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                sys.exit(f"{path}: no column {', '.join(missing)}; is it the cell.csv of `wgdem cell`?")
            for line, row in enumerate(reader, start=2):
                if row["stage"] == "compaction":
                    continue
                try:
                    strain.append(100.0 * float(row["loading_strain"]))
                    ratio.append(float(row["stress_ratio"]))
                    volumetric.append(100.0 * float(row["volumetric_strain"]))
                except (TypeError, ValueError):
                    sys.exit(f"{path}, line {line}: a loading row without numbers in {', '.join(COLUMNS[1:])}")
    except OSError as e:
        sys.exit(f"{path}: cannot be read ({e.strerror}); give the output directory of a `wgdem cell` run")
    if not strain:
        sys.exit(f"{path}: no loading rows (did the run reach its loading?)")
    return strain, ratio, volumetric


def main() -> None:
    if len(sys.argv) < 3 or any("=" not in a for a in sys.argv[2:]):
        sys.exit(__doc__)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(6.4, 6.4))
    for arg in sys.argv[2:]:
        directory, label = arg.split("=", 1)
        strain, ratio, volumetric = loading_rows(Path(directory))
        top.plot(strain, ratio, label=label, linewidth=1.0)
        bottom.plot(strain, volumetric, label=label, linewidth=1.0)
    top.set_ylabel("stress ratio q/p")
    bottom.set_ylabel("volumetric strain (%)")
    bottom.set_xlabel("loading strain (%)")
    top.legend()
    for ax in (top, bottom):
        ax.grid(True, linewidth=0.3)
    fig.tight_layout()
    out = sys.argv[1]
    try:
        fig.savefig(out, metadata={"Date": None} if out.endswith(".svg") else None)
    except (OSError, ValueError) as e:
        sys.exit(f"{out}: cannot be written ({e}); name a writable file ending in .svg, .png or .pdf")


if __name__ == "__main__":
    main()
