"""``python -m wgdem sweep SWEEP.toml``: a sweep described by a file, for those who do not write
Python (``wgdem sweep SWEEP.toml`` starts this). docs/sweeps.md describes the file:

    job = "shear"                                   # "shear", "run" or "contact"
    config = "../assets/shear/he_quick_dense.toml"  # the base configuration
    backend = "cpu"                                 # "gpu" (default), "cpu" or "auto"
    out = "out/mu_sweep"                            # default: out/sweep
    repeats = 1                                     # seeds simulation.seed + 0, 1, …
    sets = "members.csv"                            # optional: a CSV, one column per key
    scheduler = "tcp://10.0.0.5:8786"               # optional: a running Dask scheduler
    workers = 2                                     # optional: this machine's worker count

    [options]                                       # optional: the job's own arguments
    specimen = "specimen_consolidated.csv"          # shear: a saved packing; also particles

    [grid]
    "materials.steel_ball.friction" = [0.1, 0.2, 0.3]

Paths in the file are relative to the file. Prints the table and exits with 1 where a member
failed (its error is in the table and in results.csv), 2 for a file or argument refused.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

# The summary values the printed table shows (results.csv has them all).
HEADLINE = {
    "shear": ["peak_friction_angle_deg", "residual_friction_angle_deg", "initial_void_ratio"],
    "run": ["steps", "n_particles"],
    "contact": [],
}
KEYS = {"job", "config", "backend", "out", "repeats", "sets", "scheduler", "workers", "grid", "options"}


def _load(path: Path) -> dict:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    from .errors import ConfigError, FileError

    try:
        text = path.read_text()
    except OSError as e:
        raise FileError(f"{path}: {e.strerror or e}") from e
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from e
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise ConfigError(f"{path}: `{unknown[0]}`: unknown key; a sweep file takes {', '.join(sorted(KEYS))}")
    for key in ("job", "config"):
        if key not in data:
            raise ConfigError(f"{path}: `{key}`: missing; e.g. job = \"shear\", config = \"assets/shear/he_quick_dense.toml\"")
    return data


def sweep_main(argv) -> int:
    parser = argparse.ArgumentParser(prog="wgdem sweep", description="Runs the sweep a file describes on Dask (docs/sweeps.md).")
    parser.add_argument("file", type=Path, help="the sweep file (TOML)")
    parser.add_argument("--scheduler", help="a running Dask scheduler's address (tcp://host:8786); default: the file's, else a cluster on this machine")
    parser.add_argument("--out", type=Path, help="the sweep's directory (default: the file's `out`, else out/sweep)")
    parser.add_argument("--workers", type=int, help="worker processes of this machine's cluster (default: one per GPU, or per core for the CPU reference)")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    args = parser.parse_args(argv)
    # Ctrl-C stops the sweep (KeyboardInterrupt), also where the shell that started it left
    # SIGINT ignored (a background job of a script).
    signal.signal(signal.SIGINT, signal.default_int_handler)

    from . import sweep
    from .errors import WgdemError

    try:
        spec = _load(args.file)
        here = args.file.resolve().parent
        sets = spec.get("sets")
        if sets is not None:
            import pandas

            sets = pandas.read_csv(here / sets)
        options = dict(spec.get("options", {}))
        if "specimen" in options:
            options["specimen"] = here / options["specimen"]
        if args.out is not None:
            out = args.out
        elif "out" in spec:
            out = here / spec["out"]
        else:
            out = Path("out/sweep")
        table = sweep(
            spec["job"],
            here / spec["config"],
            grid=spec.get("grid"),
            sets=sets,
            repeats=spec.get("repeats", 1),
            backend=spec.get("backend", "gpu"),
            out=out,
            client=args.scheduler or spec.get("scheduler"),
            workers=args.workers if args.workers is not None else spec.get("workers"),
            progress=not args.quiet,
            options=options,
        )
    except WgdemError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sweep stopped (Ctrl-C); run it again to continue", file=sys.stderr)
        return 130
    columns = list(table.columns)
    params = columns[1 : columns.index("repeat")]
    headline = [c for c in HEADLINE.get(spec["job"], []) if c in columns]
    shown = ["member", *params, "repeat", "status", "wall_s", *headline]
    print(table[shown].to_string(index=False))
    print(f"every summary value: {Path(out) / 'results.csv'}")
    failed = table[table["status"] != "done"]
    for _, row in failed.iterrows():
        print(f"{row['member']} failed: {row['error']}", file=sys.stderr)
    return 1 if len(failed) else 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "sweep":
        print("usage: python -m wgdem sweep SWEEP.toml [--scheduler ADDR] [--out DIR] [--workers N]", file=sys.stderr)
        return 2
    return sweep_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
