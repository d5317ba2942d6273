"""Stepping, the state arrays, the setters and the refusals of bad arguments (both engines)."""

from pathlib import Path

import numpy as np
import pytest

import wgdem
from conftest import ASSETS, BACKENDS, header, lattice_scene

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
    with pytest.raises((TypeError, ValueError)):
        sim.set_velocities([["fast", "slow", "still"]] * 100)
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
    with pytest.raises(wgdem.ConfigError, match='`wall`: "roof" is not a wall of the scene; its walls are "floor"'):
        sim.set_wall_velocity("roof", [0, 0, 0])
    with pytest.raises(wgdem.ConfigError, match="`local_damping`: 1.5 is outside"):
        sim.local_damping = 1.5
    with pytest.raises(wgdem.ConfigError, match="`gravity`"):
        sim.gravity = [0.0, float("inf"), 0.0]
    with pytest.raises(wgdem.ConfigError, match='`b`: "steel" is not a material of the scene; its materials are "grain"'):
        sim.set_friction("grain", "steel", 0.5)
    with pytest.raises(wgdem.ConfigError, match="`friction`: -0.1 must be"):
        sim.set_friction("grain", 0, -0.1)
    with pytest.raises(wgdem.ConfigError, match="`format`"):
        sim.write_particles("x.txt", format="xyz")
    with pytest.raises(wgdem.ConfigError, match="`velocity`"):
        sim.set_wall_velocity(5, np.zeros(2))
    # A negative index or count is a ConfigError too (it was an OverflowError).
    with pytest.raises(wgdem.ConfigError, match="`wall`: -1 is not a wall index"):
        sim.set_wall_velocity(-1, np.zeros(3))
    with pytest.raises(wgdem.ConfigError, match="`particles`: -5 is not a count"):
        wgdem.Scene.bench_specimen(-5)
    with pytest.raises(wgdem.ConfigError, match="`particles`: -600 is not a count"):
        wgdem.shear(ASSETS / "shear" / "fleischmann_quick_true.toml", backend="cpu", particles=-600)
    # Nothing was changed by the refused calls.
    assert not sim.velocities().any() and sim.steps == 0
    assert sim.local_damping == 0.0 and list(sim.gravity) == [0.0, 0.0, 0.0]
    assert sim.friction("grain", "grain") == 0.3 and not Path("x.txt").exists()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_blow_up_raises_blow_up_error(backend):
    # The largest gravity a scene may give and a speed bound of 1 m/s, passed within steps
    # (gravity far beyond it is refused up front: below).
    text = lattice_scene(gravity=(0.0, 0.0, -1e6)).replace(
        "output_interval = 0.01", "output_interval = 0.01\nmax_speed = 1.0"
    )
    sim = wgdem.Simulation(wgdem.Scene.from_toml(text), backend=backend)
    with pytest.raises(wgdem.BlowUpError, match="blew up by step") as raised:
        sim.step(2000)
    # The state it stopped at can still be read, for diagnosis, and the message names the
    # step it stands at (on the GPU, batches already queued ran past the one that showed it).
    assert sim.positions().shape == (100, 3)
    assert f"step {sim.steps}" in str(raised.value), (sim.steps, str(raised.value))


def test_absurd_gravity_is_refused_up_front():
    """Gravity near f64's range overflowed the CPU's blow-up bound, and the run went on with
    infinite energies and no BlowUpError; it is refused when the scene is built."""
    with pytest.raises(wgdem.ConfigError, match="simulation.gravity.*at most 1e6"):
        wgdem.Scene.from_toml(lattice_scene(gravity=(0.0, 0.0, -1e300)))


def test_a_second_thread_gets_an_engine_error_not_a_borrow_error():
    """While one thread steps (without the GIL), another's call on the same simulation raises
    EngineError at once (it was `RuntimeError: Already borrowed`); afterwards both work."""
    import threading
    import time

    sim = wgdem.Simulation(wgdem.Scene.from_toml(ONE_SPHERE), backend="cpu")
    started = threading.Event()
    failure = []

    def stepper():
        started.set()
        try:
            sim.step(3_000_000)
        except Exception as e:  # noqa: BLE001 - reported below
            failure.append(e)

    thread = threading.Thread(target=stepper)
    thread.start()
    started.wait()
    refused = None
    while thread.is_alive():
        try:
            sim.positions()
        except wgdem.EngineError as e:
            refused = e
            break
        time.sleep(0.01)
    thread.join()
    assert not failure, failure
    assert refused is not None, "the step ended before a second call could meet it"
    assert "another thread" in str(refused)
    assert sim.steps == 3_000_000 and sim.positions().shape == (1, 3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ctrl_c_stops_a_long_step_within_seconds(backend, tmp_path):
    """`sim.step(10**12)` on a tiny scene honours SIGINT within a few seconds (it ran on for
    minutes: a chunk was sized by particle-steps alone)."""
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "long.py"
    script.write_text(
        "import signal, sys, wgdem\n"
        # A shell that starts the suite in the background leaves SIGINT ignored, and Python
        # then installs no KeyboardInterrupt handler: install it.
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        f"scene = wgdem.Scene.from_toml({ONE_SPHERE!r})\n"
        f"sim = wgdem.Simulation(scene, backend={backend!r})\n"
        "sim.step(400)\n"
        "print('ready', flush=True)\n"
        "try:\n"
        "    sim.step(10**12)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted at', sim.steps, flush=True)\n"
        "    sys.exit(3)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        time.sleep(0.5)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        proc.kill()
    assert proc.returncode == 3, (out, err)
    assert "interrupted at" in out
    assert took < 5.0, f"Ctrl-C took {took:.1f} s"


@pytest.mark.parametrize("backend", BACKENDS)
def test_steps_split_into_calls_of_any_size_give_the_same_bits(backend):
    """Calls of 7 steps (parts of the GPU's 200-step batches, as a large scene's chunks are)
    end where one call of 1 001 steps does, bit for bit: the chunks Python cuts a step into
    to look for Ctrl-C do not change the results."""
    scene = wgdem.Scene.from_toml(lattice_scene(gravity=(0.0, 0.0, -9.81)))
    whole = wgdem.Simulation(scene, backend=backend)
    whole.step(1001)
    split = wgdem.Simulation(scene, backend=backend)
    for _ in range(143):
        split.step(7)
    assert split.steps == whole.steps == 1001
    for a, b in zip(
        [split.positions(), split.velocities(), split.angular_velocities()],
        [whole.positions(), whole.velocities(), whole.angular_velocities()],
    ):
        assert np.array_equal(a, b)


def test_auto_is_the_default_and_takes_one_of_the_engines():
    """``backend="auto"`` is the default: it takes one of the two engines (the CPU reference
    for this 100-sphere lattice on a software adapter such as lavapipe, the GPU engine on a
    hardware one; the rule is tested in tests/gpu_auto.rs), and the run is that engine's, bit
    for bit; an unknown backend names the three choices."""
    scene = wgdem.Scene.from_toml(lattice_scene(gravity=(0.0, 0.0, -9.81)))
    auto = wgdem.Simulation(scene)
    assert auto.backend in ("cpu", "gpu")
    chosen = wgdem.Simulation(scene, backend=auto.backend)
    for sim in (auto, chosen):
        sim.step(100)
    assert np.array_equal(auto.positions(), chosen.positions())
    with pytest.raises(wgdem.ConfigError, match='"auto", "gpu" or "cpu"'):
        wgdem.Simulation(scene, backend="fastest")
