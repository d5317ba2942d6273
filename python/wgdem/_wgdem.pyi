"""Type stubs of wgdem's native module. SI units throughout; particle arrays have one row per
sphere, in stable-id order (0 … N−1); every array returned is a fresh copy."""

import os
from typing import Dict, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

PathLike = Union[str, "os.PathLike[str]"]
Float64Array = npt.NDArray[np.float64]
Int64Array = npt.NDArray[np.int64]

class Scene:
    """A scene built from TOML (the format of ``wgdem run``, docs/scene.md), ready to simulate."""

    @staticmethod
    def from_toml(path_or_text: PathLike, overrides: Optional[Dict[str, object]] = None) -> "Scene":
        """Loads a scene from a TOML file or from TOML text (a str holding a newline or ``=``).
        Raises ConfigError naming the field and line of anything invalid, FileError when the
        file cannot be read."""
    @staticmethod
    def bench_specimen(particles: int, model: str = "hertz") -> "Scene":
        """The specimen ``wgdem bench`` times (about ``particles`` spheres)."""
    @property
    def n_particles(self) -> int:
        """Number of spheres."""
    @property
    def dt(self) -> float:
        """Time step (s)."""
    @property
    def critical_dt(self) -> float:
        """Critical time step estimate (s)."""
    @property
    def duration(self) -> float:
        """``simulation.duration`` (s)."""
    @property
    def materials(self) -> List[str]:
        """Material names, in file order."""
    @property
    def walls(self) -> List[str]:
        """Wall names, in scene order (the index the wall methods take)."""
    @property
    def source(self) -> str:
        """The scene's file, or ``<scene text>``."""
    def to_toml(self) -> str:
        """The scene as TOML with every default written out."""

