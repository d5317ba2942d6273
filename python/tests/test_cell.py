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
    # H ← exp(L Δt) H each step (rounded at each of the ~30 000 steps: 1e-10).
    expected = SIDE * np.exp(-rate * sim.dt * sim.steps)
    np.testing.assert_allclose(np.diag(edges), expected, rtol=1e-10)
    assert sim.cell_volume == pytest.approx(expected**3, rel=1e-10)
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


def test_the_gpu_engine_runs_a_cell_as_the_cpu_reference_does():
    """The compression above on both engines: the same cell to the bit (the host advances it
    in f64 for the GPU engine too), and the same isotropic stress within 1e-5 (the GPU's
    forces are f32: 1e-7 of each; the lattice's symmetry keeps the spheres on it)."""
    rate = 5.0
    sims = {b: wgdem.Simulation(wgdem.Scene.from_toml(CELL_SCENE), backend=b)
            for b in ("cpu", "gpu")}
    for sim in sims.values():
        sim.velocity_gradient = -rate * np.eye(3)
        sim.step(int(0.15 / sim.dt))
    cpu, gpu = sims["cpu"], sims["gpu"]
    assert gpu.backend == "gpu" and gpu.steps == cpu.steps
    np.testing.assert_array_equal(gpu.cell_edges, cpu.cell_edges)
    stress = cpu.cell_stress()
    assert np.trace(stress) > 0.0
    np.testing.assert_allclose(gpu.cell_stress(), stress, rtol=0.0,
                               atol=1e-5 * np.abs(stress).max())
    np.testing.assert_allclose(gpu.unwrapped_positions(), cpu.unwrapped_positions(),
                               rtol=0.0, atol=1e-9)


def test_control_cell_on_the_gpu_engine_follows_the_cpu_reference():
    """The compressed lattice above brought to a tenth more mean stress by `control_cell`,
    the servo every 10 steps on both engines (the GPU engine's from the stress it sums on the
    device). The stresses agree within 1e-5 (the test above), so the velocity gradients, the
    servo's 0.5 /s times the error over its 5 % band, within 0.5 · 1e-5 / 0.05 = 1e-4 /s
    (1e-6 measured), and the edges within 1e-8 of their length (1.6e-9 measured); each
    engine's mean stress within 1 % of the target after 3 000 steps (0.2 % measured). The
    updates fall on the same steps however the steps are split between calls: the CPU
    reference stepped in three calls and in one gives the same bits."""
    rate = 5.0
    sims = {b: wgdem.Simulation(wgdem.Scene.from_toml(CELL_SCENE), backend=b.rstrip("1"))
            for b in ("cpu", "gpu", "cpu1")}
    target = None
    for sim in sims.values():
        sim.velocity_gradient = -rate * np.eye(3)
        sim.step(int(0.15 / sim.dt))
        target = target or 1.1 * np.trace(sim.cell_stress()) / 3.0
        sim.control_cell(stress=target * np.eye(3), max_rate=0.5, interval=10)
    cpu, gpu, at_once = sims["cpu"], sims["gpu"], sims.pop("cpu1")
    at_once.step(3000)
    for chunk in (7, 993, 2000):
        for sim in sims.values():
            sim.step(chunk)
        np.testing.assert_allclose(gpu.velocity_gradient, cpu.velocity_gradient, rtol=0.0,
                                   atol=1e-4)
    np.testing.assert_allclose(gpu.cell_edges, cpu.cell_edges, rtol=0.0,
                               atol=1e-8 * cpu.cell_edges[0, 0])
    np.testing.assert_array_equal(at_once.cell_edges, cpu.cell_edges)
    np.testing.assert_array_equal(at_once.positions(), cpu.positions())
    for sim in sims.values():
        p = np.trace(sim.cell_stress()) / 3.0
        assert abs(p / target - 1.0) < 0.01, p / target


