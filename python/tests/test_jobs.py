"""wgdem.shear and wgdem.contact: summaries and series as the command line writes them."""

import csv

import numpy as np
import pytest

import wgdem
from conftest import ASSETS


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
