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
