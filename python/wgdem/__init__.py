"""wgdem: a discrete element method (DEM) engine for granular materials, on the GPU.

Spheres touch through soft contacts that carry their tangential history; planes and plates
make boxes and loading plates. SI units throughout.

- ``Scene.from_toml(path_or_text)`` builds a scene (the format of ``wgdem run``);
- ``Simulation(scene, backend="auto"|"gpu"|"cpu")`` steps it, with its state as NumPy arrays and
  particle and wall velocities, gravity, damping and friction settable between calls to
  ``step``; ``sim.write_particles`` and ``sim.write_vtk`` write its state, and
  ``Series(sim, out)`` the files of ``wgdem run`` from a Python loop;
- ``run(scene)`` runs a scene to its end as ``wgdem run`` does, ``shear(config)`` a direct
  shear test, ``contact(case)`` a contact case, each returning ``(summary, series)``;
- ``sweep(job, config, grid=..., sets=..., repeats=...)`` runs many of them on Dask (this
  machine's cores and GPUs, or a cluster) and returns a table, one row per member.

docs/python.md in the wgdem sources is the guide.
"""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple, Optional, Union

import numpy as np

from ._wgdem import Scene, Series, Simulation, __version__
from ._wgdem import adapters as _adapters
from ._wgdem import cell_json as _cell_json
from ._wgdem import contact_json as _contact_json
from ._wgdem import run_json as _run_json
from ._wgdem import shear_json as _shear_json
from .sweeps import sweep
from .errors import BlowUpError, ConfigError, EngineError, FileError, WgdemError

__all__ = [
    "Scene",
    "Simulation",
    "Series",
    "run",
    "shear",
    "cell",
    "contact",
    "sweep",
    "adapters",
    "JobResult",
    "WgdemError",
    "ConfigError",
    "EngineError",
    "BlowUpError",
    "FileError",
    "__version__",
]


class JobResult(NamedTuple):
    """What ``shear`` and ``contact`` return: unpack as ``summary, series = wgdem.shear(...)``."""

    summary: dict
    """``summary.json`` as a dict (keys and units in docs/outputs.md)."""
    series: Any
    """The rows of ``shear.csv`` / ``contact.csv``: a pandas DataFrame where pandas is
    installed, else a dict of NumPy arrays (one per column, the CSV's column names)."""


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _series(rows_json: str) -> Any:
    """Rows (JSON objects, as serde writes the CSV's rows) as columns. JSON has no NaN: a
    number column's nulls are the NaNs the CSV writes as `NaN`."""
    rows = json.loads(rows_json)
    names = list(rows[0]) if rows else []
    columns = {}
    for name in names:
        values = [row[name] for row in rows]
        if all(v is None or _is_number(v) for v in values) and any(_is_number(v) for v in values):
            if all(isinstance(v, int) for v in values):
                columns[name] = np.array(values, dtype=np.int64)
            else:
                columns[name] = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
        else:
            columns[name] = np.array(values)
    try:
        import pandas
    except ImportError:
        return columns
    return pandas.DataFrame(columns)


def _csv_series(text: str) -> Any:
    """A CSV's text (wgdem's: a header, numbers, ``NaN`` where undefined) as columns, like
    ``_series``: int64 where every value is an integer literal, else float64."""
    lines = [line.split(",") for line in text.splitlines() if line]
    names = lines[0] if lines else []
    columns = {}
    for k, name in enumerate(names):
        cells = [row[k] for row in lines[1:]]
        if cells and all(c.lstrip("-").isdigit() for c in cells):
            columns[name] = np.array([int(c) for c in cells], dtype=np.int64)
        else:
            columns[name] = np.array([float(c) for c in cells], dtype=np.float64)
    try:
        import pandas
    except ImportError:
        return columns
    return pandas.DataFrame(columns)


PathOrText = Union[str, "os.PathLike[str]"]


