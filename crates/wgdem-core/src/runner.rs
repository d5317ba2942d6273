//! Runs a built scene to its end time on a [`Backend`], writing outputs at each output
//! interval.

use std::path::Path;
use std::time::Instant;

use glam::DVec3;
use serde::{Deserialize, Serialize};

pub use crate::backend::{Backend, CpuBackend, Readout, RowSums};
use crate::checkpoint;
use crate::error::{Error, Result};
use crate::output::{OutputDir, OutputLock, step_time};
use crate::provenance::Provenance;
use crate::scene::Scene;
use crate::snapshot::{Series, SnapshotWriter};

/// What a finished run reports (also written as `summary.json`; keys in `docs/outputs.md`).
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    /// Version, command line, input and seed.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// Number of particles.
    pub n_particles: usize,
    /// Backend that ran the steps.
    pub backend: String,
    /// GPU adapter, for the GPU backend.
    pub adapter: Option<String>,
    /// Device memory the GPU engine held at the end, per sphere (bytes); `null` on the CPU.
    pub gpu_bytes_per_particle: Option<f64>,
    /// Normal contact law of the scene (`[contact] law`).
    pub contact_law: String,
    /// Tangential history mode.
    pub history: String,
    /// Time step used (s).
    pub dt_s: f64,
    /// Critical time step estimate (s).
    pub critical_dt_s: f64,
    /// Steps taken.
    pub steps: u64,
    /// Simulated time (s).
    pub simulated_time_s: f64,
    /// Kinetic energy at the end (J).
    #[serde(rename = "final_kinetic_energy_J")]
    pub final_kinetic_energy_j: f64,
    /// Wall-clock time of the stepping (for the GPU, with the copies back at each output),
    /// writing outputs excluded (s).
    pub wall_clock_s: f64,
    /// Particle-steps per wall-clock second.
    pub particle_steps_per_s: f64,
    /// Neighbour-list builds since the run began: at the start, then wherever a sphere or a
    /// wall had moved half the skin (on the GPU also at each reorder by cell and each step
    /// repeated after a table was regrown).
    pub neighbour_builds: u64,
}

/// Progress after each output, and every [`progress_steps`] steps between outputs far apart:
/// steps done and the total.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Steps done.
    pub step: u64,
    /// Steps in the run.
    pub total: u64,
    /// Simulated time (s).
    pub time: f64,
    /// Kinetic energy (J).
    pub kinetic_energy: f64,
}

/// Number of steps to cover `duration` with steps of `dt` (the last one may end past it).
pub fn step_count(duration: f64, dt: f64) -> u64 {
    (duration / dt - 1e-9).ceil().max(0.0) as u64
}

/// Runs `scene` on the CPU reference (see [`run`]).
pub fn run_cpu(
    scene: &mut Scene,
    out: &mut OutputDir,
    vtk: Option<&dyn SnapshotWriter>,
    progress: impl FnMut(Progress),
) -> Result<RunSummary> {
    run(scene, &mut CpuBackend, out, vtk, progress)
}

/// Most steps between two progress reports of a run of `n` spheres whose rows lie further
/// apart: 5·10⁷ particle-steps, between 200 and 20 000 steps (a few seconds on lavapipe at
/// 10⁵ spheres, at most about half a minute there at 10⁶; well under a second for a few
/// spheres). A run of 3·10⁹ steps with a row at its end reported nothing for hours. The
/// engines' results do not depend on where a run's steps are split (resumed runs rely on it).
pub fn progress_steps(n: usize) -> u64 {
    (50_000_000 / n.max(1) as u64).clamp(200, 20_000)
}

/// Bytes per sphere of a particle CSV row (`particles/`), measured on a settled 10⁴-sphere
/// packing (207 B), rounded up.
pub const PARTICLE_CSV_BYTES_PER_SPHERE: f64 = 210.0;

/// Bytes per sphere of a ParaView snapshot with every field: `particles_NNNN.vtu` (348 B per
/// sphere) and `contacts_NNNN.vtu` (about 290 B per contact, three contacts per sphere in a
/// dense packing), measured on the same packing, rounded up.
pub const SNAPSHOT_BYTES_PER_SPHERE: f64 = 1250.0;

