//! Element tests in a periodic cell (`wgdem cell`): a gas of spheres compacted isotropically
//! to a confining stress, then loaded along a path — drained or constant-p triaxial
//! compression, biaxial plane strain, or simple shear at constant normal stress — with the
//! series, summary, plots, ParaView snapshots and checkpoints of `wgdem shear`
//! ([`crate::protocol`] holds what the two share).
//!
//! Stages, each advanced one output interval at a time on a [`Backend`]:
//! 1. **compaction**: every normal stress held by [`crate::cell_servo`], first at half the
//!    confining stress `p₀` at `compaction.gas_rate` (the gas has no stiffness to ring), then at
//!    `p₀` at the servo's own bounded rate, with the preparation friction; once every normal
//!    stress is within `tolerance` of `p₀` and the spheres are at rest for `settle_rows` rows,
//!    the friction becomes the materials' own and the packing settles again;
//! 2. **loading**: the path's modes ([`paths::LoadingPath::modes`]) set the velocity gradient
//!    `L` every control interval from the last step's stress, until the loading strain is
//!    reached.
//!
//! As in the shear test every decision that shapes the results depends only on step counts and
//! the simulated state (only which rows get a checkpoint depends on the wall clock), so a
//! resumed test gives the same bits as one never interrupted.

mod config;
mod measure;
mod paths;
mod probes;
mod records;
mod rotation;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use glam::DMat3;

pub use config::{
    CellServoConfig, CellSetup, CellSimulationConfig, CellSpecimenConfig, CellTestConfig,
    CompactionConfig, LoadingConfig,
};
pub use paths::{HeldErrors, LoadingPath};
pub use probes::{PROBE_HEADER, ProbeRow, ProbeSummary, ProbesConfig};
pub use records::{CellProgress, CellSummary, DriverState, HEADER, HistorySummary, Row, Stage};
pub use rotation::{Axis, RotationConfig, RotationSummary};

use crate::cell_servo::CellServo;
use crate::cpu::Simulation;
use crate::error::{Error, Result};
use crate::material::PairParams;
use crate::output::OutputLock;
use crate::protocol::{CheckpointFile, RowFile, TestDir, TestWriter};
use crate::runner::Backend;

const CHECKPOINT: &str = "checkpoint.bin";
/// What a periodic-cell test writes in its output directory (besides the lock).
pub const ENTRIES: [&str; 12] = [
    "cell.csv",
    "summary.json",
    CHECKPOINT,
    "vtk",
    "plots",
    "input.toml",
    "specimen_compacted.csv",
    "specimen_compacted.vtu",
    "probes.csv",
    "probes_conventional.csv",
    crate::output::BLOWUP,
    crate::output::MANIFEST,
];
/// Raised whenever a checkpoint's meaning changes, not only its layout (4: a GPU engine's state
/// holds no angular-velocity array, the inverse inertia travelling with the positions of the
/// last build).
const CHECKPOINT_FORMAT: u32 = 4;

/// Writes a periodic-cell test's snapshot files, plots and specimen, and its probes' plot.
pub trait CellWriter: TestWriter<Row> {
    /// The probes' points in the Rendulic plane with their fitted circle (`centre`, through
    /// the origin), into the directory `dir` (Kuhn, Suzuki & Daouadji, Fig. 5).
    /// `dir/NAME.{png,svg}`.
    fn probe_plot(
        &self,
        dir: &Path,
        name: &str,
        rows: &[ProbeRow],
        centre: Option<[f64; 2]>,
    ) -> Result<()>;
}

/// A periodic-cell test in progress.
pub struct CellRun {
    dir: TestDir,
    setup: Arc<CellSetup>,
    sim: Simulation,
    state: DriverState,
    writer: Box<dyn CellWriter + Send>,
}

