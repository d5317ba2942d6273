"""A drained or constant-p triaxial compression in a periodic cell, written in Python: no walls,
so the response is the material's, free of a box's boundary effects.

    python python/examples/periodic_triaxial.py [--spheres N] [--path drained|constant-p]
        [--strain EPS] [--out DIR]

1. `--spheres` polydisperse spheres (diameters 1.6–2.4 mm, quartz-like, Hertz contacts) are
   placed at random in a periodic cube at a solid fraction of 0.2 and compacted
   isotropically by `sim.control_cell` to p₀ = 50 kPa with the friction off (a dense
   packing), Cundall's local damping 0.7 taking out the kinetic energy (as in PFC's
   quasi-static tests, it stays on); the friction is then set to μ = 0.5 and the packing
   held at p₀ again.
2. Triaxial compression along x at 0.02 /s to `--strain` axial strain, σ_yy = σ_zz held at p₀
   (drained) or, for `constant-p`, at (3 p₀ − σ_xx)/2 each, updated every 100 steps, so that
   p stays at p₀ (Kuhn, Suzuki & Daouadji's path); every shear stress held at zero.
3. Writes DIR/triaxial.csv (axial and volumetric strain, p, q, q/p, σ_yy, σ_zz, void ratio,
   contacts per sphere) and, with matplotlib, DIR/triaxial.png (q/p and the volumetric strain
   against the axial strain); prints the peak q/p, the friction angle
   φ = asin(3η/(6 + η)) of a triaxial compression at η = q/p, and the strain at the peak.
   Exits 1 if, after the first 0.2 % of strain, a held stress strays more than 10 % from its
   target or by more than 2 % on average (a few hundred spheres slip in events that move it
   by a few percent; the servo's lag is 5 % × the lateral strain rate / max_rate).

The periodic cell runs on the CPU reference. With the defaults (300 spheres, 3 % strain) it
takes about five minutes on one core, and stops before the peak of this dense packing (q/p
1.22 and still rising, the volume just turning to dilate); `--strain 0.1` follows it to the
critical state in proportion longer (python/tests/test_examples.py runs a smaller one in CI).
Strain is logarithmic (ε = ln(H/H₀) along x, ε_v = ln(V/V₀)), compression positive, as are
the stresses.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

import wgdem

P0 = 5e4  # Pa, the confining stress
RATE = 0.02  # 1/s, the axial strain rate
# 1/s, the servo's largest rate near p₀: the stress answers a strain of the cell after a wave
# has crossed it (about 10⁻⁴ s here), so the servo's gain, max_rate / (band p₀) times the
# packing's modulus, must close only a small part of the error in that time (at 0.2 /s the
# lateral stresses of the 300-sphere default swung by 30 %). The servo then lags by its band
# times the lateral strain rate over max_rate, which the slow axial rate keeps small.
MAX_RATE = 0.1
NAN = np.nan


def scene(spheres, side):
    """The spheres at random in a periodic cube of edge `side` (m)."""
    # Spheres are placed inside the region whole: a margin of a diameter keeps them apart
    # through the faces too.
    inner = side - 0.0024
    return f"""
[simulation]
duration = 1.0
output_interval = 0.01
gravity = [0.0, 0.0, 0.0]
seed = 5
local_damping = 0.7
# A twentieth of the critical step estimate (one contact at 1 % overlap): this dense, loaded
# packing (7.4 contacts per sphere, overlaps of a few percent) has rotational modes that a
# fifth of it left unstable once friction was switched on, and a tenth slowly so (the
# packing then collapsed to 6 contacts per sphere early in the compression).
safety_factor = 0.05

[contact]
law = "hertz"
history = "true"

[[materials]]
name = "quartz"
density = 2650.0
friction = 0.0
young_modulus = 5e7
poisson_ratio = 0.25
restitution = 0.3

[[particles]]
kind = "random"
material = "quartz"
count = {spheres}
region = {{ min = [0.0, 0.0, 0.0], max = [{inner}, {inner}, {inner}] }}
size = {{ distribution = "uniform", min_diameter = 0.0016, max_diameter = 0.0024 }}

