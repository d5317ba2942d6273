//! `wgdem.Simulation`: a scene stepped on the GPU engine or the CPU reference, its state read
//! as NumPy arrays and steered between batches (particle velocities, wall velocities).
//!
//! The GPU engine keeps the particles on the device: stepping copies back only the walls,
//! their forces, time and counts, and the particle arrays are read back when Python first
//! asks for one after a step (`Session::sync`). Forces and contacts are read back on their
//! own, as they cost more. Every array handed to Python is a fresh copy.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, TryLockError};

use glam::DVec3;
use numpy::ndarray::{Array1, Array2};
use numpy::{AllowTypeChange, PyArray1, PyArray2, PyArrayLike1, PyArrayLike2};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use wgdem_core::checkpoint::{self, Kind};
use wgdem_core::runner::{Backend, step_count};
use wgdem_core::snapshot::{BodyA, ContactRecord, Snapshot};
use wgdem_gpu::GpuOptions;

use crate::args::{MaterialRef, WallRef, box_corners, material_index, vector, vectors, wall_index};
use crate::errors::{bad_argument, to_py};
use crate::scene::Scene;
use crate::session::{Engine, FORMAT, Looks, Saved, Session, step_session, upload_velocities};

/// A scene stepped on the GPU engine (`backend="gpu"`) or the f64 CPU reference
/// (`backend="cpu"`), or the one `backend="auto"` (the default) takes: the CPU reference where
/// the GPU adapter is a software one (lavapipe) and the scene has fewer than 10 000 spheres
/// (100 000 in a periodic cell), the GPU engine otherwise (`sim.backend` says which); its state read as NumPy arrays (SI units,
/// rows by sphere id) and steered between calls to `step`.
///
/// One thread at a time: a call from a second thread while another is inside one (a `step`
/// runs without the GIL) raises `EngineError` at once rather than waiting or corrupting it.
#[pyclass(module = "wgdem._wgdem", frozen)]
pub struct Simulation {
    session: Mutex<Session>,
}

fn array3<'py>(py: Python<'py>, rows: impl Iterator<Item = DVec3>) -> Bound<'py, PyArray2<f64>> {
    let rows: Vec<DVec3> = rows.collect();
    let array = Array2::from_shape_fn((rows.len(), 3), |(i, k)| rows[i][k]);
    PyArray2::from_owned_array(py, array)
}

fn array1<'py, T: numpy::Element>(py: Python<'py>, values: Vec<T>) -> Bound<'py, PyArray1<T>> {
    PyArray1::from_owned_array(py, Array1::from_vec(values))
}

/// Contact records as a dict of arrays; `first` names and gives body A's column.
fn contact_dict<'py>(
    py: Python<'py>,
    records: &[&ContactRecord],
    first: (&str, Vec<i64>),
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(first.0, array1(py, first.1))?;
    d.set_item(
        "particle",
        array1(py, records.iter().map(|c| i64::from(c.b)).collect()),
    )?;
    d.set_item("point", array3(py, records.iter().map(|c| c.point)))?;
    d.set_item("normal", array3(py, records.iter().map(|c| c.normal)))?;
    d.set_item(
        "overlap",
        array1(py, records.iter().map(|c| c.overlap).collect()),
    )?;
    d.set_item(
        "normal_force",
        array3(py, records.iter().map(|c| c.normal_force)),
    )?;
    d.set_item(
        "tangential_force",
        array3(py, records.iter().map(|c| c.tangential_force)),
    )?;
    d.set_item(
        "sliding",
        array1(py, records.iter().map(|c| c.sliding).collect()),
    )?;
    Ok(d)
}

impl Simulation {
    /// The session, or an `EngineError` where another thread is inside a call on it.
    pub(crate) fn lock(&self) -> PyResult<MutexGuard<'_, Session>> {
        self.session.try_lock().map_err(|e| match e {
            TryLockError::WouldBlock => crate::errors::EngineError::new_err(
                "Simulation: another thread is inside a call on this simulation (a step runs without the GIL); use each Simulation from one thread at a time",
            ),
            TryLockError::Poisoned(_) => crate::errors::EngineError::new_err(
                "Simulation: an earlier call failed inside the engine and left its state unknown; build a new Simulation",
            ),
        })
    }
}