def test_a_cell_servo_and_a_wall_servo_together_are_the_cpu_references():
    """On the GPU engine `control_cell` and a wall's `servo` refuse each other, whichever
    comes first, naming the CPU reference; released, the other is taken."""
    scene = CELL_SCENE + """
[[walls]]
kind = "plane"
name = "floor"
material = "grain"
point = [0.0, 0.0, 0.0005]
normal = [0.0, 0.0, 1.0]
"""
    sim = wgdem.Simulation(wgdem.Scene.from_toml(scene), backend="gpu")
    sim.servo("floor", stress=1e3, area=SIDE**2)
    with pytest.raises(wgdem.ConfigError, match='backend="cpu"'):
        sim.control_cell(stress=np.eye(3) * 1e3, interval=10)
    sim.servo("floor", stress=None)
    sim.control_cell(stress=np.eye(3) * 1e3, interval=10)
    with pytest.raises(wgdem.ConfigError, match='backend="cpu"'):
        sim.servo("floor", stress=1e3, area=SIDE**2)
    sim.step(20)
    assert sim.steps == 20


def gas_scene(seed=9):
    """64 spheres of radius 2–2.8 mm on a 6 mm lattice in a periodic 24 mm cube, μ = 0.3,
    Cundall's damping 0.7 (the gas of tests/cell.rs's servo check)."""
    rng = np.random.default_rng(seed)
    spheres = []
    for k in range(64):
        g = np.array([k % 4, k // 4 % 4, k // 16]) + 0.5
        x = g * 0.006
        r = 0.002 + 0.0008 * rng.random()
        spheres.append(f"{{ position = [{x[0]}, {x[1]}, {x[2]}], radius = {r} }}")
    return header().replace("gravity", "local_damping = 0.7\ngravity") + f"""
[[particles]]
kind = "explicit"
material = "grain"
spheres = [{", ".join(spheres)}]
[cell]
edges = [[0.024, 0.0, 0.0], [0.0, 0.024, 0.0], [0.0, 0.0, 0.024]]
"""


def test_control_cell_compacts_then_holds_the_lateral_stress_of_a_triaxial_test():
    nan = np.nan
    p0 = 5e3
    sim = wgdem.Simulation(wgdem.Scene.from_toml(gas_scene()))
    # Isotropic compaction: every normal stress at p0, every shear stress (upper) at zero.
    held = np.array([[p0, 0.0, 0.0], [nan, p0, 0.0], [nan, nan, p0]])
    sim.control_cell(stress=held, max_rate=0.5)
    sim.step(150_000)
    s = sim.cell_stress()
    np.testing.assert_allclose(np.diag(s), p0, rtol=1e-6)
    # Drained triaxial compression along x at 0.05 /s, σ_yy = σ_zz = p0 held.
    held[0, 0] = nan
    rate = np.zeros((3, 3))
    rate[0, 0] = -0.05
    sim.control_cell(rate=rate, stress=held, max_rate=0.5)
    a0 = sim.cell_edges[0, 0]
    lateral, ratios = [], []
    for _ in range(20):
        sim.step(2_000)
        assert sim.velocity_gradient[0, 0] == -0.05 and sim.velocity_gradient[1, 0] == 0.0
        s = sim.cell_stress()
        lateral.append([s[1, 1] / p0 - 1.0, s[2, 2] / p0 - 1.0])
        p = np.trace(s) / 3.0
        ratios.append((s[0, 0] - 0.5 * (s[1, 1] + s[2, 2])) / p)
    # The axial edge shortened at the prescribed rate (H ← exp(L Δt) H).
    expected = a0 * np.exp(-0.05 * sim.dt * 40_000)
    assert sim.cell_edges[0, 0] == pytest.approx(expected, rel=1e-10)
    # The lateral stresses held within 1 % (the servo lags by rate / max_rate of its 5 % band
    # while the specimen dilates: 0.5 %), while the specimen took a deviator stress (q/p 0.19
    # at 1.7 % axial strain on this seed, rising).
    assert np.max(np.abs(lateral)) < 0.01, np.max(np.abs(lateral))
    assert ratios[-1] > 0.1 and ratios[-1] > ratios[0], ratios
    sim.control_cell()
    np.testing.assert_array_equal(sim.velocity_gradient, np.zeros((3, 3)))


def test_control_cell_refuses_what_cannot_control():
    sim = wgdem.Simulation(wgdem.Scene.from_toml(CELL_SCENE))
    nan = np.nan
    for kwargs, field in [
        (dict(rate=np.zeros((2, 3))), "rate"),
        (dict(rate=np.full((3, 3), np.inf)), "rate"),
        (dict(stress=np.full((3, 3), np.inf)), "stress"),
        (dict(stress=np.full((3, 3), nan), max_rate=0.0), "max_rate"),
        (dict(stress=np.full((3, 3), 1e4), band=nan), "band"),
        (dict(stress=np.full((3, 3), 1e4), reference=-1.0), "reference"),
        (dict(stress=np.full((3, 3), 1e4), interval=0), "interval"),
        (dict(stress=np.full((3, 3), 1e4), interval=-10), "interval"),
    ]:
        with pytest.raises(wgdem.ConfigError, match=field):
            sim.control_cell(**kwargs)
    plain = wgdem.Simulation(
        wgdem.Scene.from_toml(header() + """
[[particles]]
kind = "explicit"
material = "grain"
spheres = [{ position = [0.01, 0.02, 0.03], radius = 0.002 }]
"""),
        backend="cpu",
    )
    with pytest.raises(wgdem.ConfigError, match="no periodic cell"):
        plain.control_cell(rate=np.zeros((3, 3)))


def test_a_deforming_cell_checkpoints_and_restores_to_the_same_bits(tmp_path):
    sim = wgdem.Simulation(wgdem.Scene.from_toml(gas_scene(seed=4)))
    shear = np.zeros((3, 3))
    shear[0, 2] = 2.0
    sim.velocity_gradient = -1.0 * np.eye(3) + shear
    sim.step(20_000)
    path = tmp_path / "cell.ckpt"
    sim.checkpoint(path)
    again = wgdem.Simulation.restore(path)
    np.testing.assert_array_equal(again.cell_edges, sim.cell_edges)
    np.testing.assert_array_equal(again.velocity_gradient, sim.velocity_gradient)
    for s in (sim, again):
        s.step(5_000)
    assert sim.cell_stress()[0, 0] > 0.0, "no contacts: the check tests little"
    for name in ["positions", "velocities", "unwrapped_positions", "cell_stress"]:
        np.testing.assert_array_equal(getattr(again, name)(), getattr(sim, name)(), err_msg=name)
    np.testing.assert_array_equal(again.cell_edges, sim.cell_edges)


# The quick preset shortened as tests/cell_protocol.rs does (64 spheres, 0.2 % strain).
SHORT = {
    "specimen.count": 64,
    "specimen.solid_fraction": 0.12,
    "compaction.gas_rate": 3.0,
    "compaction.tolerance": 0.02,
    "compaction.settle_rows": 3,
    "loading.strain": 0.002,
    "loading.strain_rate": 0.05,
    "simulation.output_interval": 0.005,
    "simulation.safety_factor": 0.1,
}


def test_wgdem_cell_runs_a_constant_p_test_and_refuses_bad_input(tmp_path):
    from conftest import ASSETS

    preset = ASSETS / "cell" / "quick_triaxial.toml"
    summary, rows = wgdem.cell(
        preset, out=tmp_path / "cell", progress=False,
        overrides={**SHORT, "loading.path": "constant_p"},
    )
    assert summary["path"] == "constant_p"
    assert summary["n_particles"] == 64
    loading = np.asarray(rows["stage"]) != "compaction"
    strain = np.asarray(rows["loading_strain"])[loading]
    assert strain[-1] == pytest.approx(0.002, abs=1e-4)
    # Constant p: the mean stress held within 1 % of p0 while the axial stress rises.
    assert np.all(np.abs(np.asarray(rows["p_Pa"])[loading] / 5e4 - 1) < 0.01)
    assert np.asarray(rows["stress_xx_Pa"])[loading][-1] > 1.05 * 5e4
    assert (tmp_path / "cell" / "cell.csv").is_file()
    assert (tmp_path / "cell" / "vtk" / "cell.pvd").is_file()
    # The compacted specimen starts another test (it records its cell): drained this time.
    again, _ = wgdem.cell(
        preset, progress=False, specimen=tmp_path / "cell" / "specimen_compacted.csv",
        overrides=SHORT,
    )
    assert again["path"] == "drained_triaxial"
    assert again["compaction_steps"] < summary["compaction_steps"] / 3
    # A finished test's directory is not overwritten by accident; a bad key names itself.
    with pytest.raises(wgdem.FileError, match="overwrite"):
        wgdem.cell(preset, out=tmp_path / "cell", progress=False, overrides=SHORT)
    with pytest.raises(wgdem.ConfigError, match="loading.strain_rate"):
        wgdem.cell(preset, progress=False, overrides={**SHORT, "loading.strain_rate": 0.0})
