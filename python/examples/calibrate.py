"""Calibration by sweeps that narrow in: the inter-particle friction μ that gives a target peak
friction angle φ_p in a direct shear test, e.g. He et al. (2020)'s 41.7° for their dense
specimen of steel spheres at μ = 0.2 and σn = 100 kPa.

    python python/examples/calibrate.py [--target 41.7] [--low 0.05] [--high 0.3]
        [--rounds 2] [--points 4] [--backend cpu|gpu] [--out DIR] [--scheduler tcp://…]

Round 1 shears the preset at `points` values of μ spread over [low, high] (one wgdem.sweep:
its members run side by side on this machine's cores or GPUs, or on the cluster --scheduler
names); each further round spreads `points` values inside the bracket where φ_p crosses the
target. Then a straight line fitted (numpy.polyfit) to every member of the last bracket
narrowed into, a surrogate of φ_p(μ) there, gives μ*, and one last member checks it. φ_p is a noisy function of
μ (a specimen's peak depends on its few strongest chains), so the line, not the nearest
member, is the estimate, and the check says how far the specimen's own scatter leaves it.

Every member is kept under DIR (a directory per member, index.json, results.csv): run again,
the script takes the finished members as they are and runs only what is new. Prints the table
and writes DIR/phi_p_vs_mu.png (with matplotlib). `--key` calibrates another value instead
(e.g. `materials.steel_ball.rolling_friction` with `--preset he_quick_dense_rolling.toml`).

The default preset is `assets/shear/he_quick_dense.toml`: 830 spheres ten diameters across,
about 3 min a member on one core of the CPU reference (two at a time on two cores: the whole
calibration, ten members, in about 20 min); docs/sweeps.md gives the figures of a run.
"""

import argparse
from pathlib import Path

import numpy as np

import wgdem

SHEAR = Path(__file__).resolve().parents[2] / "assets" / "shear"


def bracket(table, key, target):
    """The neighbouring values of `key` between which φ_p − target changes sign (sorted by
    the value), or None where every member is on one side."""
    done = table[table["status"] == "done"].sort_values(key)
    values, phi = done[key].to_numpy(), done["peak_friction_angle_deg"].to_numpy()
    for k in range(len(values) - 1):
        if (phi[k] - target) * (phi[k + 1] - target) <= 0:
            return values[k], values[k + 1]
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="he_quick_dense.toml", help="a file of assets/shear, or a path")
    parser.add_argument("--key", default="materials.steel_ball.friction")
    parser.add_argument("--target", type=float, default=41.7, help="target peak friction angle (°)")
    parser.add_argument("--low", type=float, default=0.05)
    parser.add_argument("--high", type=float, default=0.3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--points", type=int, default=4, help="members per round")
    parser.add_argument("--backend", default="cpu", choices=["cpu", "gpu", "auto"])
    parser.add_argument("--out", default="out/calibrate")
    parser.add_argument("--scheduler", help="a running Dask scheduler (default: a cluster on this machine)")
    args = parser.parse_args()
    preset = SHEAR / args.preset if (SHEAR / args.preset).is_file() else Path(args.preset)
    key, target = args.key, args.target

    def shear(values):
        values = [round(float(v), 4) for v in values]
        return wgdem.sweep("shear", preset, grid={key: values}, backend=args.backend, out=args.out, client=args.scheduler)

    low, high = args.low, args.high
    table = shear(np.linspace(low, high, args.points))
    narrowed = False
    for _ in range(2, args.rounds + 1):
        found = bracket(table, key, target)
        if found is None:
            break
        low, high = found
        narrowed = True
        # `points` values strictly inside the bracket (its ends are members already).
        table = combined([table, shear(np.linspace(low, high, args.points + 2)[1:-1])], key)
    found = bracket(table, key, target)
    if found is None:
        done = table[table["status"] == "done"]
        side = "above" if (done["peak_friction_angle_deg"] > target).all() else "below"
        print(table_text(table, key))
        print(f"every member's φ_p is {side} {target}°: widen --low/--high")
        return
    if not narrowed:
        low, high = found
    # The line through every member of the last bracket narrowed into (its ends included).
    inside = table[(table[key] >= low) & (table[key] <= high) & (table["status"] == "done")]
    slope, intercept = np.polyfit(inside[key], inside["peak_friction_angle_deg"], 1)
    estimate = round((target - intercept) / slope, 4) if slope != 0 else round((low + high) / 2, 4)
    check = shear([estimate])
    table = combined([table, check], key)
    phi = float(check["peak_friction_angle_deg"].iloc[0])
    print(table_text(table, key))
    print(
        f"{key} = {estimate} gives φ_p = {phi:.2f}° against the target {target}° "
        f"(line through {len(inside)} members on [{low}, {high}]: φ_p = {slope:.1f}·μ + {intercept:.2f})"
    )
    plot(table, key, target, estimate, phi, Path(args.out))


def combined(tables, key):
    """The members of every round, once each, sorted by the value."""
    import pandas

    return pandas.concat(tables).drop_duplicates("member").sort_values(key).reset_index(drop=True)


def table_text(table, key):
    columns = [key, "peak_friction_angle_deg", "residual_friction_angle_deg", "initial_void_ratio", "status", "wall_s", "reused"]
    return table[columns].to_string(index=False, float_format=lambda v: f"{v:.4g}")


def plot(table, key, target, estimate, phi, out):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return
    done = table[table["status"] == "done"]
    fig, ax = plt.subplots(figsize=(4.8, 3.6))
    ax.plot(done[key], done["peak_friction_angle_deg"], "o", label="members")
    ax.axhline(target, color="grey", linestyle="--", label=f"target {target}°")
    ax.plot([estimate], [phi], "s", color="C3", label=f"calibrated: {estimate}")
    ax.set_xlabel(key)
    ax.set_ylabel("peak friction angle φ_p (°)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "phi_p_vs_mu.png", dpi=150)
    print(f"plot: {out / 'phi_p_vs_mu.png'}")


if __name__ == "__main__":
    main()
