"""The examples that run in CI as a user would run them (python/examples/)."""

import subprocess
import sys
from pathlib import Path

import numpy as np

from conftest import REPO, cannot_run


def test_the_oedometer_example_runs_as_written(tmp_path):
    """python/examples/oedometer.py on the CPU reference (about 25 s): it exits 0 (each stage's
    stress held within 2 % of its target, the void ratio falling under loading), writes its
    table, the files of `wgdem run` for its stages and the e–log σ_v plot."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        cannot_run('matplotlib is not installed (pip install "./python[plot]")')
    run = subprocess.run(
        [sys.executable, REPO / "python" / "examples" / "oedometer.py", "--backend", "cpu", "--out", tmp_path],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    table = np.genfromtxt(tmp_path / "oedometer.csv", delimiter=",", names=True)
    assert len(table) == 9
    assert np.all(np.abs(table["held_kPa"] / table["target_kPa"] - 1) < 0.02)
    # Unloading gives back only part of the compression: e at 10 kPa after 200 kPa is lower.
    assert table["void_ratio"][-1] < table["void_ratio"][0]
    png = (tmp_path / "e_log_sigma.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    rows = (tmp_path / "run" / "timeseries.csv").read_text().splitlines()
    assert len(rows) == 1 + 1 + 9
    assert Path(tmp_path / "run" / "vtk" / "run.pvd").exists()
