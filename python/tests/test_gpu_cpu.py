"""The GPU engine against the CPU reference through Python, as the Rust tests compare them."""

import numpy as np
import pytest

import wgdem
from conftest import ASSETS, gpu_skipped, lattice_scene

pytestmark = pytest.mark.skipif(gpu_skipped(), reason="WGDEM_SKIP_GPU_TESTS=1")


def test_potyondys_27_balls_settle_alike_and_carry_their_weight():
    """Potyondy's 27 granite balls (assets/scenes/potyondy_27_balls.toml) on both engines.

    - After 300 steps, sphere by sphere, positions agree within 1e-9 m: the balls fall and
      meet the floor, and the only difference is f32 arithmetic on the GPU (forces within
      ≈1e-6 relative), which moves a ball by ≈1e-10 m over so few steps (tests/gpu_pour.rs).
    - Settled, the floor carries the balls' weight W = 27 ρ (4/3 π R³) g = 0.36752 N (the
      memo's 0.368 N) on both within 0.1 %: the dashpots have removed the motion, and f32
      forces summed over 27 balls err by far less.
    """
    scene = wgdem.Scene.from_toml(ASSETS / "scenes" / "potyondy_27_balls.toml")
    cpu = wgdem.Simulation(scene, backend="cpu")
    gpu = wgdem.Simulation(scene, backend="gpu")
    cpu.step(300)
    gpu.step(300)
    assert np.abs(gpu.positions() - cpu.positions()).max() < 1e-9
    cpu.run(until=scene.duration)
    gpu.run(until=scene.duration)
    weight = 27 * 2650.0 * 4.0 / 3.0 * np.pi * 0.005**3 * 9.81
    for sim in (cpu, gpu):
        floor = -sim.wall_forces()[0][2]
        assert floor == pytest.approx(weight, rel=1e-3), sim.backend


def test_velocities_handed_back_unchanged_leave_the_gpu_run_bit_for_bit():
    """Uploading velocities keeps each sphere's predicted-velocity increment: setting the
    velocities the engine already has changes no bit of the run that follows."""
    scene = wgdem.Scene.from_toml(lattice_scene(gravity=(0.0, 0.0, -9.81)))
    plain, steered = (wgdem.Simulation(scene, backend="gpu") for _ in range(2))
    for sim in (plain, steered):
        sim.step(100)
    steered.set_velocities(steered.velocities())
    steered.set_angular_velocities(steered.angular_velocities())
    for sim in (plain, steered):
        sim.step(400)
    assert np.array_equal(plain.positions(), steered.positions())
    assert np.array_equal(plain.velocities(), steered.velocities())


def test_an_unsteered_lattice_moves_alike_on_both():
    """The lattice under gravity for 500 steps on both engines, nothing set in between.

    The spheres settle by up to 8.5 µm. The GPU's forces are f32 (≈6e-8 relative), so the
    GPU's displacements may differ by about 6e-8 of 8.5 µm, 5e-13 m; its positions,
    velocities and radii are double-single, which keeps the rest of the state's rounding at
    f64's level. Measured: 7.8e-14 m. 1e-12 m holds that with room and is a thousandth of
    what f32 positions alone would lose at 0.018 m from the origin (1e-9 m), so a step that
    dropped the positions' low parts fails.
    """
    scene = wgdem.Scene.from_toml(lattice_scene(gravity=(0.0, 0.0, -9.81)))
    cpu, gpu = (wgdem.Simulation(scene, backend=b) for b in ("cpu", "gpu"))
    start = cpu.positions().copy()
    for sim in (cpu, gpu):
        sim.step(500)
    moved = np.abs(cpu.positions() - start).max()
    assert 5e-6 < moved < 2e-5, f"the lattice moved {moved} m, not the 8.5 µm the bound assumes"
    assert np.abs(gpu.positions() - cpu.positions()).max() < 1e-12


