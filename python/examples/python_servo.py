"""A servo written in Python, against the built-in one.

    python python/examples/python_servo.py [--backend gpu|cpu] [--out DIR]

1. `wgdem.shear` runs the quick Fleischmann preset (300 quartz spheres, 10 kPa): its built-in
   servo consolidates the specimen; its held normal stress is read from the series.
2. The specimen as prepared (`specimen_prepared.csv`) is put in a box of planes under a lid
   plate, as a `Scene`, and a servo written here in Python holds the lid at the same 10 kPa:
   every 20 steps it reads the lid's force and sets its velocity with the built-in law
   (docs/shear.md): v = G (F − σA) + I, G = α / (k T), I += 0.05 G (F − σA), |v| ≤ 0.01 d / T,
   with k the stiffness of one sphere–plate Hertz contact per 4R² of the lid at the target.
3. Prints both held stresses and their difference; exits 1 if it exceeds 2 %.

Needs Python 3.11 (tomllib) or the tomli package.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

import wgdem

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

PRESET = Path(__file__).resolve().parents[2] / "assets" / "shear" / "fleischmann_quick_true.toml"


def box_scene(cfg, specimen, lid_z):
    """The prepared specimen in a box of planes with a lid plate at height `lid_z` (TOML)."""
    b, mu = cfg["box"], cfg["specimen"].get("preparation_friction", 0.0)
    hx, hy = b["length"] / 2, b["width"] / 2
    materials = ""
    for m in cfg["materials"]:
        fields = "".join(f"{k} = {v!r}\n" for k, v in m.items() if k not in ("name", "friction"))
        materials += f'[[materials]]\nname = "{m["name"]}"\nfriction = {mu}\n{fields}'
    planes = [
        ("floor", (0, 0, 0), (0, 0, 1)),
        ("x0", (-hx, 0, 0), (1, 0, 0)),
        ("x1", (hx, 0, 0), (-1, 0, 0)),
        ("y0", (0, -hy, 0), (0, 1, 0)),
        ("y1", (0, hy, 0), (0, -1, 0)),
    ]
    walls = "".join(
        f'[[walls]]\nkind = "plane"\nname = "{n}"\nmaterial = "{b["material"]}"\n'
        f"point = {list(map(float, p))}\nnormal = {list(map(float, q))}\n"
        for n, p, q in planes
    )
    return f"""
[simulation]
duration = 1.0
output_interval = 0.01
dt = {cfg["simulation"]["dt"]}
gravity = [0.0, 0.0, -9.81]
[contact]
law = "{cfg["contact"]["law"]}"
history = "{cfg["contact"]["history"]}"
{materials}
[[particles]]
kind = "file"
path = "{specimen}"
material = "{cfg["specimen"]["material"]}"
{walls}
[[walls]]
kind = "plate"
name = "lid"
material = "{b["material"]}"
center = [0.0, 0.0, {lid_z}]
normal = [0.0, 0.0, -1.0]
u_axis = [1.0, 0.0, 0.0]
half_extents = [{hx}, {hy}]
"""


def plate_stiffness(cfg, radius, area, stress):
    """One Hertz sphere–plate contact per 4R² of the plate, at the target stress (N/m)."""
    sphere = next(m for m in cfg["materials"] if m["name"] == cfg["specimen"]["material"])
    plate = next(m for m in cfg["materials"] if m["name"] == cfg["box"]["material"])
    e_star = 1.0 / sum((1 - m["poisson_ratio"] ** 2) / m["young_modulus"] for m in (sphere, plate))
    n = max(area / (4 * radius**2), 1.0)
    overlap = (3 * stress * area / n / (4 * e_star * np.sqrt(radius))) ** (2 / 3)
    return n * 2 * e_star * np.sqrt(radius * overlap)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="gpu", choices=["gpu", "cpu"])
    parser.add_argument("--out", default="out/python_servo")
    args = parser.parse_args()
    out = Path(args.out).resolve()
    cfg = tomllib.loads(PRESET.read_text())
    target = cfg["consolidation"]["normal_stress"]

    summary, series = wgdem.shear(PRESET, backend=args.backend, out=out / "builtin", overwrite=True)
    stage = np.asarray(series["stage"])
    consolidation = np.asarray(series["normal_stress_Pa"])[stage == "consolidation"]
    builtin = consolidation[-5:].mean()
    print(f"built-in servo: {builtin:.1f} Pa over the last 5 rows of consolidation")

    specimen = out / "builtin" / "specimen_prepared.csv"
    rows = [r for r in specimen.read_text().splitlines() if not r.startswith("#")][1:]  # '#': the recorded overlap
    top = max(float(r.split(",")[2]) + float(r.split(",")[3]) for r in rows)
    scene = wgdem.Scene.from_toml(box_scene(cfg, specimen, top + 1e-4))
    sim = wgdem.Simulation(scene, backend=args.backend)
    lid, interval = scene.walls.index("lid"), 20
    area = cfg["box"]["length"] * cfg["box"]["width"]
    radius = float(sim.radii().mean())
    period = interval * sim.dt
    gain = 0.5 / (plate_stiffness(cfg, radius, area, target) * period)
    v_max = 0.01 * 2 * radius / period
    integral, held = 0.0, []
    while sim.time < 0.3:
        sim.step(interval)
        error = sim.wall_forces()[lid][2] - target * area
        v = gain * error + integral
        if abs(v) <= v_max:
            integral += 0.05 * gain * error
        sim.set_wall_velocity(lid, np.array([0.0, 0.0, float(np.clip(v, -v_max, v_max))]))
        held.append((sim.time, sim.wall_forces()[lid][2] / area))
    t, stress = np.array(held).T
    python = stress[t > 0.225].mean()
    difference = python / builtin - 1
    print(f"Python servo:   {python:.1f} Pa over the last 0.075 s of a 0.3 s hold")
    print(f"target {target:.1f} Pa; Python against built-in: {100 * difference:+.2f} %")
    sys.exit(0 if abs(difference) <= 0.02 else 1)


if __name__ == "__main__":
    main()
