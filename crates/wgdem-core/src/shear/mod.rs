//! The direct shear test: specimen preparation, servo-controlled consolidation and shear at
//! constant speed, with the series, summary, plots, VTK snapshots and checkpoints a
//! researcher needs (He, Zheng & Li 2020; Fleischmann et al. 2015).
//!
//! Stages, each advanced one output interval at a time on a [`Backend`]:
//! 1. **preparation**: pluviation (the column falls into the box) or radius expansion (radii
//!    grow in increments inside a lidded box), with the preparation friction, until the mean
//!    particle speed drops below `specimen.settle_speed`;
//! 2. **consolidation**: the top plate is put on the specimen and servo-controlled to the
//!    target normal stress; once the stress holds within `tolerance` and the specimen is at
//!    rest, the friction becomes the materials' own (if the preparation used another) and the
//!    specimen settles again under the servo;
//! 3. **shear**: the lower box moves along +x at the shear speed until the shear
//!    displacement is reached, the servo holding the normal stress.
//!
//! The servo is PFC's: the plate velocity is `v = G (F − σ_n A)` plus an integral term that
//! removes the steady lag while the specimen dilates, `G = α / (k T)` with `α` the servo gain,
//! `k` the plate's contact stiffness estimated from the contact law and `T` the control
//! interval; the speed is capped at a hundredth of a diameter per interval.
//!
//! Every decision that shapes the results (stage ends, servo, snapshots) depends only on step
//! counts and the simulated state, never on the host's timing, so a run resumed from a
//! checkpoint gives the same bits as one never interrupted (on the same device). Only which
//! rows get a checkpoint does: at least `[output] checkpoint_seconds` of wall-clock time apart
//! ([`crate::checkpoint::Pace`]).

mod config;
mod measure;
mod records;
mod servo;
mod setup;
mod writer;

use std::path::Path;
use std::time::Instant;

use glam::DVec3;

pub use config::{
    BoxConfig, ConsolidationConfig, FrictionChange, Method, ShearConfig, ShearOutputConfig,
    ShearSetup, ShearSimulationConfig, ShearStageConfig, SpecimenConfig, plate_stiffness, walls,
};
pub use records::{DriverState, HEADER, Row, ShearProgress, ShearSummary, Stage};
pub use servo::{Servo, ServoGains};
pub(crate) use setup::stage_pairs;
pub use writer::ShearWriter;

use crate::analysis::{
    coordination_number, fabric_anisotropy, fabric_tensor, running_mean, solid_volume, touching,
    windowed_slope,
};
use crate::cpu::Simulation;
use crate::error::{Error, Result};
use crate::output::OutputLock;
use crate::protocol::{CheckpointFile, TestDir};
use crate::runner::{Backend, RowSums};
use crate::wall::WallShape;

const CHECKPOINT: &str = "checkpoint.bin";
/// What a shear test writes in its output directory (besides the lock).
pub const ENTRIES: [&str; 12] = [
    "shear.csv",
    "summary.json",
    CHECKPOINT,
    "vtk",
    "plots",
    "input.toml",
    "specimen_prepared.csv",
    "specimen_prepared.vtu",
    "specimen_consolidated.csv",
    "specimen_consolidated.vtu",
    crate::output::BLOWUP,
    crate::output::MANIFEST,
];
/// Raised whenever a checkpoint's meaning changes, not only its layout (3: a GPU engine's wall
/// slot is its wall's rank among the particle's walls within the skin; 4: a GPU engine's
/// neighbour slot holds its pair's canonical order in the partner word's top bit; 5: a GPU
/// engine's rebuild flag is set by the step that moved a particle half the skin, so a
/// checkpoint may hold it pending for the next step; 6: the snapshots are a `Series` with
/// step numbers and wall files; 7: in the checksummed envelope of [`crate::checkpoint`], without
/// the configuration's text; 8: a GPU engine's state holds the low parts of its velocities and
/// radii; 9: the CPU reference's state ends with its periodic cell, if any; 10: a snapshot
/// names its cell file; 11: a GPU engine's state holds the links of its pairs' slots and its
/// lists put each particle's A sides first; 12: a GPU engine's state holds no angular-velocity
/// array, the inverse inertia travelling with the positions of the last build).
const CHECKPOINT_FORMAT: u32 = 12;

