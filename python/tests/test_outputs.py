"""Output parity from Python: wgdem.run, Series, write_particles, write_vtk give the files of
``wgdem run``; progress=False is silent; gravity, damping and friction set between steps."""

import subprocess
import sys

import numpy as np
import pytest

import wgdem
from conftest import BACKENDS, header, lattice_scene, wgdem_binary

# The lattice settling in its box under gravity for 0.05 s, a row every 0.01 s.
SETTLING = lattice_scene(gravity=(0.0, 0.0, -9.81)).replace("duration = 0.1", "duration = 0.05")


def files(out):
    """Every file under `out` written by a run, by relative path, with its bytes (the lock,
    the manifest, the summary and the checkpoint hold the process and its timing)."""
    skip = {".wgdem.lock", "manifest.json", "summary.json", "checkpoint.bin"}
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name not in skip
    }


def test_run_job_writes_what_the_command_line_writes(tmp_path):
    """wgdem.run on the CPU reference writes the files of ``wgdem run --backend cpu``, byte
    for byte (timeseries, particle CSVs, ParaView series, input), and returns its rows with
    times on whole multiples of the output interval."""
    scene = tmp_path / "scene.toml"
    scene.write_text(SETTLING)
    summary, series = wgdem.run(scene, backend="cpu", out=tmp_path / "py", progress=False)
    cli = subprocess.run(
        [wgdem_binary(), "run", scene, "--backend", "cpu", "--out", tmp_path / "cli"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert cli.returncode == 0, cli.stderr
    py, cl = files(tmp_path / "py"), files(tmp_path / "cli")
    assert sorted(py) == sorted(cl)
    assert "vtk/run.pvd" in py and "particles/particles_000005.csv" in py
    for name in py:
        assert py[name] == cl[name], name
    assert summary["backend"] == "cpu" and summary["n_particles"] == 100
    times = series["time_s"]
    assert list(times) == [0.0, 0.01, 0.02, 0.03, 0.04, 0.05]
    assert series["step"].dtype == np.int64
    # The particle CSV carries the forces: on each sphere, its weight and contacts.
    table = np.genfromtxt(tmp_path / "py" / "particles" / "particles_000005.csv", delimiter=",", names=True)
    assert {"fx_N", "fz_N", "tz_N_m"} <= set(table.dtype.names)
    walls = sum(series[f"wall_{w}_fz_N"].iloc[-1] for w in ["floor", "lid"])
    weight = -9.81 * wgdem.Simulation(wgdem.Scene.from_toml(SETTLING), backend="cpu").masses().sum()
    assert abs(table["fz_N"].sum() - (weight - walls)) <= 1e-12


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_series_written_from_a_loop_is_the_run(tmp_path, backend):
    """A Python loop that steps to each output time and appends to a Series writes the
    rows, particle CSVs, snapshots and input of wgdem.run on the same engine, byte for byte
    (the engines' results do not depend on where a run's steps are split)."""
    scene = wgdem.Scene.from_toml(SETTLING)
    wgdem.run(scene, backend=backend, out=tmp_path / "run", progress=False)
    sim = wgdem.Simulation(scene, backend=backend)
    series = wgdem.Series(sim, tmp_path / "loop")
    series.append()
    for k in range(1, 6):
        sim.run(until=k * 0.01)
        series.append()
    assert len(series) == 6
    run, loop = files(tmp_path / "run"), files(tmp_path / "loop")
    assert sorted(run) == sorted(loop)
    for name in run:
        assert run[name] == loop[name], name
    with pytest.raises(wgdem.FileError, match="being written by another run"):
        wgdem.Series(sim, tmp_path / "loop")
    del series
    with pytest.raises(wgdem.FileError, match="already holds results"):
        wgdem.Series(sim, tmp_path / "loop")


def test_progress_false_is_silent():
    """progress=False writes nothing to stderr: no progress line and no INFO lines (the
    engine auto chose, the outputs); progress=True shows the engine's choice."""
    script = (
        "import wgdem\n"
        f"wgdem.run({SETTLING!r}, progress={{}})\n"
    )
    for progress, quiet in [(False, True), (True, False)]:
        child = subprocess.run(
            [sys.executable, "-c", script.format(progress)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert child.returncode == 0, child.stderr
        assert (child.stderr == "") == quiet, child.stderr
        if not quiet:
            assert "auto: " in child.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_write_particles_and_vtk_read_back(tmp_path, backend):
    """write_particles (CSV and LAMMPS dump) and write_vtk write the state, forces
    included, and wgdem reads each back as a packing with the same spheres."""
    sim = wgdem.Simulation(wgdem.Scene.from_toml(SETTLING), backend=backend)
    sim.step(300)
    sim.write_particles(tmp_path / "p.csv")
    sim.write_particles(tmp_path / "p.dump", format="lammps-dump")
    written = sim.write_vtk(tmp_path / "snap")
    assert [p.name for p in written] == ["particles.vtu", "contacts.vtu", "walls.vtu"]
    table = np.genfromtxt(tmp_path / "p.csv", delimiter=",", names=True)
    forces = sim.forces()
    np.testing.assert_array_equal(np.stack([table["fx_N"], table["fy_N"], table["fz_N"]], 1), forces)
    np.testing.assert_array_equal(np.stack([table["x_m"], table["y_m"], table["z_m"]], 1), sim.positions())
    dump = (tmp_path / "p.dump").read_text().splitlines()
    assert dump[0] == "ITEM: TIMESTEP" and dump[1] == "300" and dump[3] == "100"
    assert dump[8].split()[2:] == "id type x y z vx vy vz fx fy fz omegax omegay omegaz radius source_id".split()
    first = [float(x) for x in dump[9].split()]
    assert first[:2] == [1.0, 1.0]
    np.testing.assert_array_equal(first[8:11], forces[0])
    for packing in [tmp_path / "p.dump", tmp_path / "snap" / "particles.vtu", tmp_path / "p.csv"]:
        text = header() + f'[[particles]]\nkind = "file"\nmaterial = "grain"\npath = "{packing}"\n'
        again = wgdem.Simulation(wgdem.Scene.from_toml(text), backend="cpu")
        np.testing.assert_array_equal(again.positions(), sim.positions(), err_msg=str(packing))
        # A dump's atom ids (1…N) are kept as source ids, in every output; other files have none.
        ids = np.arange(1, 101) if packing.suffix == ".dump" else np.full(100, -1)
        np.testing.assert_array_equal(again.source_ids(), ids, err_msg=str(packing))
    assert np.all(sim.source_ids() == -1)
    again.write_particles(tmp_path / "again.csv")
    table = np.genfromtxt(tmp_path / "again.csv", delimiter=",", names=True)
    np.testing.assert_array_equal(table["source_id"], -1)
    from_dump = header() + f'[[particles]]\nkind = "file"\nmaterial = "grain"\npath = "{tmp_path / "p.dump"}"\n'
    wgdem.Simulation(wgdem.Scene.from_toml(from_dump), backend="cpu").write_particles(tmp_path / "ids.csv")
    table = np.genfromtxt(tmp_path / "ids.csv", delimiter=",", names=True)
    np.testing.assert_array_equal(table["source_id"], np.arange(1, 101))
    # A dump written from it carries them too (its own ids are 1…N, its source ids the file's).
    again = wgdem.Simulation(wgdem.Scene.from_toml(from_dump), backend="cpu")
    again.write_particles(tmp_path / "again.dump", format="lammps-dump")
    rows = [line.split() for line in (tmp_path / "again.dump").read_text().splitlines()[9:]]
    assert [int(r[-1]) for r in rows] == list(range(1, 101))


def test_kinetic_energy_is_both_parts():
    sim = wgdem.Simulation(wgdem.Scene.from_toml(SETTLING), backend="cpu")
    rng = np.random.default_rng(3)
    v, w = rng.normal(size=(100, 3)), rng.normal(size=(100, 3))
    sim.set_velocities(v)
    sim.set_angular_velocities(w.tolist())
    m, r = sim.masses(), sim.radii()
    translational, rotational = sim.kinetic_energy()
    np.testing.assert_allclose(translational, 0.5 * (m * (v**2).sum(1)).sum(), rtol=1e-14)
    np.testing.assert_allclose(rotational, 0.5 * (0.4 * m * r**2 * (w**2).sum(1)).sum(), rtol=1e-14)


# One sphere resting 1 µm into a floor, under gravity.
ON_FLOOR = header(gravity=(0.0, 0.0, -9.81)) + """
[[particles]]
kind = "explicit"
material = "grain"
spheres = [{ position = [0.0, 0.0, 0.001999], radius = 0.002 }]
[[walls]]
kind = "plane"
name = "floor"
material = "grain"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
"""


# One sphere far from anything, weightless.
FREE = header() + """
[[particles]]
kind = "explicit"
material = "grain"
spheres = [{ position = [0.0, 0.0, 1.0], radius = 0.002 }]
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_gravity_damping_and_friction_change_between_steps(backend):
    """Set between steps, on both engines: gravity (a free sphere then falls at g: v = g t),
    local damping (it then falls at (1 − α) g, Cundall's local damping of a force along the
    velocity), and friction (a sphere sliding on the floor keeps its speed with μ = 0, and
    loses μ g t of it with μ = 0.3 while it slides, Coulomb)."""
    free = wgdem.Simulation(wgdem.Scene.from_toml(FREE), backend=backend)
    free.gravity = (0, 0, -9.81)
    assert free.gravity.dtype == np.float64 and list(free.gravity) == [0.0, 0.0, -9.81]
    steps = 100
    free.step(steps)
    t = steps * free.dt
    # f32 on the GPU: 1e-6 of the speed.
    np.testing.assert_allclose(free.velocities()[:, 2], -9.81 * t, rtol=1e-6)
    free.local_damping = 0.5
    free.step(steps)
    np.testing.assert_allclose(free.velocities()[:, 2], -9.81 * (t + 0.5 * t), rtol=1e-6)
    free.local_damping = 0.0
    free.step(steps)
    np.testing.assert_allclose(free.velocities()[:, 2], -9.81 * (2.5 * t), rtol=1e-6)

    for mu in [0.0, 0.3]:
        sim = wgdem.Simulation(wgdem.Scene.from_toml(ON_FLOOR), backend=backend)
        sim.step(200)  # the sphere settles on the floor
        sim.set_velocities([[0.1, 0, 0]])
        sim.set_friction("grain", "grain", mu)
        assert sim.friction("grain", 0) == mu
        sim.run(until=sim.time + 0.005)
        lost = 0.1 - sim.velocities()[0, 0]
        if mu == 0.0:
            assert abs(lost) < 1e-6, lost
        else:
            # Sliding throughout (it would stop after 2/7 · 0.1 / (μ g) = 9.7 ms).
            np.testing.assert_allclose(lost, mu * 9.81 * 0.005, rtol=0.02)


@pytest.mark.parametrize("backend", BACKENDS)
def test_looking_before_the_first_step_changes_nothing(backend):
    """Reading the initial forces (or writing them) before the first step leaves the run's
    bits alone: the first step's dashpot predictor starts from no earlier force either way."""
    looked = wgdem.Simulation(wgdem.Scene.from_toml(SETTLING), backend=backend)
    assert looked.forces()[:, 2].min() < 0
    unseen = wgdem.Simulation(wgdem.Scene.from_toml(SETTLING), backend=backend)
    looked.step(500)
    unseen.step(500)
    assert np.array_equal(looked.positions(), unseen.positions())
    assert np.array_equal(looked.velocities(), unseen.velocities())