def test_steered_velocities_give_the_same_motion_on_both():
    """Velocities set from Python between batches (a quarter of the lattice's spheres kicked at
    up to 5 mm/s), then 400 steps in contact under gravity, on both engines.

    - Positions within 2e-8 m. Unsteered, the two lattices agree within 1e-12 m after 500
      steps (the test above; 7.8e-14 m measured). The kicks set
      spheres colliding and sliding, and at each contact that opens, closes, sticks or slips
      f32 and f64 part ways a little more: over kick seeds 1–8 the largest difference is 2.1e-10 to 8.0e-9 m
      (this test's seed 7 is the largest), so 2e-8 m holds them and would still catch a kick
      lost or applied twice (≥ 2e-5 m).
    - The same contacts, and contact and net forces within 1e-3 of the largest contact force
      (over the same seeds 3.3e-5 to 4.9e-4).
    """
    scene = wgdem.Scene.from_toml(lattice_scene(gravity=(0.0, 0.0, -9.81)))
    rng = np.random.default_rng(7)
    kick = np.zeros((100, 3))
    kick[::4] = rng.uniform(-0.005, 0.005, size=(25, 3))
    sims = [wgdem.Simulation(scene, backend=b) for b in ("cpu", "gpu")]
    for sim in sims:
        sim.step(100)
        sim.set_velocities(sim.velocities() + kick)
        sim.step(400)
    cpu, gpu = sims
    assert np.abs(gpu.positions() - cpu.positions()).max() < 2e-8
    cc, gc = cpu.contacts(), gpu.contacts()
    scale = np.linalg.norm(cc["normal_force"], axis=1).max()
    assert np.abs(gpu.forces() - cpu.forces()).max() < 1e-3 * scale
    assert len(cc["overlap"]) == len(gc["overlap"]) > 100
    order_c = np.lexsort((cc["particle"], cc["other"]))
    order_g = np.lexsort((gc["particle"], gc["other"]))
    assert np.array_equal(cc["other"][order_c], gc["other"][order_g])
    assert np.array_equal(cc["particle"][order_c], gc["particle"][order_g])
    fc, fg = cc["normal_force"][order_c], gc["normal_force"][order_g]
    assert np.abs(fc - fg).max() < 1e-3 * scale
    assert len(cpu.wall_contacts()["wall"]) == len(gpu.wall_contacts()["wall"]) > 0


def test_both_gpu_paths_give_the_same_bits_and_a_bad_path_is_refused():
    """``gpu_path="single-workgroup"`` (a batch's steps in one dispatch) and ``"general"`` (a
    dispatch per pass of each step) run the same arithmetic in the same order: Potyondy's 27
    balls falling onto the floor end in the same bits, wall forces included. An unknown path
    is a ConfigError naming the argument."""
    scene = wgdem.Scene.from_toml(ASSETS / "scenes" / "potyondy_27_balls.toml")
    general = wgdem.Simulation(scene, backend="gpu", gpu_path="general")
    single = wgdem.Simulation(scene, backend="gpu", gpu_path="single-workgroup")
    for sim in (general, single):
        sim.step(3000)
    assert np.array_equal(general.positions(), single.positions())
    assert np.array_equal(general.velocities(), single.velocities())
    assert np.array_equal(general.wall_forces(), single.wall_forces())
    with pytest.raises(wgdem.ConfigError, match="gpu_path"):
        wgdem.Simulation(scene, backend="gpu", gpu_path="fast")


def test_pairs_once_and_on_both_sides_give_the_same_bits_and_a_bad_choice_is_refused(tmp_path):
    """``pairs="once"`` (a pair evaluated by one of its spheres, the other's share handed over)
    and ``"both"`` (each side evaluates it) sum every force in the same order: the memo's 27
    granite balls with hill contacts (wide history slots) settle to the same bits, rows of
    ``timeseries.csv`` and wall forces included, through ``wgdem.run`` as through
    ``Simulation``. The choice took effect: evaluating once holds the per-slot table of the
    handed shares, so more GPU memory per sphere. An unknown choice is a ConfigError naming
    the argument, for ``Simulation`` and the jobs alike."""
    path = ASSETS / "scenes" / "potyondy_27_balls_hill.toml"
    scene = wgdem.Scene.from_toml(path)
    once = wgdem.Simulation(scene, backend="gpu", pairs="once")
    both = wgdem.Simulation(scene, backend="gpu", pairs="both")
    for sim in (once, both):
        sim.step(3000)
    assert np.array_equal(once.positions(), both.positions())
    assert np.array_equal(once.angular_velocities(), both.angular_velocities())
    assert np.array_equal(once.wall_forces(), both.wall_forces())
    short = {"simulation.duration": 0.04}
    memory = {}
    for pairs in ("once", "both"):
        summary, _ = wgdem.run(
            path, backend="gpu", pairs=pairs, out=tmp_path / pairs, progress=False, overrides=short
        )
        memory[pairs] = summary["gpu_bytes_per_particle"]
    series = [(tmp_path / pairs / "timeseries.csv").read_bytes() for pairs in ("once", "both")]
    assert series[0] == series[1]
    assert memory["once"] > memory["both"], memory
    with pytest.raises(wgdem.ConfigError, match="pairs"):
        wgdem.Simulation(scene, backend="gpu", pairs="twice")
    with pytest.raises(wgdem.ConfigError, match="pairs"):
        wgdem.run(path, backend="gpu", pairs="twice", progress=False)