/// A direct shear test in progress.
pub struct ShearRun {
    dir: TestDir,
    setup: std::sync::Arc<ShearSetup>,
    sim: Simulation,
    state: DriverState,
    writer: Box<dyn ShearWriter + Send>,
    /// The last row's sums, where the backend made them ([`Backend::advance_for_row`]): the
    /// row's measures and the stage ends come from them instead of `sim`'s particles, which
    /// are then behind the backend until [`ShearRun::sync`].
    sums: Option<RowSums>,
    /// Whether `sim`'s particles are behind the backend's (since a row whose sums it made).
    behind: bool,
}

/// Refuses a saved specimen that is not this test's: a count other than `specimen.count`
/// (a packing prepared for another preset or size), spheres that do not rest on the floor, or
/// a top less than two of its largest diameters above the upper box's bottom (the shear plane
/// would run through the empty upper box, or along the specimen's top).
fn check_specimen_fits(setup: &ShearSetup, packing: &crate::packing::Packing) -> Result<()> {
    let (b, count) = (&setup.config.shear_box, setup.config.specimen.count);
    let n = packing.spheres.len();
    if n != count as usize {
        return Err(Error::invalid(
            &packing.source,
            "specimen.count",
            format!(
                "the saved specimen holds {n} spheres but the test is for specimen.count = {count}: it was prepared for another test or size; start it with the configuration that prepared it, or set specimen.count = {n} with a box it fills"
            ),
        ));
    }
    let (mut bottom, mut top, mut d_max) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for s in &packing.spheres {
        bottom = bottom.min(s.position.z - s.radius);
        top = top.max(s.position.z + s.radius);
        d_max = d_max.max(2.0 * s.radius);
    }
    let plane = b.lower_height + b.gap;
    if bottom.is_nan() || bottom > d_max {
        return Err(Error::invalid(
            &packing.source,
            "specimen",
            format!(
                "the saved specimen's lowest sphere is {bottom:.4e} m above the floor, more than its largest diameter ({d_max:.4e} m): it does not rest on the floor of this box (floor at z = 0); give a settled specimen in the box's frame"
            ),
        ));
    }
    if top.is_nan() || top < plane + 2.0 * d_max {
        return Err(Error::invalid(
            &packing.source,
            "specimen",
            format!(
                "the saved specimen reaches z = {top:.4e} m, less than two of its largest diameters above the upper box's bottom (z = {plane:.4e} m, box.lower_height + box.gap): the test would shear along or above its top; give a specimen that fills the lower box and reaches at least z = {:.4e} m, or lower box.lower_height",
                plane + 2.0 * d_max
            ),
        ));
    }
    Ok(())
}

impl ShearRun {
    /// Starts a test writing to `out` (created; a directory holding an earlier test is refused
    /// unless `overwrite`), its snapshots and plots through `writer`.
    pub fn create(
        setup: ShearSetup,
        out: &Path,
        overwrite: bool,
        writer: Box<dyn ShearWriter + Send>,
    ) -> Result<Self> {
        let dir = TestDir::create(out, &ENTRIES, overwrite, &setup.provenance, CSV)?;
        let sim = setup.scene.simulation.clone();
        let state = DriverState {
            stage: Stage::Preparation,
            stage_start: sim.time,
            friction_switched: false,
            expansions: 0,
            last_expansion: sim.time,
            settled_rows: 0,
            servo: Servo::default(),
            shear_origin: None,
            reference: (
                sim.particles.position.clone(),
                sim.particles.orientation.clone(),
            ),
            rows: Vec::new(),
            series: crate::snapshot::Series::new("shear"),
            preparation_void_ratio: None,
            consolidation_timed_out: false,
            wall_seconds: 0.0,
            shear_start_steps: 0,
        };
        Ok(Self {
            dir,
            setup: std::sync::Arc::new(setup),
            sim,
            state,
            writer,
            sums: None,
            behind: false,
        })
    }

