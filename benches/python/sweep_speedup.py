"""The sweep's speed-up on this machine: a 2 × 2 grid of the quick Fleischmann preset
(300 spheres, μ ∈ {0.3, 0.5} × σn ∈ {10, 20} kPa, the CPU reference) run by wgdem.sweep on a
LocalCluster of one worker (the members one after the other) and of two, alternated, each into
a fresh directory; prints each round's wall time and the medians' ratio.

    python benches/python/sweep_speedup.py [--rounds 3] [--out DIR]
"""

import argparse
import shutil
import statistics
import time
from pathlib import Path

import wgdem

PRESET = Path(__file__).resolve().parents[2] / "assets" / "shear" / "fleischmann_quick_true.toml"
GRID = {"materials.quartz.friction": [0.3, 0.5], "consolidation.normal_stress": [1e4, 2e4]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="out/sweep_speedup")
    args = parser.parse_args()
    walls = {1: [], 2: []}
    for r in range(args.rounds):
        for workers in (1, 2):
            out = Path(args.out) / f"w{workers}"
            shutil.rmtree(out, ignore_errors=True)
            start = time.perf_counter()
            table = wgdem.sweep("shear", PRESET, grid=GRID, backend="cpu", out=out, workers=workers, progress=False)
            walls[workers].append(time.perf_counter() - start)
            assert (table["status"] == "done").all(), table[["status", "error"]]
            print(f"round {r + 1}, {workers} worker(s): {walls[workers][-1]:.1f} s", flush=True)
    one, two = statistics.median(walls[1]), statistics.median(walls[2])
    print(f"median: {one:.1f} s on one worker, {two:.1f} s on two: speed-up {one / two:.2f}×")


if __name__ == "__main__":
    main()