[cell]
edges = [[{side}, 0.0, 0.0], [0.0, {side}, 0.0], [0.0, 0.0, {side}]]
"""


def held(stress_xx):
    """The stress targets of a path: `stress_xx` along x (NaN: strain-driven), p₀ across,
    zero shear stress (upper components; the lower ones stay at zero rate)."""
    return np.array([[stress_xx, 0.0, 0.0], [NAN, P0, 0.0], [NAN, NAN, P0]])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spheres", type=int, default=300)
    parser.add_argument("--path", default="drained", choices=["drained", "constant-p"])
    parser.add_argument("--strain", type=float, default=0.03)
    parser.add_argument("--out", default="out/periodic_triaxial")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    solid = args.spheres * np.pi / 6 * 0.002**3 * 1.08
    side = (solid / 0.2) ** (1 / 3)
    sim = wgdem.Simulation(wgdem.Scene.from_toml(scene(args.spheres, side)), backend="cpu")
    print(f"{sim.n_particles} spheres in a {side * 1e3:.1f} mm periodic cube, dt {sim.dt:.3e} s")
    solid_volume = float(np.sum(4 / 3 * np.pi * sim.radii() ** 3))

    # 1. Isotropic compaction without friction, fast to p₀/2 from the gas, then slowly to p₀;
    # then with friction, held at p₀.
    half = held(P0 / 2)
    half[1, 1] = half[2, 2] = P0 / 2
    sim.control_cell(stress=half, max_rate=1.0)
    sim.run(until=sim.time + 0.8)
    sim.control_cell(stress=held(P0), max_rate=MAX_RATE)
    sim.run(until=sim.time + 0.2)
    sim.set_friction("quartz", "quartz", 0.5)
    sim.run(until=sim.time + 0.2)
    sigma = sim.cell_stress()
    e0 = sim.cell_volume / solid_volume - 1.0
    print(f"compacted: σ = ({sigma[0, 0] / 1e3:.2f}, {sigma[1, 1] / 1e3:.2f}, "
          f"{sigma[2, 2] / 1e3:.2f}) kPa, void ratio {e0:.3f}")

    # 2. Triaxial compression along x.
    h0, v0 = sim.cell_edges[0, 0], sim.cell_volume
    rate = np.zeros((3, 3))
    rate[0, 0] = -RATE
    rows, offs = [], []
    steps = int(round(args.strain / RATE / sim.dt))
    chunk = 100
    for done in range(0, steps, chunk):
        sigma = sim.cell_stress()
        lateral = P0 if args.path == "drained" else (3 * P0 - sigma[0, 0]) / 2
        targets = held(NAN)
        targets[1, 1] = targets[2, 2] = lateral
        sim.control_cell(rate=rate, stress=targets, max_rate=MAX_RATE)
        sim.step(min(chunk, steps - done))
        sigma = sim.cell_stress()
        axial = -np.log(sim.cell_edges[0, 0] / h0)
        volumetric = -np.log(sim.cell_volume / v0)
        p = np.trace(sigma) / 3
        q = sigma[0, 0] - 0.5 * (sigma[1, 1] + sigma[2, 2])
        void = sim.cell_volume / solid_volume - 1.0
        contacts = 2 * len(sim.contacts()["particle"]) / sim.n_particles
        rows.append((axial, volumetric, p, q, q / p, sigma[1, 1], sigma[2, 2], void, contacts))
        if axial > 0.002:
            offs += [abs(sigma[1, 1] / lateral - 1), abs(sigma[2, 2] / lateral - 1)]

    table = np.array(rows)
    header = "axial_strain,volumetric_strain,p_Pa,q_Pa,q_over_p,stress_yy_Pa,stress_zz_Pa,void_ratio,coordination"
    np.savetxt(out / "triaxial.csv", table, delimiter=",", header=header, comments="")
    k = int(np.argmax(table[:, 4]))
    eta = table[k, 4]
    phi = np.degrees(np.arcsin(3 * eta / (6 + eta)))
    print(f"{args.path}: peak q/p {eta:.3f} (φ {phi:.1f}°) at axial strain {table[k, 0] * 100:.2f} %; "
          f"at the end q/p {table[-1, 4]:.3f}, volumetric strain {table[-1, 1] * 100:.2f} % "
          f"(negative: dilation); held stresses off by {np.mean(offs) * 100:.2f} % on average, "
          f"{np.max(offs) * 100:.2f} % at most")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 6), sharex=True)
        top.plot(table[:, 0] * 100, table[:, 4])
        top.set_ylabel("q/p")
        top.set_title(f"Periodic triaxial ({args.path}), {sim.n_particles} spheres, p₀ = {P0 / 1e3:.0f} kPa")
        bottom.plot(table[:, 0] * 100, table[:, 1] * 100)
        bottom.set_ylabel("volumetric strain (%, compression +)")
        bottom.set_xlabel("axial strain (%)")
        fig.tight_layout()
        fig.savefig(out / "triaxial.png", dpi=120)
        print(f"wrote {out / 'triaxial.png'}")
    except ImportError:
        print('matplotlib is not installed: no plot (pip install "./python[plot]")')
    sys.exit(0 if np.max(offs) < 0.1 and np.mean(offs) < 0.02 else 1)


if __name__ == "__main__":
    main()
