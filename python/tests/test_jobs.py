"""wgdem.shear and wgdem.contact: summaries and series as the command line writes them."""

import csv
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import wgdem
from conftest import ASSETS, gpu_skipped, wgdem_binary


def column(series, name):
    return np.asarray(series[name])


def test_a_contact_case_returns_its_summary_and_rows(tmp_path):
    case = ASSETS / "contact" / "kuhn_energy.toml"
    summary, series = wgdem.contact(case, out=tmp_path / "c")
    assert summary["backend"] == "cpu" and summary["steps"] == column(series, "step")[-1]
    # The series is contact.csv, column for column and value for value.
    with open(tmp_path / "c" / "contact.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(column(series, "step"))
    for name in ["normal_force_N", "dissipated_work_J", "overlap_m"]:
        written = np.array([float(r[name]) for r in rows])
        assert np.array_equal(written, column(series, name)), name
    assert list(column(series, "stage")) == [r["stage"] for r in rows]
    # Run again without overwrite=True: the results are kept and the call refused.
    with pytest.raises(wgdem.FileError, match="pass overwrite=True"):
        wgdem.contact(case, out=tmp_path / "c")


def test_a_quick_shear_test_returns_its_summary_and_series():
    preset = ASSETS / "shear" / "fleischmann_quick_true.toml"
    summary, series = wgdem.shear(preset, backend="cpu", progress=False)
    stage = column(series, "stage")
    assert list(dict.fromkeys(stage)) == ["preparation", "consolidation", "shear"]
    shear = stage == "shear"
    ratio = column(series, "stress_ratio")[shear]
    d = column(series, "shear_displacement_m")[shear]
    # The summary is computed from these rows (docs/shear.md): the residual ratio is the mean
    # over the last fifth of the displacement, the initial void ratio the last consolidation
    # row's (the packing the shear starts from),
    # the peak ratio the largest of a centred running mean over 5 rows (cut at the ends;
    # summed in the same order, so equal but for rounding), and φ_p = atan of it.
    assert summary["residual_stress_ratio"] == pytest.approx(ratio[d >= 0.8 * d[-1]].mean(), rel=1e-12)
    assert summary["initial_void_ratio"] == column(series, "void_ratio")[stage == "consolidation"][-1]
    values = ratio.tolist()
    smoothed = [
        sum(values[max(k - 2, 0) : k + 3]) / len(values[max(k - 2, 0) : k + 3])
        for k in range(len(values))
    ]
    assert summary["peak_stress_ratio"] == pytest.approx(max(smoothed), rel=1e-12)
    assert summary["peak_stress_ratio"] < ratio.max(), "a running mean, not the largest row"
    assert summary["peak_friction_angle_deg"] == pytest.approx(
        np.degrees(np.arctan(summary["peak_stress_ratio"])), rel=1e-12
    )
    # The servo held the normal stress (10 kPa) during shear within the 2 % that
    # tests/shear.rs holds the same preset to; and the summary's figure is the rows' largest.
    sigma = column(series, "normal_stress_Pa")[shear]
    target = summary["normal_stress_target_Pa"]
    error = np.abs(sigma - target).max() / target
    assert summary["normal_stress_error_max_fraction"] == pytest.approx(error, rel=1e-12)
    assert summary["normal_stress_error_max_fraction"] < 0.02


def test_a_bad_shear_configuration_is_a_config_error():
    text = (ASSETS / "shear" / "fleischmann_quick_true.toml").read_text()
    with pytest.raises(wgdem.ConfigError, match="consolidation.normal_stress"):
        wgdem.shear(text.replace("normal_stress = 1e4", "normal_stress = -1e4"), backend="cpu")


def test_a_specimen_with_particles_is_a_config_error(tmp_path):
    """`particles=` scales the box for that many spheres; a saved specimen brings its own."""
    specimen = tmp_path / "specimen.csv"
    specimen.write_text("x,y,z,radius\n0.0,0.0,0.003,0.0025\n")
    preset = ASSETS / "shear" / "fleischmann_quick_true.toml"
    with pytest.raises(wgdem.ConfigError, match="particles.*give one of them"):
        wgdem.shear(preset, backend="cpu", particles=600, specimen=specimen, out=tmp_path / "out")


def test_series_columns_keep_their_types_and_nans():
    """JSON has no NaN: a number column's nulls come back as NaN, whole numbers as int64."""
    series = wgdem._series('[{"step": 1, "x": null, "stage": "a"}, {"step": 2, "x": 1.5, "stage": "b"}]')
    step, x = column(series, "step"), column(series, "x")
    assert step.dtype == np.int64 and list(step) == [1, 2]
    assert x.dtype == np.float64 and np.isnan(x[0]) and x[1] == 1.5
    assert list(column(series, "stage")) == ["a", "b"]


@pytest.mark.skipif(gpu_skipped(), reason="WGDEM_SKIP_GPU_TESTS=1")
def test_the_gpu_job_writes_what_the_command_line_writes(tmp_path):
    """wgdem.shear on the GPU engine: scale_check.toml (a settled preparation, consolidation
    and shear cut short, 300 spheres, about 11 000 steps) gives the same shear.csv, byte for
    byte, as ``wgdem shear --backend gpu`` on the same device (the same engine, path and
    arithmetic), and its summary names the GPU engine, its adapter and the memory it held."""
    preset = ASSETS / "shear" / "scale_check.toml"
    summary, series = wgdem.shear(preset, backend="gpu", out=tmp_path / "py", progress=False)
    cli = subprocess.run(
        [wgdem_binary(), "shear", preset, "--backend", "gpu", "--out", tmp_path / "cli"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert cli.returncode == 0, cli.stderr
    written = (tmp_path / "py" / "shear.csv").read_bytes()
    assert written == (tmp_path / "cli" / "shear.csv").read_bytes()
    assert len(column(series, "step")) == len(written.splitlines()) - 1
    assert summary["backend"] == "gpu" and summary["adapter"]
    assert summary["gpu_bytes_per_particle"] > 0


def test_ctrl_c_stops_a_shear_test_between_rows_with_its_checkpoint(tmp_path):
    """Ctrl-C (SIGINT) during wgdem.shear raises KeyboardInterrupt between two rows: the
    output directory keeps whole rows and the checkpoint ``wgdem shear --resume`` continues
    from, and the call returns within a row's time, not at the end of the test."""
    out = tmp_path / "stopped"
    script = (
        "import signal, wgdem\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "try:\n"
        f"    wgdem.shear({str(ASSETS / 'shear' / 'fleischmann_quick_true.toml')!r},"
        f" backend='cpu', out={str(out)!r}, progress=False)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    # Interrupted once the first checkpoint (at the preparation's end, row 58: the
    # preset's run is shorter than `checkpoint_seconds`) is written.
    csv_path = out / "shear.csv"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (out / "checkpoint.bin").exists():
        time.sleep(0.05)
    assert child.poll() is None, "the test ended before it could be interrupted"
    child.send_signal(signal.SIGINT)
    sent = time.monotonic()
    stdout, stderr = child.communicate(timeout=60)
    assert "interrupted" in stdout, stderr
    # A row of the quick preset takes some 500 steps of 300 spheres: well under a second.
    assert time.monotonic() - sent < 5
    rows = csv_path.read_text().splitlines()
    header = rows[0].split(",")
    assert all(len(r.split(",")) == len(header) for r in rows[1:])
    assert 50 < len(rows) < 200, "the test ran on after Ctrl-C"
    assert (out / "checkpoint.bin").exists()
    # resume=True continues it from the checkpoint to its end (as `--resume`): the rows up to
    # the checkpoint are kept, the test ends sheared to its 3 mm.
    summary, series = wgdem.shear(
        ASSETS / "shear" / "fleischmann_quick_true.toml", backend="cpu", out=out, progress=False, resume=True
    )
    after = csv_path.read_text().splitlines()
    assert after[:51] == rows[:51] and len(after) > len(rows)
    assert column(series, "stage")[-1] == "shear"
    assert column(series, "shear_displacement_m")[-1] == pytest.approx(3e-3, rel=1e-6)
    assert summary["steps"] == int(after[-1].split(",")[header.index("step")])