impl CellRun {
    /// Starts a test writing to `out` (created; a directory holding an earlier test is refused
    /// unless `overwrite`), its snapshots and plots through `writer`.
    pub fn create(
        setup: CellSetup,
        out: &Path,
        overwrite: bool,
        writer: Box<dyn CellWriter + Send>,
    ) -> Result<Self> {
        let dir = TestDir::create(out, &ENTRIES, overwrite, &setup.provenance, CSV)?;
        let sim = setup.scene.simulation.clone();
        let state = DriverState {
            stage: Stage::Compaction,
            stage_start: sim.time,
            gas_compressed: false,
            friction_switched: false,
            settled_rows: 0,
            strain: DMat3::ZERO,
            shear_strain: 0.0,
            stage_volume: sim.cell().map_or(f64::NAN, |c| c.volume()),
            reference: (
                sim.particles.position.clone(),
                sim.particles.orientation.clone(),
            ),
            rows: Vec::new(),
            series: crate::snapshot::Series::new("cell"),
            compaction_timed_out: false,
            wall_seconds: 0.0,
            loading_wall_seconds: 0.0,
            loading_force_seconds: 0.0,
            loading_start_steps: 0,
            probes: None,
            probes_conventional: None,
            rotation: None,
            rotation_without_twirl: None,
        };
        Ok(Self {
            dir,
            setup: Arc::new(setup),
            sim,
            state,
            writer,
        })
    }