def run(
    scene: Union["Scene", PathOrText],
    backend: str = "auto",
    adapter: Optional[str] = None,
    out: Optional[PathOrText] = None,
    progress: bool = True,
    overwrite: bool = False,
    gpu_path: str = "auto",
    pairs: str = "auto",
    overrides: Optional[dict] = None,
    resume: bool = False,
) -> JobResult:
    """Runs a scene to its ``simulation.duration``, as ``wgdem run`` does, writing the same files.

    scene: a ``Scene``, a scene file (``assets/scenes/*.toml``) or its TOML text.
    backend, adapter, gpu_path, pairs: as for ``shear``.
    out: the output directory (``timeseries.csv``, ``particles/``, ``vtk/run.pvd``,
        ``summary.json``, ``input.toml``, ``checkpoint.bin``; docs/outputs.md); None writes to a
        temporary directory removed afterwards. A directory that holds results is refused
        unless ``overwrite=True``.
    progress: shows a progress line with an ETA on stderr; ``False`` also leaves out the INFO
        log lines (warnings still show).
    overrides: values of the file changed by dotted key, as ``--set`` does
        (``{"materials.glass.friction": 0.3, "simulation.seed": 7}``; array entries by name or
        index from 0); checked as the file is, and recorded in ``input.toml``.
    resume: continues the run in ``out`` from its last checkpoint, as ``wgdem run --resume
        OUT`` (the same scene, overrides and engine; the results are those of an uninterrupted
        run, bit for bit).

    Returns ``(summary, series)``: ``summary.json`` as a dict and the rows of
    ``timeseries.csv``. Ctrl-C stops at the next progress report with ``KeyboardInterrupt``;
    ``resume=True`` (or ``wgdem run --resume OUT``) continues a kept directory.
    """
    summary, table, _ = _run_json(
        scene,
        backend=backend,
        adapter=adapter,
        out=None if out is None else str(out),
        progress=progress,
        overwrite=overwrite,
        gpu_path=gpu_path,
        pairs=pairs,
        overrides=overrides,
        resume=resume,
    )
    return JobResult(json.loads(summary), _csv_series(table))


def shear(
    config: PathOrText,
    backend: str = "auto",
    adapter: Optional[str] = None,
    out: Optional[PathOrText] = None,
    particles: Optional[int] = None,
    progress: bool = True,
    overwrite: bool = False,
    specimen: Optional[PathOrText] = None,
    gpu_path: str = "auto",
    pairs: str = "auto",
    overrides: Optional[dict] = None,
    resume: bool = False,
) -> JobResult:
    """Runs a direct shear test, as ``wgdem shear`` does.

    config: a shear configuration file (``assets/shear/*.toml``) or its TOML text.
    backend: ``"auto"`` (the default: the CPU reference where the GPU adapter is a software one
        and the test has fewer than 10 000 spheres, the GPU engine otherwise, logged), ``"gpu"``
        or ``"cpu"`` (the f64 reference); adapter picks a GPU.
    out: the output directory (``shear.csv``, ``summary.json``, plots, ParaView files,
        checkpoint); None writes to a temporary directory removed afterwards. A directory that
        holds results is refused unless ``overwrite=True``.
    particles: scales the preset to this many spheres (box, packing and strain kept).
    progress: shows a line per stage with an ETA on stderr; ``False`` also leaves out the INFO
        log lines (warnings still show).
    specimen: starts from a saved packing (preparation skipped).
    gpu_path: how the GPU engine records its steps, as ``--gpu-path``: ``"auto"`` (one
        workgroup per batch up to 1 500 spheres on a software adapter, 340 on a GPU),
        ``"general"`` or ``"single-workgroup"``;
        the same results either way.
    pairs: how the GPU engine evaluates a contact, as ``--pairs``: ``"auto"`` (once, by one of
        its spheres, where the contact model's history is wide: Kuhn's linear, hill, rolling
        resistance, Jäger; on both sides for the spring), ``"once"`` or ``"both"``; the same
        results every way.
    overrides: values of the configuration changed by dotted key, as ``--set`` does
        (``{"materials.quartz.friction": 0.3, "specimen.count": 2000}``).
    resume: continues the test in ``out`` from its last checkpoint, as ``wgdem shear --resume
        OUT`` (the same configuration, overrides, ``particles`` and engine).

    Returns ``(summary, series)``: ``summary.json`` as a dict (peak and residual friction
    angles, dilation, void ratios, ...) and the rows of ``shear.csv``. Ctrl-C stops between
    rows with ``KeyboardInterrupt``; ``resume=True`` (or ``wgdem shear --resume OUT``)
    continues a kept directory.
    """
    summary, rows, _ = _shear_json(
        config,
        backend=backend,
        adapter=adapter,
        out=None if out is None else str(out),
        particles=particles,
        progress=progress,
        overwrite=overwrite,
        specimen=None if specimen is None else str(specimen),
        gpu_path=gpu_path,
        pairs=pairs,
        overrides=overrides,
        resume=resume,
    )
    return JobResult(json.loads(summary), _series(rows))