#[pymethods]
impl Simulation {
    /// A simulation of `scene` at time 0 on `backend` ("gpu" or "cpu"); `adapter` picks a GPU
    /// by (part of) its name, as `--adapter` does; `gpu_path` ("auto", "general" or
    /// "single-workgroup", as `--gpu-path`) how the GPU engine records its steps, `pairs`
    /// ("auto", "once" or "both", as `--pairs`) how it evaluates a pair (the same bits every
    /// way). Raises `EngineError` when no GPU adapter can be used (with what to install),
    /// `ConfigError` for an unknown backend, GPU path or way to evaluate pairs.
    #[new]
    #[pyo3(signature = (scene, backend = "auto", adapter = None, gpu_path = "auto", pairs = "auto"))]
    fn new(
        py: Python<'_>,
        scene: &Scene,
        backend: &str,
        adapter: Option<&str>,
        gpu_path: &str,
        pairs: &str,
    ) -> PyResult<Self> {
        let options = crate::errors::gpu_options("Simulation", gpu_path, pairs)?;
        let input_toml = scene.input_toml()?;
        let sim = scene.scene.simulation.clone();
        let source = scene.scene.source.clone();
        let looks = Looks::of(&scene.scene);
        let session =
            py.detach(|| Session::new(sim, backend, adapter, options, input_toml, source, looks))?;
        Ok(Self {
            session: Mutex::new(session),
        })
    }

    /// Advances `n` steps. The GIL is released meanwhile; Ctrl-C stops it at the next
    /// engine call (at most about a second) with `KeyboardInterrupt`, the simulation left
    /// usable at the step it reached. Raises `BlowUpError` when spheres leave every state a
    /// granular run reaches (see `simulation.max_speed`).
    fn step(&self, py: Python<'_>, n: i64) -> PyResult<()> {
        let Ok(steps) = u64::try_from(n) else {
            return Err(bad_argument(
                "Simulation.step",
                "n",
                format!("{n} is negative"),
            ));
        };
        step_session(py, &mut *self.lock()?, steps)
    }

    /// Advances to simulated time `until` (s): the steps that reach it, the last one possibly
    /// ending past it. `until` before the current time is a `ConfigError`.
    fn run(&self, py: Python<'_>, until: f64) -> PyResult<()> {
        let mut session = self.lock()?;
        let s = &session.sim;
        let now = wgdem_core::output::step_time(s.steps, s.dt);
        if !until.is_finite() || until < now {
            return Err(bad_argument(
                "Simulation.run",
                "until",
                format!("{until} s is not a time at or after the current one, {now} s"),
            ));
        }
        let steps = step_count(until - now, s.dt);
        step_session(py, &mut session, steps)
    }