/// Outputs above this (bytes) are announced with a warning before a run starts.
pub const OUTPUT_WARNING_BYTES: f64 = 1e10;

/// What a run of a scene will write, estimated before it starts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutputEstimate {
    /// Rows of `timeseries.csv`, each with a particle CSV.
    pub rows: u64,
    /// ParaView snapshots.
    pub snapshots: u64,
    /// Bytes in all, about (particle CSVs and snapshots; the rest is small beside them).
    pub bytes: f64,
}

impl OutputEstimate {
    /// One line for `check` and the log: the total and where it comes from, with the keys
    /// that thin it out.
    pub fn describe(&self) -> String {
        format!(
            "about {:.3} GB: {} rows with a particle CSV each (simulation.output_interval), {} ParaView snapshots (output.vtk_interval)",
            self.bytes / 1e9,
            self.rows,
            self.snapshots
        )
    }
}

/// The outputs a run of `scene` writes from its start: a row (and particle CSV) every output
/// interval and a snapshot every `vtk_interval`, at the start and the end too.
pub fn output_estimate(scene: &Scene) -> OutputEstimate {
    let dt = scene.simulation.dt;
    let total = step_count(scene.duration, dt);
    let every = crate::scene::steps_per_output(scene.output_interval, dt);
    let rows = total / every + 2;
    let snapshots = vtk_every(scene).map_or(0, |k| total / k + 2);
    let n = scene.simulation.particles.len() as f64;
    OutputEstimate {
        rows,
        snapshots,
        bytes: n
            * (rows as f64 * PARTICLE_CSV_BYTES_PER_SPHERE
                + snapshots as f64 * SNAPSHOT_BYTES_PER_SPHERE),
    }
}

/// The checkpoint of a run, in its output directory.
pub const RUN_CHECKPOINT: &str = "checkpoint.bin";
/// Raised whenever the run checkpoint's meaning changes.
/// (3: in the checksummed envelope of [`checkpoint`], without the scene's text; 4: a GPU
/// engine's state holds the low parts of its velocities and radii; 5: the CPU reference's state
/// ends with its periodic cell, if any; 6: a snapshot names its cell file; 7: a GPU engine's
/// state holds the links of its pairs' slots and its lists put each particle's A sides first;
/// 8: a GPU engine's state holds no angular-velocity array, the inverse inertia travelling with
/// the positions of the last build.)
const RUN_CHECKPOINT_FORMAT: u32 = 8;

/// What `checkpoint.bin` of a run holds: enough to continue it to the same bits.
#[derive(Serialize, Deserialize)]
struct RunCheckpoint {
    backend: String,
    sim: crate::cpu::SimState,
    engine: Vec<u8>,
    done: u64,
    stepping: f64,
    series: Series,
    /// Particle CSVs written and bytes of `timeseries.csv`.
    output: (usize, u64),
}

/// Runs `scene` on `backend`, writing to `out` every output interval (and, through `vtk`,
/// ParaView snapshots every `[output] vtk_interval`, indexed by `vtk/run.pvd`) and calling
/// `progress` after each output. A checkpoint is written every `[output] checkpoint_rows`
/// rows, at least `checkpoint_seconds` apart ([`checkpoint::Pace`]), and at the end;
/// [`resume`] continues from it.
pub fn run(
    scene: &mut Scene,
    backend: &mut dyn Backend,
    out: &mut OutputDir,
    vtk: Option<&dyn SnapshotWriter>,
    mut progress: impl FnMut(Progress),
) -> Result<RunSummary> {
    run_stoppable(scene, backend, out, vtk, |p| {
        progress(p);
        Ok(())
    })
}