    /// Reopens the test in `out` at its last checkpoint; `backend` (built for
    /// [`ShearRun::simulation`] of a fresh setup) takes over the saved engine state.
    pub fn resume(
        setup: ShearSetup,
        out: &Path,
        backend: &mut dyn Backend,
        writer: Box<dyn ShearWriter + Send>,
    ) -> Result<Self> {
        let lock = OutputLock::take(out)?;
        let (driver, state, engine): (DriverState, _, _) =
            checkpoint_file(&setup).load(&out.join(CHECKPOINT), backend.name())?;
        let mut sim = setup.scene.simulation.clone();
        let switched = driver.friction_switched;
        sim.set_pair_params(if switched {
            setup.shear_pairs.clone()
        } else {
            setup.preparation_pairs.clone()
        });
        sim.restore(state);
        if driver.stage != Stage::Preparation {
            // `specimen.local_damping` is the preparation's alone.
            sim.local_damping = 0.0;
        }
        backend.restore_state(&sim, &engine)?;
        let dir = TestDir::reopened(lock, out, CSV, &driver.rows)?;
        log::info!(
            "resuming from the checkpoint at step {} (t = {:.6} s, {} rows, {})",
            sim.steps,
            sim.time,
            driver.rows.len(),
            driver.stage.name()
        );
        let run = Self {
            dir,
            setup: std::sync::Arc::new(setup),
            sim,
            state: driver,
            writer,
            sums: None,
            behind: false,
        };
        run.state
            .series
            .write_collection(run.writer.as_ref(), run.dir.path())?;
        Ok(run)
    }

    /// Starts a test from a saved packing (`wgdem shear --specimen FILE`): the spheres of
    /// `packing` (all of the specimen's material; velocities as saved) replace the generated
    /// specimen, preparation is skipped, and the test begins with the lid placed on the packing
    /// and consolidation under the servo. The packing must lie inside the box (its spheres
    /// reaching out by at most `specimen.max_overlap` of their radius) and overlap by at
    /// most `specimen.max_overlap` of the smaller radius.
    pub fn create_from_specimen(
        setup: ShearSetup,
        packing: &crate::packing::Packing,
        out: &Path,
        overwrite: bool,
        writer: Box<dyn ShearWriter + Send>,
    ) -> Result<Self> {
        let mut run = Self::create(setup, out, overwrite, writer)?;
        let setup = std::sync::Arc::clone(&run.setup);
        let b = &setup.config.shear_box;
        // The limit the file records where it is a test's own specimen, saved under load.
        let max_overlap = packing.overlap_limit(setup.config.specimen.max_overlap);
        packing.check_box(
            DVec3::new(-0.5 * b.length, -0.5 * b.width, 0.0),
            DVec3::new(0.5 * b.length, 0.5 * b.width, setup.box_top),
            max_overlap,
            "specimen",
        )?;
        packing.check(&[], max_overlap, "specimen.max_overlap")?;
        check_specimen_fits(&setup, packing)?;
        crate::protocol::replace_spheres(&mut run.sim, packing, setup.density);
        run.place_lid();
        run.state.reference = (
            run.sim.particles.position.clone(),
            run.sim.particles.orientation.clone(),
        );
        run.state.servo = Servo {
            active: true,
            ..Servo::default()
        };
        run.state.stage = Stage::Consolidation;
        run.state.preparation_void_ratio = Some(run.measure().void_ratio);
        log::info!(
            "{}: {} spheres from the saved specimen; preparation skipped",
            packing.source,
            run.sim.particles.len()
        );
        Ok(run)
    }

    /// The simulation as it stands (build a backend from it before [`ShearRun::run`]).
    pub fn simulation(&self) -> &Simulation {
        &self.sim
    }

    /// The setup.
    pub fn setup(&self) -> &ShearSetup {
        &self.setup
    }

    /// The driver's state.
    pub fn state(&self) -> &DriverState {
        &self.state
    }