class Simulation:
    """A scene stepped on the GPU engine (``backend="gpu"``) or the f64 CPU reference
    (``backend="cpu"``), read as NumPy arrays and steered between calls to ``step``."""

    def __init__(
        self,
        scene: Scene,
        backend: str = "gpu",
        adapter: Optional[str] = None,
        gpu_path: str = "auto",
        pairs: str = "auto",
    ) -> None:
        """Raises EngineError when no GPU adapter can be used, ConfigError for an unknown
        backend, GPU path or way to evaluate pairs. ``gpu_path``: ``"auto"``, ``"general"``
        or ``"single-workgroup"``, as ``--gpu-path``; ``pairs``: ``"auto"``, ``"once"`` or
        ``"both"``, as ``--pairs`` (the same bits every way)."""
    def step(self, n: int) -> None:
        """Advances ``n`` steps with the GIL released; Ctrl-C raises KeyboardInterrupt at the
        next engine call, leaving the simulation usable. Raises BlowUpError on a blow-up."""
    def run(self, until: float) -> None:
        """Advances to simulated time ``until`` (s)."""
    def reorder(self) -> None:
        """Sorts the particles in GPU memory by cell at the next step (the engine does so every
        2 000 steps); the CPU ignores it."""
    @property
    def time(self) -> float:
        """Simulated time (s)."""
    @property
    def dt(self) -> float:
        """Time step (s)."""
    @property
    def steps(self) -> int:
        """Steps taken."""
    @property
    def n_particles(self) -> int:
        """Number of spheres."""
    @property
    def backend(self) -> str:
        """``"gpu"`` or ``"cpu"``."""
    @property
    def adapter(self) -> Optional[str]:
        """The GPU adapter (None on the CPU)."""
    @property
    def walls(self) -> List[str]:
        """Wall names, in scene order."""
    def ids(self) -> Int64Array:
        """Stable ids 0 … N−1, (N,)."""
    def positions(self) -> Float64Array:
        """Centres (m), (N, 3)."""
    def velocities(self) -> Float64Array:
        """Velocities (m/s), (N, 3): the half step after the last one (leapfrog)."""
    def angular_velocities(self) -> Float64Array:
        """Angular velocities (rad/s), (N, 3)."""
    def radii(self) -> Float64Array:
        """Radii (m), (N,)."""
    def masses(self) -> Float64Array:
        """Masses (kg), (N,)."""
    def materials(self) -> Int64Array:
        """Material index of each sphere into ``Scene.materials``, (N,)."""
    def forces(self) -> Float64Array:
        """Total force of the last step (N): gravity, contacts, loads; (N, 3)."""
    def torques(self) -> Float64Array:
        """Total torque of the last step (N·m), (N, 3)."""
    def set_velocities(self, velocities: Float64Array) -> None:
        """Sets every velocity (m/s) from a float64 (N, 3) array; history is kept. A wrong
        shape or a non-finite value is a ConfigError, another dtype a TypeError."""
    def set_angular_velocities(self, angular_velocities: Float64Array) -> None:
        """Sets every angular velocity (rad/s) from a float64 (N, 3) array."""
    def contacts(self) -> Dict[str, npt.NDArray]:
        """Touching sphere–sphere contacts (M rows): ``other``, ``particle`` (ids, other <
        particle), ``point`` (m), ``normal`` (other → particle), ``overlap`` (m),
        ``normal_force``, ``tangential_force`` (N, on ``particle``), ``sliding`` (bool)."""
    def wall_contacts(self) -> Dict[str, npt.NDArray]:
        """Touching sphere–wall contacts, as ``contacts`` with ``wall`` for ``other``."""
    def wall_positions(self) -> Float64Array:
        """Reference point of each wall (a plane's point, a plate's centre) (m), (W, 3)."""
    def wall_velocities(self) -> Float64Array:
        """Wall velocities (m/s), (W, 3)."""
    def wall_forces(self) -> Float64Array:
        """Force of the spheres on each wall in the last step (N), (W, 3)."""
    def wall_torques(self) -> Float64Array:
        """Torque on each wall about its reference point in the last step (N·m), (W, 3)."""
    def set_wall_velocity(
        self, wall: Union[int, str], velocity: Union[Float64Array, List[float], Tuple[float, float, float]]
    ) -> None:
        """Sets wall ``wall``'s (index or name) velocity (m/s, 3 numbers) from the next step on."""
    def checkpoint(self, path: PathLike) -> None:
        """Writes the whole state to ``path``, atomically."""
    def servo(
        self,
        wall: Union[int, str],
        stress: Optional[float],
        area: Optional[float] = None,
        gain: float = 0.5,
        interval: int = 20,
    ) -> None:
        """Holds ``wall`` at normal stress ``stress`` (Pa) over ``area`` (m²; a plate's own by
        default) through later steps, with the shear test's servo; ``stress=None`` releases it."""
    def void_ratio(self, box: npt.ArrayLike) -> float:
        """Void ratio of the box ``[[x0, y0, z0], [x1, y1, z1]]`` (m)."""
    def stress(self, box: npt.ArrayLike) -> Float64Array:
        """Love–Weber mean stress (Pa, compression positive) of the spheres whose centres lie
        in the box ``[[x0, y0, z0], [x1, y1, z1]]``, (3, 3)."""
    def source_ids(self) -> Int64Array:
        """Each sphere's id in its packing file (a LAMMPS atom id), −1 where generated."""
    def kinetic_energy(self) -> Tuple[float, float]:
        """Kinetic energy (J) as ``(translational, rotational)``."""
    @property
    def gravity(self) -> Float64Array:
        """Body acceleration (m/s²), (3,); settable between steps, history kept."""
    @gravity.setter
    def gravity(self, value: Union[Float64Array, List[float], Tuple[float, float, float]]) -> None: ...
    @property
    def local_damping(self) -> float:
        """Cundall's local damping α in [0, 1); settable between steps, history kept."""
    @local_damping.setter
    def local_damping(self, value: float) -> None: ...
    @property
    def cell_edges(self) -> Optional[Float64Array]:
        """The periodic cell's edge vectors as rows (m), (3, 3); ``None`` without ``[cell]``."""
    @property
    def cell_volume(self) -> Optional[float]:
        """The periodic cell's volume (m³); ``None`` without ``[cell]``."""
    @property
    def velocity_gradient(self) -> Optional[Float64Array]:
        """The cell's velocity gradient ``L[i, j] = ∂v_i/∂x_j`` (1/s), (3, 3); settable between
        steps; ``None`` without ``[cell]``."""
    @velocity_gradient.setter
    def velocity_gradient(self, value: npt.ArrayLike) -> None: ...
    def control_cell(
        self,
        rate: Optional[npt.ArrayLike] = None,
        stress: Optional[npt.ArrayLike] = None,
        max_rate: float = 0.1,
        band: float = 0.05,
        reference: Optional[float] = None,
    ) -> None:
        """Drives the cell through later steps: ``L[i, j]`` holds ``stress[i, j]`` (Pa,
        compression positive; ``nan`` where not held) at most at ``max_rate`` (1/s), else
        ``rate[i, j]`` (1/s); with neither, releases the cell (``L`` = 0). The CPU
        reference's only: the servo acts every step."""
    def cell_stress(self) -> Optional[Float64Array]:
        """The periodic cell's Love–Weber stress in the last step (Pa, compression positive),
        (3, 3); ``None`` without ``[cell]``."""
    def unwrapped_positions(self) -> Float64Array:
        """Centres (m), (N, 3), unwrapped across the faces of a periodic cell."""
    def friction(self, a: Union[str, int], b: Union[str, int]) -> float:
        """Friction coefficient between materials ``a`` and ``b`` (names or indices)."""
    def set_friction(self, a: Union[str, int], b: Union[str, int], friction: float) -> None:
        """Sets the friction between materials ``a`` and ``b`` from the next step, history kept."""
    def write_particles(self, path: PathLike, format: str = "csv") -> None:
        """Writes the spheres as ``wgdem run``'s particle CSV or (``"lammps-dump"``) one frame of
        a LAMMPS dump."""
    def write_vtk(self, out: PathLike) -> List[str]:
        """Writes a ParaView snapshot (particles.vtu, contacts.vtp, walls.vtp) in ``out``."""
    @staticmethod
    def restore(
        path: PathLike, adapter: Optional[str] = None, gpu_path: str = "auto", pairs: str = "auto"
    ) -> "Simulation":
        """The simulation saved by ``checkpoint``, on the backend that saved it; continues to
        the same bits. A damaged or foreign file is a ConfigError saying which."""