/// [`run`] with a `progress` that may stop the run: an error it returns ends the run there
/// (after the row, snapshot and checkpoint due at that step) and is returned.
pub fn run_stoppable(
    scene: &mut Scene,
    backend: &mut dyn Backend,
    out: &mut OutputDir,
    vtk: Option<&dyn SnapshotWriter>,
    progress: impl FnMut(Progress) -> Result<()>,
) -> Result<RunSummary> {
    let provenance = Provenance::new(
        &scene.source,
        &scene.config,
        Some(scene.config.simulation.seed),
    )?;
    provenance.write_input(out.dir())?;
    let sim = &mut scene.simulation;
    let reference = (
        sim.particles.position.clone(),
        sim.particles.orientation.clone(),
    );
    let mut state = RunProgress {
        done: 0,
        stepping: 0.0,
        series: Series::new("run"),
        reference,
    };
    // At t = 0 no force has been evaluated yet: evaluate one on a copy, so that history in the
    // real run is not advanced twice.
    let mut initial = sim.clone();
    initial.compute_forces();
    out.record(sim, &initial)?;
    if let Some(writer) = vtk.filter(|_| vtk_every(scene).is_some()) {
        std::fs::create_dir_all(out.dir().join("vtk")).map_err(|e| Error::io(out.dir(), e))?;
        let names = material_names(scene);
        let reference = (&state.reference.0[..], &state.reference.1[..]);
        state.series.take(
            writer,
            out.dir(),
            &mut initial,
            &mut CpuBackend,
            reference,
            &names,
            &scene.config.output.vtk,
        )?;
    }
    continue_run(scene, backend, out, vtk, progress, provenance, state)
}

/// Continues the run in `dir` from its checkpoint: `scene` must be the scene it ran (as
/// `input.toml` records it, so the same file with the same defaults) and `backend` of the same
/// kind, built from `scene`. Rows and snapshots written after the checkpoint are written
/// again; the results are those of an uninterrupted run, bit for bit. `progress` may stop the
/// run again, as for [`run_stoppable`].
pub fn resume(
    scene: &mut Scene,
    backend: &mut dyn Backend,
    dir: &Path,
    vtk: Option<&dyn SnapshotWriter>,
    progress: impl FnMut(Progress) -> Result<()>,
) -> Result<RunSummary> {
    let lock = OutputLock::take(dir)?;
    let path = dir.join(RUN_CHECKPOINT);
    let bytes = crate::output::read_checkpoint(&path, "run the scene again")?;
    let refuse = |message: String| Error::Invalid {
        file: path.display().to_string(),
        field: "resume".to_owned(),
        message,
    };
    let provenance = Provenance::new(
        &scene.source,
        &scene.config,
        Some(scene.config.simulation.seed),
    )?;
    let payload = checkpoint::open(
        &path,
        &bytes,
        checkpoint::Kind::Run,
        RUN_CHECKPOINT_FORMAT,
        &provenance.input_toml,
        "run the scene again",
    )?;
    let cp: RunCheckpoint = postcard::from_bytes(payload).map_err(|e| {
        refuse(format!(
            "not a readable run checkpoint ({e}); run the scene again"
        ))
    })?;
    if cp.backend != backend.name() {
        return Err(refuse(format!(
            "was written by the {} backend; resume on that backend",
            cp.backend
        )));
    }
    // Displacements are measured from the scene's initial state, as in the interrupted run.
    let reference = (
        scene.simulation.particles.position.clone(),
        scene.simulation.particles.orientation.clone(),
    );
    scene.simulation.restore(cp.sim);
    backend.restore_state(&scene.simulation, &cp.engine)?;
    log::info!(
        "resuming from the checkpoint at step {} (t = {:.6} s)",
        scene.simulation.steps,
        scene.simulation.time
    );
    let mut out = OutputDir::resume(
        lock,
        dir,
        crate::output::SeriesColumns::of(&scene.simulation),
        cp.output.0,
        cp.output.1,
    )?;
    let state = RunProgress {
        done: cp.done,
        stepping: cp.stepping,
        series: cp.series,
        reference,
    };
    continue_run(scene, backend, &mut out, vtk, progress, provenance, state)
}

/// Where a run stands between outputs.
struct RunProgress {
    done: u64,
    stepping: f64,
    series: Series,
    reference: (Vec<DVec3>, Vec<glam::DQuat>),
}

/// Steps between ParaView snapshots (`None`: no snapshots).
fn vtk_every(scene: &Scene) -> Option<u64> {
    let interval = scene
        .config
        .output
        .vtk_interval
        .unwrap_or(scene.output_interval);
    (interval > 0.0).then(|| ((interval / scene.simulation.dt).round() as u64).max(1))
}