    /// Runs to the end (or to `stop_after_rows` more rows, for tests of interrupted runs),
    /// writing outputs; returns the summary once the test is done.
    pub fn run(
        &mut self,
        backend: &mut dyn Backend,
        stop_after_rows: Option<usize>,
        mut progress: impl FnMut(&ShearProgress<'_>),
    ) -> Result<Option<ShearSummary>> {
        let dt = self.sim.dt;
        let every =
            crate::scene::steps_per_output(self.setup.config.simulation.output_interval, dt);
        let interval = self.setup.config.simulation.control_interval_steps;
        let output = &self.setup.config.output;
        let mut pace =
            crate::checkpoint::Pace::new(output.checkpoint_rows, output.checkpoint_seconds);
        let mut rows_this_session = 0;
        while self.state.stage != Stage::Done {
            if stop_after_rows.is_some_and(|n| rows_this_session >= n) {
                self.sync(backend)?;
                return Ok(None);
            }
            let t0 = Instant::now();
            let servo = &mut self.state.servo;
            let gains = ServoGains::new(&self.setup);
            let advanced = backend.advance_for_row(&mut self.sim, every, interval, &mut |r| {
                let force_z = r.walls[walls::TOP].0.z;
                servo
                    .update(&gains, force_z)
                    .map(|v| (walls::TOP, DVec3::Z * v))
                    .into_iter()
                    .collect()
            });
            let advanced = advanced.map(|sums| {
                self.behind = sums.is_some();
                self.sums = sums;
            });
            crate::output::guarded(self.dir.path(), &self.sim, advanced)?;
            self.state.wall_seconds += t0.elapsed().as_secs_f64();
            let row = self.measure();
            self.append(row)?;
            rows_this_session += 1;
            if let Some(row) = self.state.rows.last() {
                let c = &self.setup.config;
                progress(&ShearProgress {
                    stage: self.state.stage,
                    row,
                    target_displacement: c.shear.displacement,
                    stage_time: self.sim.time - self.state.stage_start,
                    stage_max_time: match self.state.stage {
                        Stage::Preparation => Some(c.specimen.max_time),
                        Stage::Consolidation => Some(c.consolidation.max_time),
                        Stage::Shear | Stage::Done => None,
                    },
                    settled_rows: (self.state.settled_rows, c.consolidation.settle_rows),
                    normal_stress_target: c.consolidation.normal_stress,
                });
            }
            let changed = self.advance_stage(backend)?;
            if changed || pace.due(self.state.rows.len() as u64) {
                self.checkpoint(backend)?;
                pace.written();
            }
        }
        self.finish(backend).map(Some)
    }

    fn append(&mut self, row: Row) -> Result<()> {
        self.dir.append(&row)?;
        self.state.rows.push(row);
        Ok(())
    }

    /// Checks the current stage's end; returns whether the stage changed.
    fn advance_stage(&mut self, backend: &mut dyn Backend) -> Result<bool> {
        let setup = std::sync::Arc::clone(&self.setup);
        let s = setup.as_ref();
        let t = self.sim.time;
        let elapsed = t - self.state.stage_start;
        let speed = self.mean_speed();
        if !speed.is_finite() {
            // No stage goes on from a state that has blown up (`guard` stops a run at the row
            // first; this holds where a bound was raised past it).
            return Err(Error::BlowUp(format!(
                "the mean sphere speed is {speed} m/s at t = {t:e} s in the {:?} stage: the simulation blew up; lower the time step (simulation.safety_factor) or look for loads far out of scale",
                self.state.stage
            )));
        }
        match self.state.stage {
            Stage::Preparation => {
                let spec = &s.config.specimen;
                if spec.method == Method::Expansion
                    && self.state.expansions < spec.expansion_increments
                {
                    // Grow after the specimen has had time to relax from the last increment.
                    let relax = (elapsed >= 0.0)
                        && (t - self.state.last_expansion
                            >= 4.0 * s.config.simulation.output_interval);
                    if relax {
                        self.expand(backend)?;
                    }
                    return Ok(false);
                }
                // A pour is still at rest in the air at first: its speed says nothing before
                // the fall time. An expansion's spheres are in place once its last increment
                // has relaxed (above); a fall time of the whole height would hold a large
                // specimen long after it has come to rest.
                let fall = match spec.method {
                    Method::Pluviation => (2.0 * self.fill_height()
                        / self.sim.gravity.length().max(f64::MIN_POSITIVE))
                    .sqrt(),
                    Method::Expansion => 0.0,
                };
                let settled =
                    elapsed >= fall.min(spec.max_time) && self.mean_speed() < spec.settle_speed;
                if settled || elapsed >= spec.max_time {
                    if !settled {
                        log::warn!(
                            "preparation reached specimen.max_time = {} s with a mean speed of {:.3e} m/s (settle_speed {}); consolidating anyway",
                            spec.max_time,
                            self.mean_speed(),
                            spec.settle_speed
                        );
                    }
                    self.state.preparation_void_ratio =
                        self.state.rows.last().map(|r| r.void_ratio);
                    self.snapshot(backend)?;
                    self.writer
                        .specimen(self.dir.path(), "specimen_prepared", &self.sim)?;
                    // An expanded specimen's lid already holds it at the target height.
                    if s.expansion_height.is_none() {
                        self.place_lid();
                    }
                    backend.update_walls(&self.sim)?;
                    // Consolidation and shear with the contacts' own damping alone.
                    self.sim.local_damping = 0.0;
                    backend.update_gravity_and_damping(&self.sim)?;
                    self.state.servo = Servo {
                        active: true,
                        ..Servo::default()
                    };
                    self.enter(Stage::Consolidation, &*backend);
                    return Ok(true);
                }
                Ok(false)
            }
            Stage::Consolidation => {
                let c = &s.config.consolidation;
                let settle_speed = c.settle_speed.unwrap_or(0.2 * s.config.shear.speed);
                let sigma = self.state.rows.last().map_or(0.0, |r| r.normal_stress_pa);
                let ok = ((sigma - c.normal_stress) / c.normal_stress).abs() < c.tolerance
                    && self.mean_speed() < settle_speed;
                self.state.settled_rows = if ok { self.state.settled_rows + 1 } else { 0 };
                let timed_out = elapsed >= c.max_time;
                if self.state.settled_rows < c.settle_rows && !timed_out {
                    return Ok(false);
                }
                if timed_out && self.state.settled_rows < c.settle_rows {
                    log::warn!(
                        "consolidation reached consolidation.max_time = {} s (σ = {:.4e} Pa, target {:.4e} Pa, mean speed {:.3e} m/s); shearing anyway",
                        c.max_time,
                        sigma,
                        c.normal_stress,
                        self.mean_speed()
                    );
                    self.state.consolidation_timed_out = true;
                }
                if c.friction_change == FrictionChange::Resettle
                    && self.switch_to_shear_friction(backend)?
                {
                    // Settle again with the shear friction before shearing.
                    self.state.settled_rows = 0;
                    self.state.stage_start = t;
                    return Ok(true);
                }
                self.snapshot(backend)?;
                self.writer
                    .specimen(self.dir.path(), "specimen_consolidated", &self.sim)?;
                // `friction_change = "at_shear"`: the shear friction from the first shear
                // step on (already in place with "resettle").
                self.switch_to_shear_friction(backend)?;
                self.state.shear_origin = Some((self.lower_x(), self.top_z()));
                self.state.shear_start_steps = self.sim.steps;
                self.state.reference = (
                    self.sim.particles.position.clone(),
                    self.sim.particles.orientation.clone(),
                );
                let v = DVec3::X * s.config.shear.speed;
                for w in walls::LOWER {
                    self.sim.walls[w].velocity = v;
                }
                backend.update_walls(&self.sim)?;
                self.enter(Stage::Shear, &*backend);
                Ok(true)
            }
            Stage::Shear => {
                let target = s.config.shear.displacement;
                let dh = self
                    .state
                    .rows
                    .last()
                    .map_or(0.0, |r| r.shear_displacement_m);
                let n = s.config.output.vtk_snapshots.max(1) as f64;
                let done_snaps = self
                    .state
                    .series
                    .snapshots
                    .iter()
                    .filter(|p| p.step > self.state.shear_start_steps)
                    .count() as f64;
                if dh >= target * 0.999_999 {
                    for w in walls::LOWER {
                        self.sim.walls[w].velocity = DVec3::ZERO;
                    }
                    backend.update_walls(&self.sim)?;
                    self.snapshot(backend)?;
                    self.enter(Stage::Done, &*backend);
                    return Ok(true);
                }
                if dh >= target * (done_snaps + 1.0) / (n + 1.0) {
                    self.snapshot(backend)?;
                }
                Ok(false)
            }
            Stage::Done => Ok(false),
        }
    }

    /// Puts the materials' own friction in place of the preparation friction, once; returns
    /// whether the pair table changed (not when it was switched already, nor when the
    /// preparation used the materials' own).
    fn switch_to_shear_friction(&mut self, backend: &mut dyn Backend) -> Result<bool> {
        let s = &*self.setup;
        crate::protocol::switch_pairs(
            &mut self.sim,
            backend,
            &mut self.state.friction_switched,
            (&s.preparation_pairs, &s.shear_pairs),
        )
    }

    /// Device memory `backend` holds, per sphere (bytes); `None` on the CPU.
    fn gpu_bytes_per_particle(&self, backend: &dyn Backend) -> Option<f64> {
        let n = self.sim.particles.len().max(1);
        backend.memory_bytes().map(|b| b as f64 / n as f64)
    }

    /// Moves to `stage`, logging the GPU memory per sphere where the backend has one (the
    /// tables are regrown as contacts form, so the figure after preparation and
    /// consolidation is that of the settled specimen).
    fn enter(&mut self, stage: Stage, backend: &dyn Backend) {
        let memory = self
            .gpu_bytes_per_particle(backend)
            .map_or(String::new(), |b| {
                format!("; GPU memory {b:.0} B per sphere")
            });
        // From the last row of the stage before (`stage_start` restarts at a friction switch).
        let current = self.state.stage.name();
        let before = (self.state.rows.iter().rev())
            .find(|r| r.stage != current)
            .map_or(0, |r| r.step);
        let steps = self.sim.steps.saturating_sub(before);
        log::info!(
            "t = {:.4} s: {current} → {} after {steps} steps of {current} (mean speed {:.3e} m/s){memory}",
            self.sim.time,
            stage.name(),
            self.mean_speed()
        );
        self.state.stage = stage;
        self.state.stage_start = self.sim.time;
        self.state.settled_rows = 0;
    }

    /// Copies the particles from the backend where the last rows left them behind.
    fn sync(&mut self, backend: &mut dyn Backend) -> Result<()> {
        if self.behind {
            backend.sync_particles(&mut self.sim)?;
            self.behind = false;
        }
        Ok(())
    }

    /// One radius increment of the expansion (history restarts: sizes changed).
    fn expand(&mut self, backend: &mut dyn Backend) -> Result<()> {
        self.sync(backend)?;
        // The row's sums are of the spheres before they grew.
        self.sums = None;
        let f = self.setup.expansion_factor;
        let p = &mut self.sim.particles;
        for i in 0..p.len() {
            let r = p.radius[i];
            p.set_radius(i, r * f);
        }
        self.sim.reset_history();
        self.sim.set_default_skin();
        backend.reload(&self.sim)?;
        self.state.expansions += 1;
        self.state.last_expansion = self.sim.time;
        Ok(())
    }

    /// Lid on: the top plate just above the highest sphere (then the servo takes over).
    fn place_lid(&mut self) {
        let top = self.fill_height() + 0.05 * self.setup.mean_diameter;
        if let WallShape::Plate { center, .. } = &mut self.sim.walls[walls::TOP].shape {
            center.z = top;
        }
    }

    fn snapshot(&mut self, backend: &mut dyn Backend) -> Result<()> {
        self.sync(backend)?;
        let setup = &*self.setup;
        crate::protocol::snapshot(
            &mut self.state.series,
            self.writer.as_ref(),
            self.dir.path(),
            &mut self.sim,
            backend,
            &self.state.reference,
            &setup.scene,
            &setup.config.output.vtk,
        )
    }

    fn checkpoint(&mut self, backend: &mut dyn Backend) -> Result<()> {
        self.sync(backend)?;
        checkpoint_file(&self.setup).save(
            &self.dir.path().join(CHECKPOINT),
            backend,
            &self.state,
            &self.sim,
        )
    }

    fn finish(&mut self, backend: &mut dyn Backend) -> Result<ShearSummary> {
        self.sync(backend)?;
        let summary = self.summary(backend);
        let writer = &*self.writer;
        crate::protocol::finish(self.dir.path(), &summary, writer, &self.state.rows)?;
        Ok(summary)
    }
}

/// `shear.csv` and its columns.
const CSV: (&str, &[&str]) = ("shear.csv", &HEADER);

fn checkpoint_file(setup: &ShearSetup) -> CheckpointFile<'_> {
    CheckpointFile {
        kind: crate::checkpoint::Kind::Shear,
        format: CHECKPOINT_FORMAT,
        input: &setup.text,
    }
}
