"""A servo written in Python holds a plate at a normal stress (both engines)."""

import numpy as np
import pytest

import wgdem
from conftest import BACKENDS, R, SIDE, lattice_scene


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_python_servo_holds_its_stress(backend):
    """The law of the built-in servo (docs/shear.md): v = G (F − σA), G = α / (k T), with k
    the tangent stiffness of the 25 columns of 5 Hertz contacts in series at the target load.
    The stress must settle within 2 % of the target over the last third of the hold."""
    sim = wgdem.Simulation(wgdem.Scene.from_toml(lattice_scene(gravity=(0.0, 0.0, -9.81))), backend=backend)
    lid, target, interval, area = 5, 1e4, 20, SIDE * SIDE
    period = interval * sim.dt
    e_star = 5e7 / (2.0 * (1.0 - 0.25**2))
    column_force = target * area / 25
    overlap = (3.0 * column_force / (4.0 * e_star * np.sqrt(R / 2))) ** (2.0 / 3.0)
    k = 25 * (1.5 * column_force / overlap) / 5
    # α = 0.3, below the built-in servo's 0.5: this k counts all five contacts of a column as
    # sphere–sphere ones, under the stiffer sphere–plate one, and with α = 0.5 the plate rings.
    gain, v_max = 0.3 / (k * period), 0.02
    stresses = []
    while sim.time < 0.04:
        sim.step(interval)
        force = sim.wall_forces()[lid][2]
        v = np.clip(gain * (force - target * area), -v_max, v_max)
        sim.set_wall_velocity(lid, np.array([0.0, 0.0, v]))
        stresses.append(force / area)
    held = np.array(stresses[-len(stresses) // 3 :])
    assert abs(held.mean() / target - 1.0) < 0.02, held.mean()
    assert np.abs(held / target - 1.0).max() < 0.02, held


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_servo_helper_holds_its_stress_between_calls(backend):
    """sim.servo: the shear test's servo on the lid, its stiffness estimated as the shear test
    estimates it, held through later calls to step: the lid's stress settles within 2 % of
    the target over the last third of the hold; the box stress of the specimen (Love–Weber,
    compression positive) equals the lid's force over its area (the spheres' contact moments
    sum to the boundary's, their weight of 0.2 Pa aside), and a released lid stops."""
    sim = wgdem.Simulation(wgdem.Scene.from_toml(lattice_scene(gravity=(0.0, 0.0, -9.81))), backend=backend)
    area, target = SIDE * SIDE, 1e4
    sim.servo("lid", stress=target)
    stresses = []
    while sim.time < 0.04:
        sim.step(20)
        stresses.append(sim.wall_forces()[5][2] / area)
    held = np.array(stresses[-len(stresses) // 3 :])
    assert abs(held.mean() / target - 1.0) < 0.02, held.mean()
    assert np.abs(held / target - 1.0).max() < 0.02, held
    top = sim.wall_positions()[5][2]
    box = [[0, 0, 0], [SIDE, SIDE, top]]
    sigma = sim.stress(box)
    assert sigma.shape == (3, 3)
    # Love–Weber summed another way: Σ_p Σ_c f ⊗ (x_c − x_p) = Σ_walls f ⊗ x_c − Σ_p F_p ⊗ x_p
    # (pair contacts cancel in the first sum; F_p the net contact force on sphere p, which
    # the contacts' dashpots and the spheres' inertia keep from zero in a ringing lattice).
    walls, pairs = sim.wall_contacts(), sim.contacts()
    x = sim.positions()
    net = np.zeros_like(x)
    fw = walls["normal_force"] + walls["tangential_force"]
    np.add.at(net, walls["particle"], fw)
    fp = pairs["normal_force"] + pairs["tangential_force"]
    np.add.at(net, pairs["particle"], fp)
    np.add.at(net, pairs["other"], -fp)
    moment = np.einsum("ci,cj->ij", fw, walls["point"]) - np.einsum("pi,pj->ij", net, x)
    np.testing.assert_allclose(sigma, -moment / (area * top), rtol=1e-9, atol=1e-9 * target)
    # And the specimen's vertical stress is the lid's, to the ringing's 1.3 %.
    np.testing.assert_allclose(sigma[2, 2], target, rtol=0.03)
    sim.servo(5, stress=None)
    assert not sim.wall_velocities()[5].any()
    z = sim.wall_positions()[5][2]
    sim.step(100)
    assert sim.wall_positions()[5][2] == z


def test_servo_refusals_name_the_argument():
    sim = wgdem.Simulation(wgdem.Scene.from_toml(lattice_scene()), backend="cpu")
    with pytest.raises(wgdem.ConfigError, match='`area`: wall "floor" is an infinite plane'):
        sim.servo("floor", stress=1e4)
    with pytest.raises(wgdem.ConfigError, match="`stress`: -5 must be a positive"):
        sim.servo("lid", stress=-5.0)
    with pytest.raises(wgdem.ConfigError, match=r"`gain`: 2 is outside \(0, 1\]"):
        sim.servo("lid", stress=1e4, gain=2.0)
    with pytest.raises(wgdem.ConfigError, match="`interval`"):
        sim.servo("lid", stress=1e4, interval=0)
    with pytest.raises(wgdem.ConfigError, match="`box`"):
        sim.void_ratio([[0, 0, 0], [0, 1, 1]])


def test_void_ratio_of_a_box_around_the_lattice():
    """100 spheres of 2 mm inside a 20 × 20 × 16 mm box: e = V / V_s − 1 = 0.90986..., exactly
    (no sphere cut); half the box along z holds half the spheres: the same e."""
    sim = wgdem.Simulation(wgdem.Scene.from_toml(lattice_scene()), backend="cpu")
    height = 4 * 2 * R
    solid = 100 * 4.0 / 3.0 * np.pi * R**3
    e = sim.void_ratio([[0, 0, 0], [SIDE, SIDE, height]])
    assert abs(e - (SIDE * SIDE * height / solid - 1.0)) < 1e-12
    half = sim.void_ratio(np.array([[0, 0, 0], [SIDE, SIDE, height / 2]]))
    assert abs(half - e) < 1e-12
    assert sim.void_ratio([[1, 1, 1], [2, 2, 2]]) == np.inf