fn material_names(scene: &Scene) -> Vec<String> {
    scene.materials.iter().map(|m| m.name.clone()).collect()
}

fn continue_run(
    scene: &mut Scene,
    backend: &mut dyn Backend,
    out: &mut OutputDir,
    vtk: Option<&dyn SnapshotWriter>,
    mut progress: impl FnMut(Progress) -> Result<()>,
    provenance: Provenance,
    mut state: RunProgress,
) -> Result<RunSummary> {
    let names = material_names(scene);
    let content = scene.config.output.vtk.clone();
    let output = &scene.config.output;
    let mut pace = crate::checkpoint::Pace::new(output.checkpoint_rows, output.checkpoint_seconds);
    let vtk_every = vtk.zip(vtk_every(scene));
    let sim = &mut scene.simulation;
    let total = step_count(scene.duration, sim.dt);
    let every = crate::scene::steps_per_output(scene.output_interval, sim.dt);
    let mut rows = state.done / every;
    let report = progress_steps(sim.particles.len());
    while state.done < total {
        // To the next row, snapshot or progress report, whichever comes first.
        let done = state.done;
        let mut n = (every - done % every).min(total - done).min(report);
        if let Some((_, k)) = vtk_every {
            n = n.min(k - done % k);
        }
        let t0 = Instant::now();
        let advanced = backend.advance(sim, n);
        crate::output::guarded(out.dir(), sim, advanced)?;
        state.stepping += t0.elapsed().as_secs_f64();
        state.done += n;
        let done = state.done;
        if let Some((writer, k)) = vtk_every
            && (done.is_multiple_of(k) || done == total)
        {
            let reference = (&state.reference.0[..], &state.reference.1[..]);
            state
                .series
                .take(writer, out.dir(), sim, backend, reference, &names, &content)?;
        }
        if !done.is_multiple_of(every) && done != total {
            progress(Progress {
                step: done,
                total,
                time: step_time(sim.steps, sim.dt),
                kinetic_energy: sim.particles.kinetic_energy(),
            })?;
            continue;
        }
        backend.read_forces(sim)?;
        out.record(sim, sim)?;
        rows += 1;
        if pace.due(rows) || done == total {
            let cp = RunCheckpoint {
                backend: backend.name().to_owned(),
                sim: sim.state(),
                engine: backend.save_state()?,
                done,
                stepping: state.stepping,
                series: state.series.clone(),
                output: out.position()?,
            };
            let path = out.dir().join(RUN_CHECKPOINT);
            let bytes = postcard::to_allocvec(&cp).map_err(|e| Error::Encode {
                path: path.clone(),
                message: e.to_string(),
            })?;
            let sealed = checkpoint::seal(
                checkpoint::Kind::Run,
                RUN_CHECKPOINT_FORMAT,
                &provenance.input_toml,
                &bytes,
            );
            crate::output::atomic_write(&path, &sealed)?;
            pace.written();
        }
        progress(Progress {
            step: done,
            total,
            time: step_time(sim.steps, sim.dt),
            kinetic_energy: sim.particles.kinetic_energy(),
        })?;
    }
    let n = sim.particles.len();
    let done = state.done;
    let summary = RunSummary {
        provenance,
        n_particles: n,
        backend: backend.name().to_owned(),
        adapter: backend.adapter(),
        gpu_bytes_per_particle: backend.memory_bytes().map(|b| b as f64 / n.max(1) as f64),
        contact_law: format!("{:?}", sim.model.law).to_lowercase(),
        history: format!("{:?}", sim.model.history).to_lowercase(),
        dt_s: sim.dt,
        critical_dt_s: scene.critical_dt,
        steps: done,
        simulated_time_s: step_time(sim.steps, sim.dt),
        final_kinetic_energy_j: sim.particles.kinetic_energy(),
        wall_clock_s: state.stepping,
        particle_steps_per_s: if state.stepping > 0.0 {
            n as f64 * done as f64 / state.stepping
        } else {
            0.0
        },
        neighbour_builds: backend.neighbour_builds(sim)?,
    };
    out.write_summary(&summary)?;
    Ok(summary)
}