    /// Reopens the test in `out` at its last checkpoint; `backend` (built for
    /// [`CellRun::simulation`] of a fresh setup) takes over the saved engine state.
    pub fn resume(
        setup: CellSetup,
        out: &Path,
        backend: &mut dyn Backend,
        writer: Box<dyn CellWriter + Send>,
    ) -> Result<Self> {
        let lock = OutputLock::take(out)?;
        let (driver, state, engine): (DriverState, _, _) =
            checkpoint_file(&setup).load(&out.join(CHECKPOINT), backend.name())?;
        let mut sim = setup.scene.simulation.clone();
        sim.set_pair_params(if driver.friction_switched {
            setup.loading_pairs.clone()
        } else {
            setup.preparation_pairs.clone()
        });
        sim.restore(state);
        sim.local_damping = local_damping(&setup.config, driver.friction_switched);
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
            setup: Arc::new(setup),
            sim,
            state: driver,
            writer,
        };
        run.state
            .series
            .write_collection(run.writer.as_ref(), run.dir.path())?;
        Ok(run)
    }

    /// Starts a test from a saved packing (`wgdem cell --specimen`): a specimen CSV that
    /// records its periodic cell (`specimen_compacted.csv` of an earlier test). Its spheres (of
    /// the specimen's material; velocities as saved) in its cell replace the gas, the friction is
    /// the materials' own from the start, and the compaction goes on from the confining stress's
    /// hold (no gas phase) until the criteria hold again; then the loading. The contacts'
    /// tangential histories are not in the file: they start afresh.
    pub fn create_from_specimen(
        setup: CellSetup,
        packing: &crate::packing::Packing,
        out: &Path,
        overwrite: bool,
        writer: Box<dyn CellWriter + Send>,
    ) -> Result<Self> {
        let refuse = |message: String| Error::invalid(&packing.source, "specimen", message);
        let Some([a, b, c, origin]) = packing.recorded_cell else {
            return Err(refuse(
                "records no periodic cell: give the specimen_compacted.csv of a wgdem cell test (its `# cell = ...` line; a .vtu does not carry it)".to_owned(),
            ));
        };
        let count = setup.config.specimen.count;
        let n = packing.spheres.len();
        if n != count as usize {
            return Err(Error::invalid(
                &packing.source,
                "specimen.count",
                format!(
                    "the saved specimen holds {n} spheres but the test is for specimen.count = {count}: set specimen.count = {n}"
                ),
            ));
        }
        let cell = crate::cell::PeriodicCell::new([a, b, c], origin, DMat3::ZERO)
            .map_err(|e| refuse(format!("its recorded cell: {e}")))?;
        let mut run = Self::create(setup, out, overwrite, writer)?;
        let setup = Arc::clone(&run.setup);
        let sim = &mut run.sim;
        let material = sim.particles.material.first().copied().unwrap_or(0);
        let density = setup.scene.materials[material].density.unwrap_or(0.0);
        crate::protocol::replace_spheres(sim, packing, density);
        sim.set_cell(Some(cell)).map_err(refuse)?;
        let limit = packing.overlap_limit(crate::packing::DEFAULT_MAX_OVERLAP);
        let p = &sim.particles;
        if let Some(o) = crate::packing::worst_overlap_in(&p.position, &p.radius, limit, sim.cell())
        {
            return Err(refuse(format!(
                "{} pairs overlap by more than {limit} of the smaller radius through the cell's faces or inside it (worst {:.3} for spheres {} and {}): not the packing of this cell",
                o.count, o.fraction, o.pair.0, o.pair.1
            )));
        }
        sim.set_pair_params(setup.loading_pairs.clone());
        run.state.friction_switched = true;
        run.state.gas_compressed = true;
        run.state.stage_volume = run.sim.cell().map_or(f64::NAN, |c| c.volume());
        run.state.reference = (
            run.sim.particles.position.clone(),
            run.sim.particles.orientation.clone(),
        );
        log::info!(
            "{}: {n} spheres in their periodic cell from the saved specimen; the gas phase skipped",
            packing.source
        );
        Ok(run)
    }

    /// The simulation as it stands (build a backend from it before [`CellRun::run`]).
    pub fn simulation(&self) -> &Simulation {
        &self.sim
    }

    /// The setup.
    pub fn setup(&self) -> &CellSetup {
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
        mut progress: impl FnMut(&CellProgress<'_>),
    ) -> Result<Option<CellSummary>> {
        let every = crate::scene::steps_per_output(
            self.setup.config.simulation.output_interval,
            self.sim.dt,
        );
        let output = &self.setup.config.output;
        let mut pace =
            crate::checkpoint::Pace::new(output.checkpoint_rows, output.checkpoint_seconds);
        let mut rows_this_session = 0;
        if self.sim.force_seconds().is_none() {
            self.sim.time_forces();
        }
        while self.state.stage != Stage::Done {
            if stop_after_rows.is_some_and(|n| rows_this_session >= n) {
                return Ok(None);
            }
            let t0 = Instant::now();
            let forces0 = self.sim.force_seconds().unwrap_or(0.0);
            let advanced = self.advance(backend, every);
            crate::output::guarded(self.dir.path(), &self.sim, advanced)?;
            // The row's unbalanced force ratio needs the last step's net forces.
            if backend.name() != "cpu" && self.sim.uses_jager() {
                // The row counts the Jäger contacts' history points (`history_points_*`) in
                // the host's copy of the state: the engine's histories, handed over with the
                // forces in one readback.
                let histories = backend.contact_histories(&mut self.sim)?;
                self.sim.adopt_histories(histories);
            } else {
                backend.read_forces(&mut self.sim)?;
            }
            let seconds = t0.elapsed().as_secs_f64();
            self.state.wall_seconds += seconds;
            if self.state.stage == Stage::Loading {
                self.state.loading_wall_seconds += seconds;
                self.state.loading_force_seconds +=
                    self.sim.force_seconds().unwrap_or(0.0) - forces0;
            }
            let row = self.measure();
            self.dir.append(&row)?;
            self.state.rows.push(row);
            rows_this_session += 1;
            if let Some(row) = self.state.rows.last() {
                let c = &self.setup.config;
                progress(&CellProgress {
                    stage: self.state.stage,
                    row,
                    stage_time: self.sim.time - self.state.stage_start,
                    compaction_max_time: c.compaction.max_time,
                    settled_rows: (self.state.settled_rows, c.compaction.settle_rows),
                    mean_stress_target: c.compaction.mean_stress,
                    target_strain: c.loading.strain,
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

    /// The servo of the current stage.
    fn servo(&self) -> CellServo {
        let c = &self.setup.config;
        let fast = self.state.stage == Stage::Compaction && !self.state.gas_compressed;
        CellServo {
            max_rate: if fast {
                c.compaction.gas_rate
            } else {
                c.servo.max_rate
            },
            band: c.servo.band,
            reference: c.compaction.mean_stress,
        }
    }

    /// The velocity gradient the stage sets from the last step's stress.
    fn velocity_gradient(&self, stress: DMat3) -> DMat3 {
        let c = &self.setup.config;
        let p0 = c.compaction.mean_stress;
        let modes = match self.state.stage {
            Stage::Compaction if self.state.gas_compressed => LoadingPath::isotropic(p0),
            Stage::Compaction => LoadingPath::isotropic(0.5 * p0),
            Stage::Loading => c.loading.path.modes(c.loading.strain_rate, p0, stress),
            Stage::Done => return DMat3::ZERO,
        };
        self.servo().velocity_gradient(&modes, stress)
    }

    /// `steps` steps, the velocity gradient set every control interval from the stress of
    /// the interval before; the strain accumulated exactly (`L` is constant over an
    /// interval). Between intervals the backend hands over the stress alone
    /// ([`Backend::advance_for_stress`]: the GPU engine reads back its device sums, not the
    /// particles), and the whole state after the last.
    fn advance(&mut self, backend: &mut dyn Backend, steps: u64) -> Result<()> {
        let interval = self.setup.config.simulation.control_interval_steps;
        let mut done = 0;
        let mut stress = self.sim.stress();
        while done < steps {
            let n = interval.min(steps - done);
            let l = self.velocity_gradient(stress.unwrap_or(DMat3::ZERO));
            self.sim
                .set_velocity_gradient(l)
                .map_err(|e| Error::BlowUp(format!("the cell's servo: {e}")))?;
            if done + n < steps {
                stress = backend.advance_for_stress(&mut self.sim, n)?;
            } else {
                backend.advance(&mut self.sim, n)?;
                stress = self.sim.stress();
            }
            let h = n as f64 * self.sim.dt;
            self.state.strain -= (l + l.transpose()) * (0.5 * h);
            self.state.shear_strain += l.z_axis.x * h;
            done += n;
        }
        Ok(())
    }

    /// Checks the current stage's end; returns whether the stage changed.
    fn advance_stage(&mut self, backend: &mut dyn Backend) -> Result<bool> {
        let setup = Arc::clone(&self.setup);
        let c = &setup.config;
        let t = self.sim.time;
        let speed = self.mean_speed();
        // Spins too: a blown-up rotation need not show in the translational speed yet.
        let total = crate::analysis::mean_speed(&self.sim.particles);
        if !total.is_finite() {
            return Err(Error::BlowUp(format!(
                "the mean sphere speed (rotation included) is {total} m/s at t = {t:e} s in the {} stage: the simulation blew up; lower the time step (simulation.safety_factor) or the servo's rates",
                self.state.stage.name()
            )));
        }
        let Some(row) = self.state.rows.last() else {
            return Ok(false);
        };
        match self.state.stage {
            Stage::Compaction => {
                let p0 = c.compaction.mean_stress;
                if !self.state.gas_compressed {
                    // Within the servo's band below half the target: on to the target at the
                    // servo's own rate.
                    if row.p_pa >= 0.5 * p0 * (1.0 - c.servo.band) {
                        self.state.gas_compressed = true;
                    }
                    return Ok(false);
                }
                let tol = c.compaction.tolerance * p0;
                let at_rest = speed < setup.settle_speed()
                    || (c.compaction.max_unbalanced)
                        .is_some_and(|most| row.unbalanced_force_ratio < most);
                let ok = [row.stress_xx_pa, row.stress_yy_pa, row.stress_zz_pa]
                    .iter()
                    .all(|s| (s - p0).abs() < tol)
                    && at_rest;
                self.state.settled_rows = if ok { self.state.settled_rows + 1 } else { 0 };
                let timed_out = t - self.state.stage_start >= c.compaction.max_time;
                if self.state.settled_rows < c.compaction.settle_rows && !timed_out {
                    return Ok(false);
                }
                let cut = timed_out && self.state.settled_rows < c.compaction.settle_rows;
                let (p, void_ratio) = (row.p_pa, row.void_ratio);
                let switched = self.switch_to_loading_friction(backend)?;
                // One warning for the whole stage: `max_time` bounds the compaction and the
                // settling with the materials' friction together, so a compaction cut on it
                // settles one more row with that friction and is then loaded.
                if cut && !self.state.compaction_timed_out {
                    let next = if switched {
                        "settling one more row with the materials' friction, then loading"
                    } else {
                        "loading anyway"
                    };
                    log::warn!(
                        "compaction reached compaction.max_time = {} s (p = {p:.4e} Pa, target {p0:.4e} Pa, mean speed {speed:.3e} m/s, settle_speed {:.3e}); {next}",
                        c.compaction.max_time,
                        setup.settle_speed()
                    );
                    self.state.compaction_timed_out = true;
                }
                if switched {
                    // Settle again with the materials' friction before loading.
                    log::info!(
                        "t = {t:.4} s: compacted with the preparation friction (void ratio {void_ratio:.4}); the materials' friction from here, settling again"
                    );
                    self.state.settled_rows = 0;
                    return Ok(true);
                }
                self.snapshot(backend)?;
                self.writer
                    .specimen(self.dir.path(), "specimen_compacted", &self.sim)?;
                self.state.strain = DMat3::ZERO;
                self.state.shear_strain = 0.0;
                self.state.stage_volume = self.sim.cell().map_or(f64::NAN, |c| c.volume());
                self.state.reference = (
                    self.sim.particles.position.clone(),
                    self.sim.particles.orientation.clone(),
                );
                self.state.loading_start_steps = self.sim.steps;
                self.enter(Stage::Loading);
                Ok(true)
            }
            Stage::Loading => {
                let target = c.loading.strain;
                let strain = row.loading_strain;
                let probe_now = c
                    .probes
                    .as_ref()
                    .is_some_and(|p| row.stress_ratio >= p.at_stress_ratio);
                if probe_now || strain >= target * 0.999_999 {
                    if (c.probes.is_some() || c.rotation.is_some()) && backend.name() != "cpu" {
                        // The probes and the rotation run on the CPU reference, from copies
                        // of this state: with the contacts' histories the engine kept.
                        let histories = backend.contact_histories(&mut self.sim)?;
                        if histories.unreadable > 0 {
                            return Err(Error::Backend(format!(
                                "the strain probes and the rotation continue on the CPU reference from the GPU engine's state, which cannot hand over {} Jäger contact histories; use --backend cpu",
                                histories.unreadable
                            )));
                        }
                        self.sim.adopt_histories(histories);
                    }
                    if c.probes.is_some() {
                        self.probe()?;
                    }
                    self.rotate()?;
                    self.sim
                        .set_velocity_gradient(DMat3::ZERO)
                        .map_err(|e| Error::BlowUp(format!("the cell's servo: {e}")))?;
                    self.snapshot(backend)?;
                    self.enter(Stage::Done);
                    return Ok(true);
                }
                let n = c.output.vtk_snapshots.max(1) as f64;
                let start = self.state.loading_start_steps;
                let done = (self.state.series.snapshots.iter())
                    .filter(|p| p.step > start)
                    .count() as f64;
                if strain >= target * (done + 1.0) / (n + 1.0) {
                    self.snapshot(backend)?;
                }
                Ok(false)
            }
            Stage::Done => Ok(false),
        }
    }

    /// Puts the materials' own friction in place of the preparation friction, once, and the
    /// loading's local damping (`loading.local_damping`) with it; returns whether the pair
    /// table changed.
    fn switch_to_loading_friction(&mut self, backend: &mut dyn Backend) -> Result<bool> {
        let s = &*self.setup;
        let switched = crate::protocol::switch_pairs(
            &mut self.sim,
            backend,
            &mut self.state.friction_switched,
            (&s.preparation_pairs, &s.loading_pairs),
        )?;
        self.sim.local_damping = local_damping(&s.config, self.state.friction_switched);
        backend.update_gravity_and_damping(&self.sim)?;
        Ok(switched)
    }

    /// The strain probes from the current state (on copies of it: the test's own state does
    /// not move), written to `probes.csv` and plotted; with `probes.conventional` a second
    /// series from the same state with the conventional linear-frictional algorithm.
    fn probe(&mut self) -> Result<()> {
        let setup = Arc::clone(&self.setup);
        let c = &setup.config;
        let Some(p) = &c.probes else {
            return Ok(());
        };
        let ratio = self.state.rows.last().map_or(f64::NAN, |r| r.stress_ratio);
        let steps = p.steps.unwrap_or_else(|| {
            (p.magnitude / (c.loading.strain_rate * self.sim.dt))
                .round()
                .max(1.0) as u64
        });
        let hold = p.hold_steps.unwrap_or(steps);
        log::info!(
            "probing at q/p = {ratio:.4}: {} directions of strain {:e}, {steps} steps each and {hold} held, with and without sliding",
            p.directions,
            p.magnitude
        );
        let mut series = vec![("probes", setup.loading_pairs.clone())];
        if p.conventional {
            series.push((
                "probes_conventional",
                linear_variant(&setup.loading_pairs, |_, refined| *refined = false),
            ));
        }
        for (name, pairs) in series {
            let mut sim = self.sim.clone();
            sim.set_pair_params(pairs.clone());
            let (rows, summary) = probes::probe(
                &sim,
                probes::locked(&pairs),
                p.directions,
                p.magnitude,
                (steps, hold),
                ratio,
            )
            .map_err(|e| Error::BlowUp(format!("the strain probes ({name}): {e}")))?;
            let out = self.dir.path();
            RowFile::rewrite(&out.join(format!("{name}.csv")), &PROBE_HEADER, &rows)?;
            log::info!(
                "{name}: plastic modulus {:.4e} Pa, yield direction {:.1}° from the volumetric axis, points off their circle by {:.1} % of its diameter (RMS)",
                summary.plastic_modulus_pa,
                summary.yield_direction_deg,
                100.0 * summary.circle_misfit
            );
            let centre = 0.5 / summary.plastic_modulus_pa;
            let direction = summary.yield_direction_deg.to_radians();
            let circle = centre
                .is_finite()
                .then(|| [centre * direction.cos(), centre * direction.sin()]);
            self.writer
                .probe_plot(&out.join("plots"), name, &rows, circle)?;
            if name == "probes" {
                self.state.probes = Some(summary);
            } else {
                self.state.probes_conventional = Some(summary);
            }
        }
        Ok(())
    }

    /// The rigid rotation (`[rotation]`) from the current state, on copies of it; with
    /// `rotation.without_twirl` a second one with the linear pairs' twirl off.
    fn rotate(&mut self) -> Result<()> {
        let setup = Arc::clone(&self.setup);
        let Some(r) = &setup.config.rotation else {
            return Ok(());
        };
        let mut series = vec![("rotation", setup.loading_pairs.clone())];
        if r.without_twirl {
            series.push((
                "rotation without twirl",
                linear_variant(&setup.loading_pairs, |twirl, _| *twirl = false),
            ));
        }
        for (name, pairs) in series {
            let found = rotation::rotate(&self.sim, pairs, r)
                .map_err(|e| Error::BlowUp(format!("the {name}: {e}")))?;
            log::info!(
                "{name} by {}° about {:?} in {} steps: the stress restored to the original frame is off by {:.3e} of |σ| (the same steps without rotation: {:.3e})",
                r.angle_deg,
                r.axis,
                r.increments,
                found.error_fraction,
                found.creep_fraction
            );
            if name == "rotation" {
                self.state.rotation = Some(found);
            } else {
                self.state.rotation_without_twirl = Some(found);
            }
        }
        Ok(())
    }

    fn enter(&mut self, stage: Stage) {
        let current = self.state.stage.name();
        let before = (self.state.rows.iter().rev())
            .find(|r| r.stage != current)
            .map_or(0, |r| r.step);
        log::info!(
            "t = {:.4} s: {current} → {} after {} steps of {current} (mean speed {:.3e} m/s)",
            self.sim.time,
            stage.name(),
            self.sim.steps.saturating_sub(before),
            self.mean_speed()
        );
        self.state.stage = stage;
        self.state.stage_start = self.sim.time;
        self.state.settled_rows = 0;
    }

    fn snapshot(&mut self, backend: &mut dyn Backend) -> Result<()> {
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
        checkpoint_file(&self.setup).save(
            &self.dir.path().join(CHECKPOINT),
            backend,
            &self.state,
            &self.sim,
        )
    }

    fn finish(&mut self, backend: &mut dyn Backend) -> Result<CellSummary> {
        let summary = self.summary(backend);
        let servo = &self.setup.config.servo;
        let held = HeldErrors {
            mean_fraction: summary.held_stress_error_mean_fraction,
            max_fraction: summary.held_stress_error_max_fraction,
            at_rate_bound_fraction: summary.servo_at_rate_bound_fraction,
        };
        if let Some(warning) = servo_warning(&held, servo.band, servo.max_rate) {
            log::warn!("{warning}");
        }
        let writer = &*self.writer;
        crate::protocol::finish(self.dir.path(), &summary, writer, &self.state.rows)?;
        Ok(summary)
    }
}

/// What a finished test says of its servo, if anything: where the held stresses lagged by
/// half the servo's band `band` on average (it moved the held components at half its largest
/// rate or more to follow the specimen), or it ran at its rate bound `max_rate` (1/s) for
/// [`SERVO_AT_BOUND_WARNING`] of the loading rows or more, the path's stresses were held only
/// loosely; the message names the constant that bounds the servo.
pub fn servo_warning(held: &HeldErrors, band: f64, max_rate: f64) -> Option<String> {
    let (mean, most, at_bound) = (
        held.mean_fraction,
        held.max_fraction,
        held.at_rate_bound_fraction,
    );
    (at_bound >= SERVO_AT_BOUND_WARNING || mean >= 0.5 * band).then(|| {
        format!(
            "the held stresses were off their targets by {:.1} % on average and {:.1} % at most (the servo's band is {:.1} %; it ran at its rate bound servo.max_rate = {max_rate} /s in {:.0} % of the loading rows): the specimen dilated or contracted nearly as fast as the servo may move the cell or faster; raise servo.max_rate",
            100.0 * mean,
            100.0 * most,
            100.0 * band,
            100.0 * at_bound,
        )
    })
}

/// The fraction of loading rows with the servo at its rate bound
/// ([`CellSummary::servo_at_rate_bound_fraction`]) from which a finished test warns (as it
/// does where the held stresses lagged by half the servo's band on average).
pub const SERVO_AT_BOUND_WARNING: f64 = 0.1;

/// `pairs` with every linear pair's algorithm changed by `change` (its `twirl` and `refined`
/// flags): the comparisons of Kuhn, Suzuki & Daouadji's Fig. 5c (the conventional algorithm)
/// and Fig. 6c (no twirl).
fn linear_variant(pairs: &[PairParams], change: impl Fn(&mut bool, &mut bool)) -> Vec<PairParams> {
    use crate::contact::model::PairModel;
    pairs
        .iter()
        .map(|p| match p.model() {
            PairModel::Linear {
                stiffness,
                mut twirl,
                mut refined,
            } => {
                change(&mut twirl, &mut refined);
                p.with_model(PairModel::Linear {
                    stiffness,
                    twirl,
                    refined,
                })
            }
            _ => *p,
        })
        .collect()
}

/// Cundall's local damping: the loading's own from the friction switch on (the settling with
/// the materials' friction, then the loading), `simulation.local_damping` before.
fn local_damping(config: &CellTestConfig, friction_switched: bool) -> f64 {
    if friction_switched {
        config.loading.damping(&config.simulation)
    } else {
        config.simulation.local_damping
    }
}

/// `cell.csv` and its columns.
const CSV: (&str, &[&str]) = ("cell.csv", &HEADER);

fn checkpoint_file(setup: &CellSetup) -> CheckpointFile<'_> {
    CheckpointFile {
        kind: crate::checkpoint::Kind::Cell,
        format: CHECKPOINT_FORMAT,
        input: &setup.text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `HEADER` names `Row`'s columns in its order.
    #[test]
    fn the_header_matches_the_row() {
        let row = Row {
            step: 0,
            time_s: 0.0,
            stage: "x".to_owned(),
            strain_xx: 0.0,
            strain_yy: 0.0,
            strain_zz: 0.0,
            strain_yz: 0.0,
            strain_xz: 0.0,
            strain_xy: 0.0,
            volumetric_strain: 0.0,
            loading_strain: 0.0,
            stress_xx_pa: 0.0,
            stress_yy_pa: 0.0,
            stress_zz_pa: 0.0,
            stress_yz_pa: 0.0,
            stress_xz_pa: 0.0,
            stress_xy_pa: 0.0,
            p_pa: 0.0,
            q_pa: 0.0,
            stress_ratio: 0.0,
            friction_angle_deg: 0.0,
            void_ratio: 0.0,
            coordination_number: 0.0,
            contacts: 0,
            sliding_fraction: 0.0,
            fabric_anisotropy: 0.0,
            contact_dissipated_work_j: 0.0,
            history_points_mean: 0.0,
            history_points_max: 0,
            kinetic_energy_j: 0.0,
            cell_volume_m3: 0.0,
            unbalanced_force_ratio: 0.0,
        };
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(&row).expect("a row serializes");
        let text = String::from_utf8(w.into_inner().expect("flushes")).expect("utf-8");
        assert_eq!(text.lines().next(), Some(HEADER.join(",").as_str()));
    }

    /// A finished test warns where its held stresses lagged by half the servo's band on
    /// average or the servo ran at its rate bound for a tenth of the rows, naming
    /// `servo.max_rate`; not for a servo that held them within a percent, nor without rows.
    /// (The first case is the quick Kuhn & Jäger preset with grains of 5 GPa loaded to 1 % at
    /// the preset's `max_rate`, the second the same at 5 /s, the third a runaway: docs/cell.md.)
    #[test]
    fn a_servo_that_held_loosely_is_named() {
        let held = |mean, max, at| HeldErrors {
            mean_fraction: mean,
            max_fraction: max,
            at_rate_bound_fraction: at,
        };
        let warning = servo_warning(&held(0.038, 0.048, 0.0), 0.05, 1.0).expect("a warning");
        assert!(warning.contains("servo.max_rate = 1 /s"), "{warning}");
        assert!(
            warning.contains("3.8 % on average and 4.8 % at most"),
            "{warning}"
        );
        assert!(servo_warning(&held(0.0077, 0.0105, 0.0), 0.05, 5.0).is_none());
        assert!(servo_warning(&held(0.02, 0.14, 0.1), 0.05, 1.0).is_some());
        assert!(servo_warning(&held(0.02, 0.14, 0.09), 0.05, 1.0).is_none());
        assert!(servo_warning(&held(f64::NAN, f64::NAN, f64::NAN), 0.05, 1.0).is_none());
    }
}
