"""An oedometer test written in Python: a specimen rained into a box, then loaded by a lid held
at each vertical stress of a loading and unloading path, the void ratio measured at each.

    python python/examples/oedometer.py [--backend auto|cpu|gpu] [--spheres N] [--out DIR]

1. `--spheres` polydisperse spheres (1.6–2.4 mm) fall into a 16 × 16 mm box of planes under
   gravity and settle with Cundall's local damping 0.7, which is then switched off.
2. The lid plate, 3 mm above the loose column, is brought down by `sim.servo` (the shear
   test's servo) and held at each vertical stress σ_v of 10, 25, 50, 100, 200 kPa and back to
   10 kPa, 50 ms each (the stress held is the mean over the last 5 ms).
3. At the end of each stage: σ_v held (the lid's force over its area), the void ratio of the
   box below the lid (`sim.void_ratio`) and the specimen's mean vertical stress (`sim.stress`,
   Love–Weber). Writes DIR/oedometer.csv, the files of `wgdem run` through `wgdem.Series`
   (one row per stage: DIR/run/timeseries.csv, particle CSVs, ParaView series), and, with
   matplotlib installed (`pip install "./python[plot]"`), DIR/e_log_sigma.png (e against
   log σ_v). Exits 1 if a stage's held stress is more than 2 % off its target or the void
   ratio does not fall under loading.

With the defaults (400 spheres) it runs in about 25 s on one core with the CPU reference
(python/tests/test_examples.py runs it so in CI).
"""

import argparse
import sys
from pathlib import Path

import numpy as np

import wgdem

SIDE = 0.016  # m, the box's width
STAGES_KPA = [10, 25, 50, 100, 200, 100, 50, 25, 10]


def scene(spheres, height):
    """The box of planes with spheres placed at random below `height` and the lid above."""
    planes = [
        ("floor", (0, 0, 0), (0, 0, 1)),
        ("x0", (0, 0, 0), (1, 0, 0)),
        ("x1", (SIDE, 0, 0), (-1, 0, 0)),
        ("y0", (0, 0, 0), (0, 1, 0)),
        ("y1", (0, SIDE, 0), (0, -1, 0)),
    ]
    walls = "".join(
        f'[[walls]]\nkind = "plane"\nname = "{n}"\nmaterial = "wall"\n'
        f"point = {list(map(float, p))}\nnormal = {list(map(float, q))}\n"
        for n, p, q in planes
    )
    return f"""
[simulation]
duration = 1.0
output_interval = 0.01
gravity = [0.0, 0.0, -9.81]
seed = 3

[contact]
law = "hertz"
history = "true"

[[materials]]
name = "sand"
density = 2650.0
friction = 0.3
young_modulus = 5e7
poisson_ratio = 0.25
restitution = 0.3

[[materials]]
name = "wall"
density = 7800.0
friction = 0.0
young_modulus = 5e7
poisson_ratio = 0.25
restitution = 0.3

[[particles]]
kind = "random"
material = "sand"
count = {spheres}
region = {{ min = [0.0, 0.0, 0.0], max = [{SIDE}, {SIDE}, {height}] }}
size = {{ distribution = "uniform", min_diameter = 0.0016, max_diameter = 0.0024 }}

{walls}
[[walls]]
kind = "plate"
name = "lid"
material = "wall"
center = [{SIDE / 2}, {SIDE / 2}, {height + 0.003}]
normal = [0.0, 0.0, -1.0]
u_axis = [1.0, 0.0, 0.0]
half_extents = [{SIDE / 2}, {SIDE / 2}]
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default="auto", choices=["auto", "cpu", "gpu"])
    parser.add_argument("--spheres", type=int, default=400)
    parser.add_argument("--out", default="out/oedometer")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    # A loose column about twice the settled height (solid fraction about 0.6 when settled).
    solid = args.spheres * np.pi / 6 * 0.002**3 * 1.08
    height = 2.0 * solid / (0.6 * SIDE * SIDE)
    sim = wgdem.Simulation(wgdem.Scene.from_toml(scene(args.spheres, height)), backend=args.backend)
    print(f"{sim.n_particles} spheres on {sim.backend}, dt {sim.dt:.3e} s")

    # 1. Rain and settle with local damping, then switch it off.
    sim.local_damping = 0.7
    sim.run(until=0.12)
    sim.local_damping = 0.0
    top = (sim.positions()[:, 2] + sim.radii()).max()
    translational, rotational = sim.kinetic_energy()
    print(f"settled: top {top * 1e3:.2f} mm, kinetic energy {translational + rotational:.2e} J")

    # 2. The lid brought down onto the specimen, then the stages, held by the servo: each
    # stage 50 ms, the stress held averaged over its last 5 ms.
    lid = sim.walls.index("lid")
    area = SIDE * SIDE
    sim.servo("lid", stress=STAGES_KPA[0] * 1e3)
    sim.run(until=sim.time + 0.06)
    series = wgdem.Series(sim, out / "run", overwrite=True)
    series.append()
    rows = []
    for kpa in STAGES_KPA:
        sim.servo("lid", stress=kpa * 1e3)
        sim.run(until=sim.time + 0.045)
        forces = []
        while len(forces) < 60:
            sim.step(20)
            forces.append(sim.wall_forces()[lid][2])
        held = np.mean(forces) / area
        z = sim.wall_positions()[lid][2]
        box = [[0.0, 0.0, 0.0], [SIDE, SIDE, z]]
        e = sim.void_ratio(box)
        sigma_zz = sim.stress(box)[2, 2]
        rows.append((kpa, held / 1e3, e, sigma_zz / 1e3, z * 1e3))
        series.append()
        print(f"σ_v {kpa:>4} kPa: held {held / 1e3:8.3f} kPa, e {e:.4f}, "
              f"σ_zz (Love–Weber) {sigma_zz / 1e3:8.3f} kPa, lid at {z * 1e3:.3f} mm")
    sim.servo("lid", stress=None)

    table = np.array(rows)
    header = "target_kPa,held_kPa,void_ratio,love_weber_szz_kPa,lid_height_mm"
    np.savetxt(out / "oedometer.csv", table, delimiter=",", header=header, comments="")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        n_load = STAGES_KPA.index(max(STAGES_KPA)) + 1
        ax.semilogx(table[:n_load, 1], table[:n_load, 2], "o-", label="loading")
        ax.semilogx(table[n_load - 1 :, 1], table[n_load - 1 :, 2], "s--", label="unloading")
        ax.set_xlabel("vertical stress σ_v (kPa)")
        ax.set_ylabel("void ratio e")
        ax.set_title(f"Oedometer, {sim.n_particles} spheres ({sim.backend})")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "e_log_sigma.png", dpi=120)
        print(f"wrote {out / 'e_log_sigma.png'}")
    except ImportError:
        print("matplotlib is not installed: no plot (pip install \"./python[plot]\")")

    off = np.abs(table[:, 1] / table[:, 0] - 1.0).max()
    loading = table[: STAGES_KPA.index(max(STAGES_KPA)) + 1, 2]
    ok = off < 0.02 and np.all(np.diff(loading) < 0)
    print(f"held within {off * 100:.2f} % of the targets; e falls under loading: {bool(np.all(np.diff(loading) < 0))}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
