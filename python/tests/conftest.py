"""Shared scenes and the GPU switch of the pytest suite (python/tests)."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ASSETS = REPO / "assets"

# A 5 × 5 × 4 lattice of 2 mm spheres in a 20 mm box under a plate (the lid, wall 5); no
# gravity unless a test adds it. Used by the servo, steering and checkpoint tests.
R, SPACING, SIDE = 0.002, 0.004, 0.02
LATTICE_TOP = R + 3 * SPACING + R


def header(gravity=(0.0, 0.0, 0.0)):
    """`[simulation]`, `[contact]` and the one material, "grain", of the tests' scenes."""
    return f"""
[simulation]
duration = 0.1
output_interval = 0.01
gravity = {list(gravity)}
[contact]
law = "hertz"
history = "true"
[[materials]]
name = "grain"
density = 2650.0
friction = 0.3
young_modulus = 5e7
poisson_ratio = 0.25
restitution = 0.3
"""


def lattice_scene(gravity=(0.0, 0.0, 0.0), lid_gap=1e-4):
    """The lattice scene's TOML text, the lid `lid_gap` (m) above the top spheres."""
    walls = [
        ("floor", (0.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
        ("xmin", (0.0, 0.0, 0.0), (1.0, 0.0, 0.0)),
        ("xmax", (SIDE, 0.0, 0.0), (-1.0, 0.0, 0.0)),
        ("ymin", (0.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
        ("ymax", (0.0, SIDE, 0.0), (0.0, -1.0, 0.0)),
    ]
    planes = "".join(
        f'[[walls]]\nkind = "plane"\nname = "{n}"\nmaterial = "grain"\n'
        f"point = {list(p)}\nnormal = {list(q)}\n"
        for n, p, q in walls
    )
    return f"""{header(gravity)}
[[particles]]
kind = "lattice"
material = "grain"
radius = {R}
origin = [{R}, {R}, {R}]
spacing = {SPACING}
counts = [5, 5, 4]
{planes}
[[walls]]
kind = "plate"
name = "lid"
material = "grain"
center = [{SIDE / 2}, {SIDE / 2}, {LATTICE_TOP + lid_gap}]
normal = [0.0, 0.0, -1.0]
u_axis = [1.0, 0.0, 0.0]
half_extents = [{SIDE / 2}, {SIDE / 2}]
"""


def cannot_run(why):
    """Skips the running test because of `why` (pytest lists it by name with -rs); fails it
    where WGDEM_STRICT_TESTS=1 (CI) requires every test to run."""
    if os.environ.get("WGDEM_STRICT_TESTS") == "1":
        pytest.fail(f"cannot run: {why} (WGDEM_STRICT_TESTS=1 requires every test to run)")
    pytest.skip(why)


def wgdem_binary():
    """The command-line program: WGDEM_BIN (which CI sets), else the release build."""
    if "WGDEM_BIN" in os.environ:
        return Path(os.environ["WGDEM_BIN"])
    path = REPO / "target" / "release" / "wgdem"
    if not path.exists():
        cannot_run(f"no wgdem binary at {path} (cargo build --release, or set WGDEM_BIN)")
    return path


def gpu_skipped():
    """True where WGDEM_SKIP_GPU_TESTS=1 asks to skip the GPU tests (pytest lists them by name
    with -rs); an error where WGDEM_STRICT_TESTS=1 (CI) requires every test to run."""
    skip = os.environ.get("WGDEM_SKIP_GPU_TESTS") == "1"
    if skip and os.environ.get("WGDEM_STRICT_TESTS") == "1":
        raise pytest.UsageError(
            "WGDEM_SKIP_GPU_TESTS=1 with WGDEM_STRICT_TESTS=1: every test must run (unset one)"
        )
    return skip


BACKENDS = [
    "cpu",
    pytest.param(
        "gpu",
        marks=pytest.mark.skipif(gpu_skipped(), reason="WGDEM_SKIP_GPU_TESTS=1"),
    ),
]

