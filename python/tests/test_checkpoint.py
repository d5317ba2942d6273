"""Checkpoint and restore continue to the same bits; damaged files are refused."""

import numpy as np
import pytest

import wgdem
from conftest import BACKENDS, lattice_scene


def state(sim):
    return [sim.positions(), sim.velocities(), sim.angular_velocities(), sim.wall_positions()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_restored_simulation_continues_to_the_same_bits(backend, tmp_path):
    scene = wgdem.Scene.from_toml(lattice_scene(gravity=(0.0, 0.0, -9.81)))
    sim = wgdem.Simulation(scene, backend=backend)
    # Contacts with history, a moving wall and steered velocities before the checkpoint.
    sim.set_wall_velocity(5, np.array([0.0, 0.0, -0.02]))
    sim.step(400)
    sim.set_velocities(sim.velocities() * 0.5)
    path = tmp_path / "state.ckpt"
    sim.checkpoint(path)
    forces_at_checkpoint = sim.forces()
    sim.step(600)
    expected = state(sim)

    restored = wgdem.Simulation.restore(path)
    assert restored.backend == backend and restored.steps == 400
    assert np.array_equal(restored.forces(), forces_at_checkpoint)
    restored.step(600)
    assert restored.time == sim.time
    for a, b in zip(state(restored), expected):
        assert np.array_equal(a, b)
    assert np.array_equal(restored.forces(), sim.forces())


def test_a_damaged_or_foreign_file_is_refused(tmp_path):
    sim = wgdem.Simulation(wgdem.Scene.from_toml(lattice_scene()), backend="cpu")
    sim.step(10)
    path = tmp_path / "state.ckpt"
    sim.checkpoint(path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    damaged = tmp_path / "damaged.ckpt"
    damaged.write_bytes(bytes(data))
    with pytest.raises(wgdem.ConfigError, match="is damaged"):
        wgdem.Simulation.restore(damaged)
    other = tmp_path / "other.ckpt"
    other.write_text("not a checkpoint")
    with pytest.raises(wgdem.ConfigError, match="is not a wgdem checkpoint"):
        wgdem.Simulation.restore(other)
    with pytest.raises(wgdem.FileError):
        wgdem.Simulation.restore(tmp_path / "missing.ckpt")


def test_a_checkpoint_refuses_a_packing_edited_since(tmp_path):
    """A saved simulation of a packing-file scene restored after the packing was edited is a
    ConfigError naming the file (it resumed silently with other spheres): the input it holds
    records the packing's hash."""
    from conftest import header

    packing = tmp_path / "pk.csv"
    packing.write_text("x,y,z,radius\n0.01,0.01,0.003,0.002\n0.02,0.01,0.003,0.002\n")
    text = header(gravity=(0.0, 0.0, -9.81)) + (
        '[[particles]]\nkind = "file"\nmaterial = "grain"\n'
        f'path = "{packing.as_posix()}"\n'
        '[[walls]]\nkind = "plane"\nname = "floor"\nmaterial = "grain"\n'
        "point = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n"
    )
    sim = wgdem.Simulation(wgdem.Scene.from_toml(text), backend="cpu")
    sim.step(50)
    path = tmp_path / "state.ckpt"
    sim.checkpoint(path)
    assert wgdem.Simulation.restore(path).steps == 50
    packing.write_text("x,y,z,radius\n0.01,0.01,0.004,0.002\n0.02,0.01,0.003,0.002\n")
    with pytest.raises(wgdem.ConfigError, match="pk.csv has changed"):
        wgdem.Simulation.restore(path)