def cell(
    config: PathOrText,
    backend: str = "auto",
    out: Optional[PathOrText] = None,
    progress: bool = True,
    overwrite: bool = False,
    overrides: Optional[dict] = None,
    resume: bool = False,
    specimen: Optional[PathOrText] = None,
) -> JobResult:
    """Runs an element test in a periodic cell, as ``wgdem cell`` does: a gas of spheres
    compacted isotropically to ``compaction.mean_stress``, then loaded along
    ``loading.path`` (``"drained_triaxial"``, ``"constant_p"``, ``"biaxial"`` or
    ``"simple_shear"``).

    config: a periodic-cell test file (``assets/cell/*.toml``, reference in docs/cell.md) or its
        TOML text.
    backend: ``"auto"``, ``"cpu"`` or ``"gpu"``, as for ``wgdem.shear`` (``"auto"`` takes the
        CPU reference for fewer than 100 000 spheres, a periodic cell's threshold, on a
        software adapter).
    out: the output directory (``cell.csv``, ``summary.json``, plots, ParaView files,
        checkpoint); None writes to a temporary directory removed afterwards. A directory that
        holds results is refused unless ``overwrite=True``.
    progress: shows a line per stage on stderr; ``False`` also leaves out the INFO log lines.
    overrides: values of the configuration changed by dotted key, as ``--set`` does
        (``{"loading.path": "constant_p", "specimen.count": 500}``).
    resume: continues the test in ``out`` from its last checkpoint, as ``wgdem cell --resume
        OUT`` (the same configuration and overrides).
    specimen: starts from a saved specimen (``specimen_compacted.csv`` of an earlier test, which
        records its cell) instead of a gas, as ``--specimen``.

    Returns ``(summary, series)``: ``summary.json`` as a dict (peak stress ratio and friction
    angle, strain at the peak, dilatancy, the held stresses' error, the probes', the rigid
    rotation's and the Jäger histories' findings, ...) and the rows of ``cell.csv`` (strain and
    stress tensors, p, q, void ratio, coordination, contacts, sliding fraction, contact work,
    Jäger history lengths). Ctrl-C stops between rows with ``KeyboardInterrupt``.
    """
    summary, rows, _ = _cell_json(
        config,
        backend=backend,
        out=None if out is None else str(out),
        progress=progress,
        overwrite=overwrite,
        overrides=overrides,
        resume=resume,
        specimen=None if specimen is None else str(specimen),
    )
    return JobResult(json.loads(summary), _series(rows))


def contact(
    case: PathOrText,
    backend: str = "cpu",
    adapter: Optional[str] = None,
    out: Optional[PathOrText] = None,
    overwrite: bool = False,
    overrides: Optional[dict] = None,
) -> JobResult:
    """Drives one contact through a case's prescribed motions, as ``wgdem contact`` does.

    case: a contact case file (``assets/contact/*.toml``) or its TOML text.
    backend: ``"cpu"`` (the default) or ``"gpu"`` (the WGSL contact models).
    out: where to write ``contact.csv``, ``summary.json`` and ``input.toml``; None writes
        nothing.

    Returns ``(summary, series)``: the summary as a dict and one row per step (forces,
    work, overlap, stage).
    """
    summary, rows, _ = _contact_json(
        case,
        backend=backend,
        adapter=adapter,
        out=None if out is None else str(out),
        overwrite=overwrite,
        overrides=overrides,
    )
    return JobResult(json.loads(summary), _series(rows))


def adapters() -> list:
    """The GPU adapters a run could take (OpenGL ones left out unless asked for), each a dict:
    ``name``, ``backend``, ``device_type``, ``pci_bus_id`` (empty where the driver gives none;
    as an ``adapter`` argument it selects one of identical GPUs), ``software`` (lavapipe and
    other CPU drivers) and ``description``."""
    return _adapters()

