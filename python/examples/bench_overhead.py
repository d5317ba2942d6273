"""Stepping from Python against the command line on the `wgdem bench` specimen.

    python python/examples/bench_overhead.py [--particles 100000] [--steps 200] [--rounds 5]

Alternates `wgdem bench --particles N --steps S --json` (the engine alone, timed inside the
program) with `sim.step(S)` from Python on the same specimen, and prints the medians of
particle-steps per second and their ratio. Both time the same steps of the specimen from the
same state: a new simulation each round, the bench's warm-up (20 steps, a reorder of the
particles by cell, 20 steps), then S timed steps. Needs the release binary
(`cargo build --release -p wgdem`, or WGDEM_BIN).
"""

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

import wgdem

REPO = Path(__file__).resolve().parents[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--particles", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--adapter", default=None)
    args = parser.parse_args()
    binary = os.environ.get("WGDEM_BIN", str(REPO / "target" / "release" / "wgdem"))
    command = [binary, "bench", "--particles", str(args.particles), "--steps", str(args.steps), "--json"]
    if args.adapter:
        command += ["--adapter", args.adapter]

    scene = wgdem.Scene.bench_specimen(args.particles)
    n = scene.n_particles
    cli, python = [], []
    for _ in range(args.rounds):
        report = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
        cli.append(report["particle_steps_per_s"])
        sim = wgdem.Simulation(scene, adapter=args.adapter)
        sim.step(20)
        sim.reorder()
        sim.step(20)
        start = time.perf_counter()
        sim.step(args.steps)
        python.append(n * args.steps / (time.perf_counter() - start))
        print(f"  cli {cli[-1]:.4e}   python {python[-1]:.4e} particle-steps/s")
    print(f"{n} spheres on {sim.adapter}")
    c, p = statistics.median(cli), statistics.median(python)
    print(f"median: cli {c:.4e}, python sim.step({args.steps}) {p:.4e} particle-steps/s")
    print(f"python / cli = {p / c:.3f} (overhead {100 * (1 - p / c):+.1f} %)")


if __name__ == "__main__":
    main()