    /// Sorts the particles in the GPU's memory by cell (Morton order) at the next step, as the
    /// engine does every 2 000 steps, for memory locality after a large rearrangement; the
    /// CPU reference ignores it. Results stay reproducible for the same sequence of calls, but
    /// differ in the last bits from a run reordered on another schedule (the order of the
    /// force sums changes).
    fn reorder(&self) -> PyResult<()> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        if let Engine::Gpu(gpu) = &mut session.engine {
            gpu.engine.reorder_next_batch();
        }
        Ok(())
    }

    /// Simulated time (s): `steps × dt`, rounded to 12 significant digits as every output's
    /// `time_s` (so that after `run(until=0.05)` with a `dt` that divides 0.05 it is 0.05).
    #[getter]
    fn time(&self) -> PyResult<f64> {
        let s = &self.lock()?.sim;
        Ok(wgdem_core::output::step_time(s.steps, s.dt))
    }

    /// Time step (s).
    #[getter]
    fn dt(&self) -> PyResult<f64> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        Ok(session.sim.dt)
    }

    /// Steps taken.
    #[getter]
    fn steps(&self) -> PyResult<u64> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        Ok(session.sim.steps)
    }

    /// Number of spheres.
    #[getter]
    fn n_particles(&self) -> PyResult<usize> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        Ok(session.sim.particles.len())
    }

    /// "gpu" or "cpu".
    #[getter]
    fn backend(&self) -> PyResult<&'static str> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        Ok(session.backend())
    }

    /// The GPU adapter that runs the steps (None on the CPU).
    #[getter]
    fn adapter(&self) -> PyResult<Option<String>> {
        Ok(match &self.lock()?.engine {
            Engine::Cpu => None,
            Engine::Gpu(gpu) => Some(gpu.adapter.clone()),
        })
    }

    /// Stable sphere ids, 0 … N−1 (the row order of every particle array), int64 (N,).
    fn ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        Ok(array1(
            py,
            (0..session.sim.particles.len() as i64).collect(),
        ))
    }

    /// Each sphere's id in the packing file it was read from (a LAMMPS atom id; the
    /// `source_id` of every output), −1 for a sphere the scene generated, int64 (N,).
    fn source_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let session = self.lock()?;
        let n = session.sim.particles.len();
        Ok(array1(
            py,
            (0..n).map(|i| session.sim.source_id_of(i)).collect(),
        ))
    }

    /// Centres (m), float64 (N, 3).
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        session.sync()?;
        Ok(array3(py, session.sim.particles.position.iter().copied()))
    }

    /// Velocities (m/s), float64 (N, 3): those of the half step after the last one
    /// (leapfrog), which the next step's positions advance with.
    fn velocities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        session.sync()?;
        Ok(array3(py, session.sim.particles.velocity.iter().copied()))
    }

    /// Angular velocities (rad/s), float64 (N, 3).
    fn angular_velocities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        session.sync()?;
        let p = &session.sim.particles;
        Ok(array3(py, p.angular_velocity.iter().copied()))
    }

    /// Radii (m), float64 (N,).
    fn radii<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        Ok(array1(py, session.sim.particles.radius.clone()))
    }

    /// Masses (kg), float64 (N,).
    fn masses<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        Ok(array1(py, session.sim.particles.mass.clone()))
    }

    /// Material index of each sphere into `Scene.materials`, int64 (N,).
    fn materials<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        Ok({
            let m = &session.sim.particles.material;
            array1(py, m.iter().map(|&m| m as i64).collect())
        })
    }

    /// Total force on each sphere in the last step (N): gravity, contacts and applied
    /// loads, float64 (N, 3). Before the first step, those of the initial state.
    fn forces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        session.sync_forces()?;
        Ok(array3(py, session.sim.particles.force.iter().copied()))
    }

    /// Total torque on each sphere in the last step (N·m), float64 (N, 3).
    fn torques<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        session.sync_forces()?;
        Ok(array3(py, session.sim.particles.torque.iter().copied()))
    }

    /// Sets every sphere's velocity (m/s) from a float64 (N, 3) array, from the next step on;
    /// positions and contact history are kept.
    fn set_velocities(&self, velocities: PyArrayLike2<'_, f64, AllowTypeChange>) -> PyResult<()> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        let n = session.sim.particles.len();
        let v = vectors("Simulation.set_velocities", "velocities", &velocities, n)?;
        session.sync()?;
        session.sim.particles.velocity = v;
        upload_velocities(session)
    }

    /// Sets every sphere's angular velocity (rad/s) from a float64 (N, 3) array.
    fn set_angular_velocities(
        &self,
        angular_velocities: PyArrayLike2<'_, f64, AllowTypeChange>,
    ) -> PyResult<()> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        let n = session.sim.particles.len();
        let w = vectors(
            "Simulation.set_angular_velocities",
            "angular_velocities",
            &angular_velocities,
            n,
        )?;
        session.sync()?;
        session.sim.particles.angular_velocity = w;
        upload_velocities(session)
    }

    /// Every touching sphere–sphere contact of the current state, as a dict of arrays (M
    /// rows): `other` and `particle` (the pair's stable ids, other < particle), `point` (m),
    /// `normal` (unit, from `other` to `particle`), `overlap` (m), `normal_force` and
    /// `tangential_force` (N, on `particle`), `sliding` (bool, at the Coulomb limit).
    fn contacts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        let all = session.contacts()?;
        let (pairs, ids): (Vec<&ContactRecord>, Vec<i64>) = all
            .iter()
            .filter_map(|c| match c.a {
                BodyA::Particle(i) => Some((c, i64::from(i))),
                BodyA::Wall(_) => None,
            })
            .unzip();
        contact_dict(py, &pairs, ("other", ids))
    }

    /// Every touching sphere–wall contact, as `contacts` gives them with `wall` (the wall's
    /// index) in place of `other`; the normal points from the wall to the sphere.
    fn wall_contacts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        let all = session.contacts()?;
        let (touching, walls): (Vec<&ContactRecord>, Vec<i64>) = all
            .iter()
            .filter_map(|c| match c.a {
                BodyA::Wall(w) => Some((c, i64::from(w))),
                BodyA::Particle(_) => None,
            })
            .unzip();
        contact_dict(py, &touching, ("wall", walls))
    }

    /// Wall names, in scene order.
    #[getter]
    fn walls(&self) -> PyResult<Vec<String>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        Ok(session.sim.walls.iter().map(|w| w.name.clone()).collect())
    }

    /// Each wall's reference point (m): a plane's point, a plate's centre; float64 (W, 3).
    fn wall_positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        Ok(array3(
            py,
            session.sim.walls.iter().map(|w| w.reference_point()),
        ))
    }

    /// Wall velocities (m/s), float64 (W, 3).
    fn wall_velocities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        Ok(array3(py, session.sim.walls.iter().map(|w| w.velocity)))
    }

    /// Force the spheres exert on each wall in the last step (N), float64 (W, 3).
    fn wall_forces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        Ok(array3(py, session.sim.walls.iter().map(|w| w.force)))
    }

    /// Torque on each wall about its reference point in the last step (N·m), float64 (W, 3).
    fn wall_torques<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        Ok(array3(py, session.sim.walls.iter().map(|w| w.torque)))
    }

    /// Sets wall `wall`'s velocity (m/s, 3 numbers: a list, tuple or array) from the next step
    /// on: a servo or a loading programme written in Python. `wall` is its index or its name.
    /// A wall with a `velocity_schedule` is refused.
    fn set_wall_velocity(
        &self,
        wall: WallRef,
        velocity: PyArrayLike1<'_, f64, AllowTypeChange>,
    ) -> PyResult<()> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        let what = "Simulation.set_wall_velocity";
        let wall = wall_index(session, what, &wall)?;
        let v = vector(what, "velocity", &velocity, "m/s")?;
        if session
            .sim
            .wall_schedules
            .get(wall)
            .is_some_and(Option::is_some)
        {
            return Err(bad_argument(
                what,
                "wall",
                format!(
                    "wall {wall} (\"{}\") follows its velocity_schedule; remove the schedule from the scene to steer it",
                    session.sim.walls[wall].name
                ),
            ));
        }
        session.sim.walls[wall].velocity = v;
        if let Engine::Gpu(gpu) = &mut session.engine {
            gpu.engine.set_wall_velocity(wall, v);
        }
        Ok(())
    }

    /// Holds wall `wall` (index or name; a plate or a plane) at the normal stress `stress`
    /// (Pa, compression positive) over `area` (m²; a plate's own area by default, required
    /// for a plane) from the next step on, through every later `step` and `run`, with the
    /// shear test's servo (docs/shear.md): every `interval` steps the wall's velocity along its
    /// normal is set to `v = G (F − σA) + I`, `G = gain / (k T)`, `k` the stiffness of
    /// `A / (2R)²` contacts of the wall with the spheres at the target (R their mean radius),
    /// `T` the interval's time, `I` an integral term, `|v| ≤ 0.01 d / T`. On the GPU the new
    /// velocity applies from the next batch, as in the shear test. `stress=None` releases
    /// the wall (it stops). Calling it again for the same wall sets a new target.
    #[pyo3(signature = (wall, stress, area = None, gain = 0.5, interval = 20))]
    fn servo(
        &self,
        wall: WallRef,
        stress: Option<f64>,
        area: Option<f64>,
        gain: f64,
        interval: i64,
    ) -> PyResult<()> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        let what = "Simulation.servo";
        let w = wall_index(session, what, &wall)?;
        let interval = u64::from(crate::errors::count(what, "interval", interval)?);
        if interval == 0 {
            return Err(bad_argument(
                what,
                "interval",
                "0 steps; give at least 1 (20 is the shear test's)",
            ));
        }
        if session
            .sim
            .wall_schedules
            .get(w)
            .is_some_and(Option::is_some)
        {
            return Err(bad_argument(
                what,
                "wall",
                format!(
                    "wall {w} (\"{}\") follows its velocity_schedule; remove the schedule from the scene to hold it at a stress",
                    session.sim.walls[w].name
                ),
            ));
        }
        if stress.is_some()
            && session.cell_control.is_some()
            && matches!(session.engine, Engine::Gpu(_))
        {
            return Err(bad_argument(
                what,
                "stress",
                "a wall servo beside the cell's servo (control_cell) runs on the CPU reference; make the Simulation with backend=\"cpu\", or release the cell's servo first (control_cell())",
            ));
        }
        session.servos.retain(|s| s.wall != w);
        let Some(stress) = stress else {
            session.sim.walls[w].velocity = DVec3::ZERO;
            if let Engine::Gpu(gpu) = &mut session.engine {
                gpu.engine.set_wall_velocity(w, DVec3::ZERO);
                if session.servos.is_empty() {
                    // Back to the engine's own batches from the servo's intervals (the same
                    // bits either way; fewer dispatches).
                    gpu.engine
                        .set_batch_steps(GpuOptions::default().batch_steps);
                }
            }
            return Ok(());
        };
        let servo = crate::servo::wall_servo(session, w, stress, area, gain, interval)?;
        session.servos.push(servo);
        session.servo_interval = interval;
        Ok(())
    }

    /// Void ratio of the axis-aligned box `box = [[x0, y0, z0], [x1, y1, z1]]` (m): `e = (V −
    /// V_s) / V_s` with `V_s` the spheres' volume inside it (a sphere the box's faces cut
    /// counts its part inside, to 10⁻³ of its volume), overlaps not subtracted. A box with no
    /// solid inside gives infinity.
    fn void_ratio(&self, r#box: PyArrayLike2<'_, f64, AllowTypeChange>) -> PyResult<f64> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        let (lo, hi) = box_corners("Simulation.void_ratio", &r#box)?;
        session.sync()?;
        let solid = wgdem_core::analysis::solid_volume_in(&session.sim.particles, lo, hi);
        let d = hi - lo;
        Ok((d.x * d.y * d.z - solid) / solid)
    }

    /// Mean stress tensor (Pa, compression positive) in the axis-aligned box `box = [[x0, y0,
    /// z0], [x1, y1, z1]]` (m): Love–Weber over the spheres whose centres lie inside,
    /// `σ = −(1/V) Σ_p Σ_c f_c ⊗ r_c` (their contacts' forces `f_c` and the vectors `r_c` from
    /// their centres to the contact points, walls' contacts included), float64 (3, 3).
    fn stress<'py>(
        &self,
        py: Python<'py>,
        r#box: PyArrayLike2<'_, f64, AllowTypeChange>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        let (lo, hi) = box_corners("Simulation.stress", &r#box)?;
        let all = session.contacts()?;
        let s = wgdem_core::snapshot::box_stress(&session.sim, &all, lo, hi);
        Ok(array3(py, (0..3).map(|row| s.row(row))))
    }

    /// Kinetic energy (J) as `(translational, rotational)`: Σ ½ m v² and Σ ½ I ω² over the
    /// spheres (`timeseries.csv`'s `kinetic_energy_J` is their sum).
    fn kinetic_energy(&self) -> PyResult<(f64, f64)> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        session.sync()?;
        let p = &session.sim.particles;
        let (mut translational, mut rotational) = (0.0, 0.0);
        for i in 0..p.len() {
            translational += 0.5 * p.mass[i] * p.velocity[i].length_squared();
            rotational += 0.5 * p.inertia[i] * p.angular_velocity[i].length_squared();
        }
        Ok((translational, rotational))
    }

    /// Body acceleration (m/s²), float64 (3,); settable (3 finite numbers) between steps on
    /// both engines, the contacts' history kept.
    #[getter]
    fn gravity<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let g = self.lock()?.sim.gravity;
        Ok(array1(py, g.to_array().to_vec()))
    }

    #[setter]
    fn set_gravity(&self, gravity: PyArrayLike1<'_, f64, AllowTypeChange>) -> PyResult<()> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        session.sim.gravity = vector("Simulation.gravity", "gravity", &gravity, "m/s²")?;
        session.update_gravity_and_damping();
        Ok(())
    }

    /// The periodic cell's edge vectors a, b, c as rows (m), float64 (3, 3); `None` where the
    /// scene has no `[cell]`. They change as the cell deforms.
    #[getter]
    fn cell_edges<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
        let session = self.lock()?;
        Ok(session
            .sim
            .cell()
            .map(|c| array3(py, c.edges().into_iter())))
    }

    /// The periodic cell's volume (m³), `None` without a cell.
    #[getter]
    fn cell_volume(&self) -> PyResult<Option<f64>> {
        Ok(self.lock()?.sim.cell().map(|c| c.volume()))
    }

    /// The periodic cell's velocity gradient `L` by rows, `L[i, j] = ∂v_i/∂x_j` (1/s), float64
    /// (3, 3); `None` without a cell. Settable between steps (3 × 3 finite numbers): the cell
    /// deforms as `dH/dt = L H` from the next step on, e.g. from a servo written in Python.
    #[getter]
    fn velocity_gradient<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
        let session = self.lock()?;
        Ok(session.sim.cell().map(|c| {
            let l = c.velocity_gradient();
            array3(py, (0..3).map(|row| l.row(row)))
        }))
    }

    #[setter]
    fn set_velocity_gradient(&self, l: PyArrayLike2<'_, f64, AllowTypeChange>) -> PyResult<()> {
        let what = "Simulation.velocity_gradient";
        let rows = vectors(what, "velocity_gradient", &l, 3)?;
        let l = glam::DMat3::from_cols(rows[0], rows[1], rows[2]).transpose();
        self.lock()?
            .sim
            .set_velocity_gradient(l)
            .map_err(|e| bad_argument(what, "velocity_gradient", e))
    }

    /// Drives the periodic cell through every later `step` and `run`, component by component
    /// of its velocity gradient `L` (`wgdem_core::cell_servo`): where `stress[i, j]` is a
    /// number (Pa, compression positive), `L[i, j]` holds that stress (its symmetric part for a
    /// shear component) at a rate of at most `max_rate` (1/s), in proportion to the error
    /// inside a band of `band × reference` (Pa; `reference` defaults to the largest target);
    /// elsewhere (`nan`, or no `stress`) `L[i, j] = rate[i, j]` (1/s, default 0). Set from
    /// the last step's stress before the next step and every `interval` steps after it
    /// (default 1: every step). On the GPU engine each interval is one batch whose stress the
    /// device sums, a round trip to the device: `interval=10` (as `wgdem cell`) is several
    /// times faster than 1 there. A drained triaxial compression along x:
    /// `rate=[[-0.01, 0, 0], [0, 0, 0], [0, 0, 0]]` with `stress` 1e5 at `[1, 1]` and `[2, 2]`
    /// and `nan` elsewhere. `control_cell()` with neither releases the cell (`L` = 0).
    /// The stress answers the cell's strain only after a wave has crossed it, so too fast a
    /// servo rings: a 300-sphere packing at 50 kPa held steady at 0.1 /s and swung by 30 % at
    /// 0.2 /s (python/examples/periodic_triaxial.py); raise `max_rate` for a dilute gas only.
    #[pyo3(signature = (rate = None, stress = None, max_rate = 0.1, band = 0.05, reference = None, interval = 1))]
    #[allow(clippy::too_many_arguments)]
    fn control_cell(
        &self,
        rate: Option<PyArrayLike2<'_, f64, AllowTypeChange>>,
        stress: Option<PyArrayLike2<'_, f64, AllowTypeChange>>,
        max_rate: f64,
        band: f64,
        reference: Option<f64>,
        interval: i64,
    ) -> PyResult<()> {
        use wgdem_core::cell_servo::{CellServo, Mode};
        let what = "Simulation.control_cell";
        let mut guard = self.lock()?;
        let session = &mut *guard;
        if session.sim.cell().is_none() {
            return Err(bad_argument(
                what,
                "rate",
                "the scene has no periodic cell ([cell]) to control",
            ));
        }
        let Some(interval) = u64::try_from(interval).ok().filter(|&k| k >= 1) else {
            return Err(bad_argument(
                what,
                "interval",
                format!("is {interval}; it must be at least 1 (steps between the servo's updates)"),
            ));
        };
        if (rate.is_some() || stress.is_some())
            && !session.servos.is_empty()
            && matches!(session.engine, Engine::Gpu(_))
        {
            return Err(bad_argument(
                what,
                "stress",
                "the cell's servo beside wall servos (servo) runs on the CPU reference; make the Simulation with backend=\"cpu\", or release the walls first (servo(wall, None))",
            ));
        }
        if rate.is_none() && stress.is_none() {
            session.cell_control = None;
            return session
                .sim
                .set_velocity_gradient(glam::DMat3::ZERO)
                .map_err(|e| bad_argument(what, "rate", e));
        }
        let matrix = |field: &str, a: &PyArrayLike2<'_, f64, AllowTypeChange>| {
            let a = a.as_array();
            if a.shape() != [3, 3] {
                return Err(bad_argument(
                    what,
                    field,
                    format!("has shape {:?}; it must be (3, 3)", a.shape()),
                ));
            }
            Ok([0, 1, 2].map(|i| [0, 1, 2].map(|j| a[[i, j]])))
        };
        let rates = match &rate {
            Some(r) => matrix("rate", r)?,
            None => [[0.0; 3]; 3],
        };
        let targets = match &stress {
            Some(s) => matrix("stress", s)?,
            None => [[f64::NAN; 3]; 3],
        };
        let mut modes = [[Mode::Rate(0.0); 3]; 3];
        let mut largest = 0.0f64;
        for i in 0..3 {
            for j in 0..3 {
                let (r, t) = (rates[i][j], targets[i][j]);
                modes[i][j] = if t.is_nan() {
                    if !r.is_finite() {
                        return Err(bad_argument(
                            what,
                            "rate",
                            format!("[{i}, {j}] = {r} must be finite (1/s)"),
                        ));
                    }
                    Mode::Rate(r)
                } else {
                    if !t.is_finite() {
                        return Err(bad_argument(
                            what,
                            "stress",
                            format!("[{i}, {j}] = {t} must be finite (Pa) or nan (not held)"),
                        ));
                    }
                    largest = largest.max(t.abs());
                    Mode::Stress(t)
                };
            }
        }
        let servo = CellServo {
            max_rate,
            band,
            reference: reference.unwrap_or(if largest > 0.0 { largest } else { 1.0 }),
        };
        servo.check().map_err(|e| {
            let field = e.split(' ').next().unwrap_or("max_rate").to_owned();
            bad_argument(what, &field, e)
        })?;
        session.cell_control = Some(crate::session::CellControl {
            servo,
            modes,
            interval,
            since: session.sim.steps,
        });
        Ok(())
    }

    /// The periodic cell's average stress in the last step (Pa, compression positive, as
    /// `stress(box)`), Love–Weber's `σ[i, j] = (1/V) (Σ_c f_i l_j + Σ_p m v'_i v'_j)` over all
    /// its contacts and spheres, float64 (3, 3); `None` without a cell (docs/outputs.md).
    fn cell_stress<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        // On the GPU the contact sums and velocities arrive with the particles.
        session.sync()?;
        Ok(session
            .sim
            .stress()
            .map(|s| array3(py, (0..3).map(|row| s.row(row)))))
    }

    /// Centres unwrapped (m), float64 (N, 3): in a periodic cell where each sphere would be had
    /// it not been moved back into the cell since the scene started; the centres otherwise.
    fn unwrapped_positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        session.sync()?;
        let sim = &session.sim;
        Ok(array3(
            py,
            (0..sim.particles.len()).map(|i| sim.unwrapped_position(i)),
        ))
    }

    /// Cundall's local damping α in [0, 1) (`simulation.local_damping`); settable between
    /// steps on both engines (e.g. 0.7 to settle, then 0), the contacts' history kept.
    #[getter]
    fn local_damping(&self) -> PyResult<f64> {
        Ok(self.lock()?.sim.local_damping)
    }

    #[setter]
    fn set_local_damping(&self, alpha: f64) -> PyResult<()> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        if !(0.0..1.0).contains(&alpha) {
            return Err(bad_argument(
                "Simulation.local_damping",
                "local_damping",
                format!("{alpha} is outside [0, 1); 0 is none, 0.7 the usual for settling"),
            ));
        }
        session.sim.local_damping = alpha;
        session.update_gravity_and_damping();
        Ok(())
    }

    /// The friction coefficient of contacts between materials `a` and `b` (names or indices
    /// into `Scene.materials`; a wall's material counts as any other).
    fn friction(&self, a: MaterialRef, b: MaterialRef) -> PyResult<f64> {
        let session = self.lock()?;
        let what = "Simulation.friction";
        let a = material_index(&session, what, "a", &a)?;
        let b = material_index(&session, what, "b", &b)?;
        Ok(session.sim.pair(a, b).friction())
    }

    /// Sets the friction coefficient μ ≥ 0 of contacts between materials `a` and `b` (names
    /// or indices; both orders) from the next step on, on both engines, the contacts' history
    /// kept: a tangential force above the new Coulomb limit slides back to it at its next
    /// step, as after any change of normal force.
    fn set_friction(&self, a: MaterialRef, b: MaterialRef, friction: f64) -> PyResult<()> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        let what = "Simulation.set_friction";
        let a = material_index(session, what, "a", &a)?;
        let b = material_index(session, what, "b", &b)?;
        if !(friction.is_finite() && friction >= 0.0) {
            return Err(bad_argument(
                what,
                "friction",
                format!("{friction} must be a finite number ≥ 0"),
            ));
        }
        let n = session.sim.n_materials();
        let mut table: Vec<_> = (0..n * n)
            .map(|k| *session.sim.pair(k / n, k % n))
            .collect();
        for (i, j) in [(a, b), (b, a)] {
            table[i * n + j] = table[i * n + j].with_friction(friction);
        }
        session.sync()?;
        session.sim.set_pair_params(table);
        let sim = &session.sim;
        match &mut session.engine {
            Engine::Cpu => Ok(()),
            Engine::Gpu(gpu) => gpu.update_pair_params(sim).map_err(to_py),
        }
    }

    /// Writes the spheres to `path` (atomically): `format="csv"`, the particle CSV of
    /// `wgdem run` (id, position, velocity, angular velocity, radius, material, force and
    /// torque of the last step; docs/outputs.md), or `"lammps-dump"`, one frame of a LAMMPS
    /// dump (`id type x y z vx vy vz fx fy fz omegax omegay omegaz radius source_id`, ids from
    /// 1, types the material index plus one) that OVITO and LIGGGHTS's `read_dump` read.
    #[pyo3(signature = (path, format = "csv"))]
    fn write_particles(&self, py: Python<'_>, path: PathBuf, format: &str) -> PyResult<()> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        let write = match format {
            "csv" => wgdem_core::output::write_particles,
            "lammps-dump" => wgdem_io::write_lammps_dump,
            other => {
                return Err(bad_argument(
                    "Simulation.write_particles",
                    "format",
                    format!("{other:?} is not a format; use \"csv\" or \"lammps-dump\""),
                ));
            }
        };
        session.sync_forces()?;
        let sim = &session.sim;
        py.detach(|| write(&path, sim)).map_err(to_py)
    }

    /// Writes a ParaView snapshot of the current state in directory `out` (created if
    /// missing): `particles.vtu`, `contacts.vtu` and, with walls or a periodic cell,
    /// `walls.vtu` or `cell.vtu` (`[output]`'s
    /// content), the arrays of `wgdem run`'s snapshots (docs/outputs.md); returns the paths
    /// written. `wgdem.Series` writes a time series of them.
    fn write_vtk(&self, py: Python<'_>, out: PathBuf) -> PyResult<Vec<PathBuf>> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        std::fs::create_dir_all(&out).map_err(|e| to_py(wgdem_core::Error::io(&out, e)))?;
        let files = Snapshot {
            step: session.sim.steps,
            time: wgdem_core::output::step_time(session.sim.steps, session.sim.dt),
            particles: "particles.vtu".to_owned(),
            contacts: session
                .looks
                .content
                .contacts
                .then(|| "contacts.vtu".to_owned()),
            walls: (session.looks.content.walls && !session.sim.walls.is_empty())
                .then(|| "walls.vtu".to_owned()),
            cell: (session.looks.content.walls && session.sim.cell().is_some())
                .then(|| "cell.vtu".to_owned()),
        };
        py.detach(|| session.snapshot(&out, &files))?;
        let written = [
            Some(&files.particles),
            files.contacts.as_ref(),
            files.walls.as_ref(),
            files.cell.as_ref(),
        ];
        Ok(written.into_iter().flatten().map(|f| out.join(f)).collect())
    }

    /// Writes the whole state to `path` (atomically): restoring it with
    /// `Simulation.restore(path)` continues to the same bits as this simulation would.
    fn checkpoint(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        let bytes = session.save()?;
        py.detach(|| wgdem_core::output::atomic_write(&path, &bytes))
            .map_err(to_py)
    }

    /// The simulation saved in `path` by `Simulation.checkpoint`, on the backend that saved
    /// it (a GPU state restores on a GPU; `adapter` picks one). The scene is rebuilt from the
    /// copy the checkpoint holds (packing files must still be where they were). A damaged
    /// file, or one that is not such a checkpoint, is a `ConfigError` saying which. `gpu_path`
    /// and `pairs` as for a new simulation (the same bits every way).
    #[staticmethod]
    #[pyo3(signature = (path, adapter = None, gpu_path = "auto", pairs = "auto"))]
    fn restore(
        py: Python<'_>,
        path: PathBuf,
        adapter: Option<&str>,
        gpu_path: &str,
        pairs: &str,
    ) -> PyResult<Self> {
        let options = crate::errors::gpu_options("Simulation.restore", gpu_path, pairs)?;
        let again = "start the simulation again from its scene";
        let bytes = std::fs::read(&path).map_err(|e| to_py(wgdem_core::Error::io(&path, e)))?;
        let payload = checkpoint::open_any_input(&path, &bytes, Kind::Simulation, FORMAT, again)
            .map_err(to_py)?;
        let refuse = |message: String| {
            to_py(wgdem_core::Error::invalid(
                &path.display().to_string(),
                "resume",
                message,
            ))
        };
        let saved: Saved = postcard::from_bytes(payload)
            .map_err(|e| refuse(format!("not a readable saved simulation ({e}); {again}")))?;
        if !checkpoint::written_for(&bytes, &saved.input_toml) {
            return Err(refuse(format!(
                "its scene does not match its input hash; {again}"
            )));
        }
        let scene = Scene::build(&saved.input_toml, &saved.source)?;
        let mut sim = scene.scene.simulation.clone();
        sim.restore(saved.sim);
        let looks = Looks::of(&scene.scene);
        py.detach(|| {
            let mut session = Session::new(
                sim,
                &saved.backend,
                adapter,
                options,
                saved.input_toml,
                saved.source,
                looks,
            )?;
            if let Engine::Gpu(gpu) = &mut session.engine {
                gpu.restore_state(&session.sim, &saved.engine)
                    .map_err(to_py)?;
            }
            // The saved particles hold the last step's forces.
            session.forces_at = Some(session.sim.steps);
            Ok(Self {
                session: Mutex::new(session),
            })
        })
    }

    fn __repr__(&self) -> PyResult<String> {
        let mut guard = self.lock()?;
        let session = &mut *guard;
        Ok({
            let s = &session.sim;
            format!(
                "Simulation({} spheres, {} walls on {}, step {}, t = {:e} s)",
                s.particles.len(),
                s.walls.len(),
                session.backend(),
                s.steps,
                s.time
            )
        })
    }
}
