"""A parametric study from Python: the He et al. (2020) quick dense preset sheared with
inter-particle friction μ = 0.1, 0.2 and 0.3, and its peak friction angle φ_p against μ.

    python python/examples/mu_sweep.py [--backend gpu|cpu] [--out DIR]

Each run is `assets/shear/he_quick_dense.toml` with the spheres' material's friction set to μ
by an override (`overrides={"materials.steel_ball.friction": mu}`, as `--set` on the command
line); the box keeps its 0.1 (a sphere–wall pair takes the smaller of the two), and the
specimen is still prepared frictionless, as the preset says. Prints a table, and with
matplotlib installed writes DIR/phi_p_vs_mu.png. He et al. Table 2 gives, for their 10 000
sphere dense specimens, φ_p = 33.9°, 42.0° and 44.6° (hard) at μ = 0.1, 0.2, 0.3; the full
presets (`he_dense_mu*.toml`) give 34.6°, 40.9° and 44.5° (docs/shear.md). The quick preset,
830 spheres ten diameters across, gave 36.9°, 49.2° and 56.4° on the CPU reference when this
example set the box's friction to μ too; with the box at 0.1, as now, it gives 41.6° at μ = 0.2
and 45.5° at μ = 0.3 (the calibration run in docs/sweeps.md, which also runs such members side
by side with wgdem.sweep).
"""

import argparse
from pathlib import Path

import wgdem

PRESET = Path(__file__).resolve().parents[2] / "assets" / "shear" / "he_quick_dense.toml"
PAPER = {0.1: 33.9, 0.2: 42.0, 0.3: 44.6}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="gpu", choices=["gpu", "cpu"])
    parser.add_argument("--out", default="out/mu_sweep")
    args = parser.parse_args()
    out = Path(args.out)
    rows = []
    for mu in (0.1, 0.2, 0.3):
        summary, series = wgdem.shear(
            PRESET,
            backend=args.backend,
            out=out / f"mu{mu}",
            overwrite=True,
            overrides={"materials.steel_ball.friction": mu},
        )
        rows.append((mu, summary["peak_friction_angle_deg"], summary["residual_friction_angle_deg"]))
        print(f"μ = {mu}: φ_p = {rows[-1][1]:.1f}°, φ_r = {rows[-1][2]:.1f}° ({len(series)} rows)")
    print(f"{'μ':>5} {'φ_p (°)':>9} {'φ_r (°)':>9} {'He et al. φ_p (°)':>18}")
    for mu, peak, residual in rows:
        print(f"{mu:>5} {peak:>9.1f} {residual:>9.1f} {PAPER[mu]:>18.1f}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return
    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    ax.plot([r[0] for r in rows], [r[1] for r in rows], "o-", label="wgdem, quick preset")
    ax.plot(list(PAPER), list(PAPER.values()), "s--", label="He et al. 2020, Table 2")
    ax.set_xlabel("inter-particle friction μ")
    ax.set_ylabel("peak friction angle φ_p (°)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "phi_p_vs_mu.png", dpi=150)
    print(f"plot: {out / 'phi_p_vs_mu.png'}")


if __name__ == "__main__":
    main()
