"""The examples that run in CI as a user would run them (python/examples/): the long tier
(`@pytest.mark.long`, run by scripts/test.sh --long and --all, which CI runs); and
scripts/plot-cell-runs.py, which draws docs/cell.md's figure (default tier)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, cannot_run


@pytest.mark.long
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


@pytest.mark.long
def test_the_calibration_example_runs_as_written(tmp_path):
    """python/examples/calibrate.py cut to one round of two members of the quick Fleischmann
    preset (μ = 0.3 and 0.5 give φ_p 63.1° and 65.6° at 10 kPa) and a target between them (about
    40 s on two cores): it exits 0, the calibrated μ lies in the bracket, the check member is
    the last sweep's row, and it writes the plot."""
    try:
        import distributed  # noqa: F401
        import matplotlib  # noqa: F401
    except ImportError as e:
        cannot_run(f'{e.name} is not installed (pip install "./python[sweep,plot]")')
    args = ["--preset", "fleischmann_quick_true.toml", "--key", "materials.quartz.friction", "--target", "64.3"]
    args += ["--low", "0.3", "--high", "0.5", "--points", "2", "--rounds", "1", "--backend", "cpu", "--out", str(tmp_path)]
    run = subprocess.run(
        [sys.executable, REPO / "python" / "examples" / "calibrate.py", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    line = next(x for x in run.stdout.splitlines() if "gives φ_p" in x)
    mu = float(line.split("= ")[1].split(" ")[0])
    assert 0.3 < mu < 0.5, line
    import json

    import pandas

    # results.csv is the last sweep's: the check; index.json has every member.
    table = pandas.read_csv(tmp_path / "results.csv")
    assert list(table["status"]) == ["done"] and table["materials.quartz.friction"][0] == mu
    index = json.loads((tmp_path / "index.json").read_text())
    values = sorted(m["overrides"]["materials.quartz.friction"] for m in index.values())
    assert values == sorted([0.3, 0.5, mu])
    png = (tmp_path / "phi_p_vs_mu.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.long
def test_the_periodic_triaxial_example_runs_as_written(tmp_path):
    """python/examples/periodic_triaxial.py cut to 150 spheres and 1 % axial strain (about 80 s
    on one core): it exits 0 (the lateral stresses held within 2 % on average and 10 % at most
    after the first 0.2 %), writes its table with a deviator stress that rises from zero, and
    the plot."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        cannot_run('matplotlib is not installed (pip install "./python[plot]")')
    args = ["--spheres", "150", "--strain", "0.01", "--out", str(tmp_path)]
    run = subprocess.run(
        [sys.executable, REPO / "python" / "examples" / "periodic_triaxial.py", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    table = np.genfromtxt(tmp_path / "triaxial.csv", delimiter=",", names=True)
    assert table["axial_strain"][-1] == pytest.approx(0.01, rel=0.01)
    assert table["q_over_p"][0] < 0.1 < table["q_over_p"][-1]
    late = table["axial_strain"] > 0.002
    off = np.abs(table["stress_yy_Pa"][late] / 5e4 - 1)
    assert off.mean() < 0.02 and off.max() < 0.1, (off.mean(), off.max())
    png = (tmp_path / "triaxial.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_plot_cell_runs_overlays_the_loading_rows_and_refuses_a_run_without_them(tmp_path):
    """scripts/plot-cell-runs.py (docs/cell.md's figure of the stiff grains): an SVG with one
    line per run drawn from its loading rows only; a run that never reached its loading is
    refused naming its cell.csv, and a missing label prints the usage."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        cannot_run('matplotlib is not installed (pip install "./python[plot]")')
    script = REPO / "scripts" / "plot-cell-runs.py"
    header = "step,stage,loading_strain,stress_ratio,volumetric_strain\n"
    run = tmp_path / "run"
    run.mkdir()
    (run / "cell.csv").write_text(
        header + "10,compaction,0.0,5.0,0.0\n20,loading,0.001,0.8,0.0005\n30,loading,0.002,1.0,-0.001\n"
    )
    compacted = tmp_path / "compacted"
    compacted.mkdir()
    (compacted / "cell.csv").write_text(header + "10,compaction,0.0,0.1,0.0\n")
    spec = importlib.util.spec_from_file_location("plot_cell_runs", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # The compaction's row is left out; strains in per cent.
    assert module.loading_rows(run) == ([0.1, 0.2], [0.8, 1.0], [0.05, -0.1])
    out = tmp_path / "curves.svg"
    done = subprocess.run(
        [sys.executable, script, out, f"{run}=first run"], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    svg = out.read_text()
    assert "<svg" in svg and "first run" in svg
    refused = subprocess.run(
        [sys.executable, script, tmp_path / "x.svg", f"{compacted}=c"], capture_output=True, text=True, check=False
    )
    assert refused.returncode != 0 and "no loading rows" in refused.stderr and str(compacted) in refused.stderr
    assert not (tmp_path / "x.svg").exists()
    usage = subprocess.run([sys.executable, script, out, str(run)], capture_output=True, text=True, check=False)
    assert usage.returncode != 0 and "DIR=LABEL" in usage.stderr
    shear = tmp_path / "shear"
    shear.mkdir()
    (shear / "cell.csv").write_text("step,shear_displacement\n1,0.0\n")
    for directory, said in [(tmp_path / "absent", "cannot be read"), (shear, "no column stage")]:
        bad = subprocess.run(
            [sys.executable, script, tmp_path / "y.svg", f"{directory}=d"], capture_output=True, text=True, check=False
        )
        assert bad.returncode != 0 and said in bad.stderr and "Traceback" not in bad.stderr, bad.stderr
    nowhere = tmp_path / "no" / "such" / "dir.svg"
    unwritable = subprocess.run(
        [sys.executable, script, nowhere, f"{run}=r"], capture_output=True, text=True, check=False
    )
    assert unwritable.returncode != 0 and "cannot be written" in unwritable.stderr, unwritable.stderr
