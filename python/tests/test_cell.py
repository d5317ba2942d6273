"""The periodic cell from Python: its edges, volume, velocity gradient (set between steps, as
a servo written in Python would), stress and unwrapped positions."""

import numpy as np
import pytest

import wgdem
from conftest import header

SIDE = 0.012
# Twenty-seven spheres of 1 mm radius on a 4 mm lattice in a periodic 12 mm cube.
CELL_SCENE = header() + f"""
[[particles]]
kind = "lattice"
material = "grain"
radius = 0.001
origin = [0.002, 0.002, 0.002]
spacing = 0.004
counts = [3, 3, 3]
[cell]
edges = [[{SIDE}, 0.0, 0.0], [0.0, {SIDE}, 0.0], [0.0, 0.0, {SIDE}]]
"""


def test_a_compressed_cell_reports_its_edges_volume_and_stress():
    sim = wgdem.Simulation(wgdem.Scene.from_toml(CELL_SCENE))
    assert sim.backend == "cpu"
    np.testing.assert_array_equal(sim.cell_edges, np.eye(3) * SIDE)
    assert sim.cell_volume == pytest.approx(SIDE**3, rel=1e-15)
    np.testing.assert_array_equal(sim.velocity_gradient, np.zeros((3, 3)))
    # Compress isotropically at 5 /s until the spheres touch (a 4 mm spacing for 2 mm
    # diameters: a strain of 0.5) and beyond.
    rate = 5.0
    sim.velocity_gradient = -rate * np.eye(3)
    np.testing.assert_array_equal(sim.velocity_gradient, -rate * np.eye(3))
    sim.step(int(0.15 / sim.dt))
    edges = sim.cell_edges
    # H ← (I + L Δt) H each step.
    expected = SIDE * (1.0 - rate * sim.dt) ** sim.steps
    np.testing.assert_allclose(np.diag(edges), expected, rtol=1e-12)
    assert sim.cell_volume == pytest.approx(expected**3, rel=1e-12)
    assert expected / 3 < 0.002, "the spheres were not brought into contact"
    stress = sim.cell_stress()
    assert stress.shape == (3, 3)
    # Compression positive, and isotropic by symmetry.
    p = np.trace(stress) / 3.0
    assert p > 0.0
    np.testing.assert_allclose(np.diag(stress), p, rtol=1e-6)
    # The spheres stay in the cell; unwrapped positions have the shape of positions.
    x = sim.positions()
    assert np.all(x >= 0.0) and np.all(x < expected)
    assert sim.unwrapped_positions().shape == x.shape


def test_a_scene_without_a_cell_has_none_and_refuses_a_velocity_gradient():
    scene = header() + """
[[particles]]
kind = "explicit"
material = "grain"
spheres = [{ position = [0.01, 0.02, 0.03], radius = 0.002 }]
"""
    sim = wgdem.Simulation(wgdem.Scene.from_toml(scene), backend="cpu")
    assert sim.cell_edges is None and sim.cell_volume is None
    assert sim.velocity_gradient is None and sim.cell_stress() is None
    np.testing.assert_array_equal(sim.unwrapped_positions(), sim.positions())
    with pytest.raises(wgdem.ConfigError, match="no periodic cell"):
        sim.velocity_gradient = np.zeros((3, 3))


def test_bad_velocity_gradients_are_refused_naming_the_argument():
    sim = wgdem.Simulation(wgdem.Scene.from_toml(CELL_SCENE))
    for bad in [np.zeros((2, 3)), np.full((3, 3), np.nan), np.full((3, 3), np.inf)]:
        with pytest.raises(wgdem.ConfigError, match="velocity_gradient"):
            sim.velocity_gradient = bad
    np.testing.assert_array_equal(sim.velocity_gradient, np.zeros((3, 3)))


def test_the_gpu_engine_refuses_a_cell():
    with pytest.raises(wgdem.EngineError, match=r"\[cell\]"):
        wgdem.Simulation(wgdem.Scene.from_toml(CELL_SCENE), backend="gpu")
