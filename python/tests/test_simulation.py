"""Stepping, the state arrays, the setters and the refusals of bad arguments (both engines)."""

import numpy as np
import pytest

import wgdem
from conftest import BACKENDS, header, lattice_scene

ONE_SPHERE = header() + """
[[particles]]
kind = "explicit"
material = "grain"
spheres = [{ position = [0.01, 0.02, 0.03], radius = 0.002 }]
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_state_arrays_have_documented_dtypes_and_shapes(backend):
    scene = wgdem.Scene.from_toml(lattice_scene(gravity=(0.0, 0.0, -9.81)))
    sim = wgdem.Simulation(scene, backend=backend)
    n = sim.n_particles
    assert n == 100 and sim.backend == backend and sim.steps == 0 and sim.time == 0.0
    for name in ["positions", "velocities", "angular_velocities", "forces", "torques"]:
        a = getattr(sim, name)()
        assert a.dtype == np.float64 and a.shape == (n, 3), name
    for name in ["radii", "masses"]:
        a = getattr(sim, name)()
        assert a.dtype == np.float64 and a.shape == (n,), name
    assert np.array_equal(sim.ids(), np.arange(n))
    assert sim.materials().dtype == np.int64
    np.testing.assert_allclose(sim.radii(), 0.002)
    # Before the first step the forces are those of the initial state: the weight.
    np.testing.assert_allclose(sim.forces()[:, 2], -9.81 * sim.masses(), rtol=1e-6)
    walls = sim.walls
    assert walls[-1] == "lid"
    for name in ["wall_positions", "wall_velocities", "wall_forces", "wall_torques"]:
        a = getattr(sim, name)()
        assert a.dtype == np.float64 and a.shape == (len(walls), 3), name


@pytest.mark.parametrize("backend", BACKENDS)
def test_arrays_are_copies_that_later_steps_do_not_change(backend):
    scene = wgdem.Scene.from_toml(lattice_scene(gravity=(0.0, 0.0, -9.81), lid_gap=0.01))
    sim = wgdem.Simulation(scene, backend=backend)
    sim.step(50)
    before = sim.positions()
    kept = before.copy()
    sim.step(50)
    after = sim.positions()
    # The array handed out before the step still holds the state it was taken from...
    assert np.array_equal(before, kept)
    # ...while the spheres moved (they fall).
    assert not np.array_equal(after, kept)
    # Writing into an array does not reach the engine.
    after[:] = 0.0
    assert not np.array_equal(sim.positions(), after)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_set_velocity_carries_a_free_sphere(backend):
    sim = wgdem.Simulation(wgdem.Scene.from_toml(ONE_SPHERE), backend=backend)
    v = np.array([[0.3, -0.2, 0.1]])
    sim.set_velocities(v)
    sim.set_angular_velocities(np.array([[0.0, 0.0, 5.0]]))
    sim.step(1000)
    x = sim.positions()[0]
    expected = np.array([0.01, 0.02, 0.03]) + v[0] * 1000 * sim.dt
    # The CPU integrates in f64; the GPU holds velocities in f32 (relative rounding 6e-8)
    # and positions in double-single, so 1e-7 of the 0.37 m/s × t path bounds both.
    travelled = np.linalg.norm(v) * 1000 * sim.dt
    assert np.abs(x - expected).max() <= 1e-7 * travelled
    np.testing.assert_allclose(sim.velocities()[0], v[0], rtol=1e-7)
    np.testing.assert_allclose(sim.angular_velocities()[0], [0.0, 0.0, 5.0], rtol=1e-7)
    assert sim.steps == 1000 and sim.time == pytest.approx(1000 * sim.dt, rel=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_steered_wall_moves_at_its_velocity(backend):
    sim = wgdem.Simulation(wgdem.Scene.from_toml(lattice_scene(lid_gap=0.01)), backend=backend)
    start = sim.wall_positions()[5]
    sim.set_wall_velocity(5, np.array([0.0, 0.0, -0.05]))
    sim.step(200)
    np.testing.assert_allclose(sim.wall_velocities()[5], [0.0, 0.0, -0.05], rtol=1e-7)
    moved = sim.wall_positions()[5] - start
    np.testing.assert_allclose(moved, [0.0, 0.0, -0.05 * 200 * sim.dt], rtol=1e-6, atol=1e-12)


def test_run_until_reaches_the_time():
    sim = wgdem.Simulation(wgdem.Scene.from_toml(ONE_SPHERE), backend="cpu")
    sim.run(until=1e-3)
    assert sim.time >= 1e-3 and sim.time - sim.dt < 1e-3


def test_bad_arguments_are_refused_with_the_argument_named():
    sim = wgdem.Simulation(wgdem.Scene.from_toml(lattice_scene()), backend="cpu")
    with pytest.raises(wgdem.ConfigError, match=r"`velocities`: has shape \[100, 2\]"):
        sim.set_velocities(np.zeros((100, 2)))
    with pytest.raises(TypeError):
        sim.set_velocities(np.zeros((100, 3), dtype=np.float32))
    bad = np.zeros((100, 3))
    bad[7, 1] = np.nan
    with pytest.raises(wgdem.ConfigError, match="row 7 is not finite"):
        sim.set_velocities(bad)
    with pytest.raises(wgdem.ConfigError, match="`n`: -1 is negative"):
        sim.step(-1)
    with pytest.raises(wgdem.ConfigError, match="`until`"):
        sim.run(until=-1.0)
    with pytest.raises(wgdem.ConfigError, match="`wall`: 9 is not a wall index; the scene has 6"):
        sim.set_wall_velocity(9, np.zeros(3))
    with pytest.raises(wgdem.ConfigError, match="`velocity`"):
        sim.set_wall_velocity(5, np.zeros(2))
    # Nothing was changed by the refused calls.
    assert not sim.velocities().any() and sim.steps == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_blow_up_raises_blow_up_error(backend):
    text = lattice_scene(gravity=(0.0, 0.0, -1e12))
    sim = wgdem.Simulation(wgdem.Scene.from_toml(text), backend=backend)
    with pytest.raises(wgdem.BlowUpError, match="blew up by step"):
        sim.step(2000)
    # The state it stopped at can still be read, for diagnosis.
    assert sim.positions().shape == (100, 3)