class Series:
    """The files of ``wgdem run`` written from a Python loop: each ``append()`` adds a row of
    ``timeseries.csv``, a particle CSV and a ParaView snapshot (``vtk/run.pvd``)."""

    def __init__(self, sim: Simulation, out: PathLike, overwrite: bool = False, vtk: bool = True) -> None: ...
    def append(self) -> None:
        """Appends the simulation's current state."""
    def __len__(self) -> int:
        """Rows appended so far."""

def run_json(
    scene: Union[Scene, PathLike],
    backend: str = "auto",
    adapter: Optional[str] = None,
    out: Optional[PathLike] = None,
    progress: bool = True,
    overwrite: bool = False,
    gpu_path: str = "auto",
    pairs: str = "auto",
    overrides: Optional[Dict[str, object]] = None,
    resume: bool = False,
) -> Tuple[str, str, Optional[str]]: ...
def shear_json(
    config: PathLike,
    backend: str = "auto",
    adapter: Optional[str] = None,
    out: Optional[PathLike] = None,
    particles: Optional[int] = None,
    progress: bool = True,
    overwrite: bool = False,
    specimen: Optional[PathLike] = None,
    gpu_path: str = "auto",
    pairs: str = "auto",
    overrides: Optional[Dict[str, object]] = None,
    resume: bool = False,
) -> Tuple[str, str, Optional[str]]: ...
def cell_json(
    config: PathLike,
    backend: str = "auto",
    out: Optional[PathLike] = None,
    progress: bool = True,
    overwrite: bool = False,
    overrides: Optional[Dict[str, object]] = None,
    resume: bool = False,
    specimen: Optional[PathLike] = None,
) -> Tuple[str, str, Optional[str]]: ...
def contact_json(
    case: PathLike,
    backend: str = "cpu",
    adapter: Optional[str] = None,
    out: Optional[PathLike] = None,
    overwrite: bool = False,
    overrides: Optional[Dict[str, object]] = None,
) -> Tuple[str, str, Optional[str]]: ...
def member_input(job: str, config: PathLike, overrides: Optional[Dict[str, object]] = None) -> str: ...
def adapters() -> List[Dict[str, object]]: ...
