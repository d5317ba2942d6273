//! The engine behind a `wgdem.Simulation`, without Python types: the simulation, its engine
//! and what the scene says of its outputs, stepped with the GIL released (in chunks between
//! which Python looks for Ctrl-C), read back lazily from the GPU, steered by servos, and
//! saved whole for `Simulation.checkpoint`.

use glam::{DQuat, DVec3};
use pyo3::prelude::*;
use serde::{Deserialize, Serialize};
use wgdem_core::checkpoint::{self, Kind};
use wgdem_core::cpu::{SimState, Simulation as CpuSimulation};
use wgdem_core::runner::{Backend, CpuBackend};
use wgdem_core::snapshot::{
    ContactHistories, ContactRecord, Snapshot, SnapshotWriter, VtkContent, contacts,
};
use wgdem_gpu::{GpuBackend, GpuOptions};

use crate::errors::{gpu_to_py, to_py};

/// Particle-steps per uninterrupted call into the CPU reference and into the GPU engine:
/// between two calls, Python looks for Ctrl-C. About a second on one core; on the GPU a few
/// milliseconds on a discrete GPU and about a second on lavapipe at 10⁵ and 10⁶ spheres (each
/// call waits for the device to finish).
const CHUNK_PARTICLE_STEPS: (u64, u64) = (5_000_000, 5_000_000);

/// Most steps per call, whatever the size: a step has a fixed cost (about 25 µs on the GPU's
/// single-workgroup path and up to a millisecond on lavapipe's general path), so a chunk sized
/// by particle-steps alone ran for 100 minutes with 8 spheres before Ctrl-C was looked at. The
/// chunks depend on the size only, never on the host's timing, so that a sequence of calls
/// gives the same bits on every host.
const MAX_CHUNK_STEPS: u64 = 2_000;

/// Format of the payload of [`Kind::Simulation`] checkpoints (raised when its meaning
/// changes; 2: a GPU engine's state holds the low parts of its velocities and radii; 3: the CPU
/// reference's state ends with its periodic cell, if any; 4: a GPU engine's state holds the
/// links of its pairs' slots and its lists put each particle's A sides first; 5: a GPU engine's
/// state holds no angular-velocity array, the inverse inertia travelling with the positions
/// of the last build).
pub(crate) const FORMAT: u32 = 5;

/// What `Simulation.checkpoint` writes (postcard, in the checkpoint envelope).
#[derive(Serialize, Deserialize)]
pub(crate) struct Saved {
    /// The scene as run (its hash is the envelope's input hash).
    pub(crate) input_toml: String,
    /// Where the scene came from (packing files are found relative to it).
    pub(crate) source: String,
    /// "cpu" or "gpu".
    pub(crate) backend: String,
    pub(crate) sim: SimState,
    /// The GPU engine's buffers (empty for the CPU).
    pub(crate) engine: Vec<u8>,
}

/// The engine that takes the steps.
pub(crate) enum Engine {
    Cpu,
    Gpu(Box<GpuBackend>),
}

/// A simulation and its engine, without Python types (stepped with the GIL released).
pub(crate) struct Session {
    pub(crate) sim: CpuSimulation,
    pub(crate) engine: Engine,
    /// The scene as run (for checkpoints).
    pub(crate) input_toml: String,
    pub(crate) source: String,
    /// `sim`'s particles are the engine's (the GPU's are read back lazily).
    pub(crate) synced: bool,
    /// The step whose forces and torques `sim`'s particles hold, if any.
    pub(crate) forces_at: Option<u64>,
    /// What snapshots need of the scene.
    pub(crate) looks: Looks,
    /// Walls held at a normal stress while stepping (`Simulation.servo`).
    pub(crate) servos: Vec<crate::servo::WallServo>,
    /// Steps between two servo updates.
    pub(crate) servo_interval: u64,
    /// The periodic cell's mixed control (`Simulation.control_cell`).
    pub(crate) cell_control: Option<CellControl>,
}

/// `Simulation.control_cell`: the servo and its modes, updating `L` every `interval` steps
/// from the step `since` at which it was set.
#[derive(Clone, Copy)]
pub(crate) struct CellControl {
    pub(crate) servo: wgdem_core::cell_servo::CellServo,
    pub(crate) modes: [[wgdem_core::cell_servo::Mode; 3]; 3],
    pub(crate) interval: u64,
    pub(crate) since: u64,
}

impl CellControl {
    /// Steps from `step` to the control's next update of `L` (0: due now).
    fn steps_to_update(&self, step: u64) -> u64 {
        let into = step.saturating_sub(self.since) % self.interval;
        if into == 0 { 0 } else { self.interval - into }
    }
}

/// What the scene says of its snapshots: the material names, the ParaView content
/// (`[output]`), and the positions and orientations displacements are measured from (the
/// scene's initial state).
pub(crate) struct Looks {
    pub(crate) names: Vec<String>,
    pub(crate) content: VtkContent,
    pub(crate) reference: (Vec<DVec3>, Vec<DQuat>),
}

impl Looks {
    pub(crate) fn of(scene: &wgdem_core::scene::Scene) -> Self {
        let p = &scene.simulation.particles;
        Self {
            names: scene.materials.iter().map(|m| m.name.clone()).collect(),
            content: scene.config.output.vtk.clone(),
            reference: (p.position.clone(), p.orientation.clone()),
        }
    }
}

impl Session {
    pub(crate) fn new(
        sim: CpuSimulation,
        backend: &str,
        adapter: Option<&str>,
        options: GpuOptions,
        input_toml: String,
        source: String,
        looks: Looks,
    ) -> PyResult<Self> {
        let choice = crate::errors::choice("Simulation", backend)?;
        let engine = match crate::engines::gpu_backend(choice, adapter, &sim, options)? {
            Some(backend) => Engine::Gpu(Box::new(backend)),
            None => Engine::Cpu,
        };
        Ok(Self {
            sim,
            engine,
            input_toml,
            source,
            synced: true,
            forces_at: None,
            looks,
            servos: Vec::new(),
            servo_interval: 20,
            cell_control: None,
        })
    }

    pub(crate) fn backend(&self) -> &'static str {
        match self.engine {
            Engine::Cpu => "cpu",
            Engine::Gpu(_) => "gpu",
        }
    }

    /// Steps per call into the engine (on the GPU, a whole number of batches; with servos,
    /// a whole number of their intervals).
    pub(crate) fn chunk(&self) -> u64 {
        let n = self.sim.particles.len().max(1) as u64;
        if !self.servos.is_empty() {
            let k = self.servo_interval;
            return ((CHUNK_PARTICLE_STEPS.0 / n).clamp(1, MAX_CHUNK_STEPS) / k).max(1) * k;
        }
        match self.engine {
            Engine::Cpu => (CHUNK_PARTICLE_STEPS.0 / n).clamp(1, MAX_CHUNK_STEPS),
            Engine::Gpu(_) => {
                // Whole batches where a chunk holds one or more, else part of one (at 10⁶
                // spheres a batch of 200 steps takes about 50 s on lavapipe).
                let batch = u64::from(GpuOptions::default().batch_steps);
                let k = (CHUNK_PARTICLE_STEPS.1 / n).clamp(1, MAX_CHUNK_STEPS);
                if k >= batch { k / batch * batch } else { k }
            }
        }
    }

    /// Advances `steps` steps with no readback of the particles on the GPU (unless servos
    /// act: they advance as the shear test does, reading the wall forces every interval).
    pub(crate) fn advance(&mut self, steps: u64) -> wgdem_core::Result<()> {
        if self.cell_control.is_some() {
            return self.advance_cell_controlled(steps);
        }
        if !self.servos.is_empty() {
            return self.advance_servoed(steps);
        }
        self.forces_at = None;
        match &mut self.engine {
            Engine::Cpu => {
                self.clear_shown_forces();
                CpuBackend.advance(&mut self.sim, steps)?;
                wgdem_core::guard::check(&self.sim, "the Simulation's arrays")
            }
            Engine::Gpu(gpu) => {
                self.synced = false;
                let ran = gpu.advance_walls_only(&mut self.sim, steps);
                if ran.is_err() {
                    // A blow-up reads the particles back with it.
                    self.synced = true;
                }
                ran
            }
        }
    }

    /// Before the CPU's first step: the forces shown (`sync_forces`) are not an earlier
    /// step's, and the first step's dashpot predictor starts from none, as a run's does.
    pub(crate) fn clear_shown_forces(&mut self) {
        if self.sim.steps == 0 {
            self.sim.particles.force.fill(DVec3::ZERO);
            self.sim.particles.torque.fill(DVec3::ZERO);
        }
    }

    /// Advances `steps` steps with the servos updating their walls' velocities every
    /// `servo_interval` steps from the walls' forces (on the GPU from the next batch on, as in
    /// the shear test).
    pub(crate) fn advance_servoed(&mut self, steps: u64) -> wgdem_core::Result<()> {
        self.forces_at = None;
        if matches!(self.engine, Engine::Cpu) {
            self.clear_shown_forces();
        }
        let servos = &mut self.servos;
        let mut control = |r: &wgdem_core::runner::Readout<'_>| {
            servos
                .iter_mut()
                .filter_map(|s| s.update(r.walls[s.wall].0))
                .collect()
        };
        let interval = self.servo_interval;
        match &mut self.engine {
            Engine::Cpu => {
                CpuBackend.advance_controlled(&mut self.sim, steps, interval, &mut control)?;
                wgdem_core::guard::check(&self.sim, "the Simulation's arrays")
            }
            Engine::Gpu(gpu) => {
                // The shear test's stepping reads the particles back at its end.
                self.synced = true;
                gpu.advance_controlled(&mut self.sim, steps, interval, &mut control)
            }
        }
    }

    /// Advances `steps` steps with the cell's velocity gradient set from the last step's
    /// stress (`wgdem_core::cell_servo`) before the first step after the control was set and
    /// every `interval` steps after it (so the updates fall on the same steps however the
    /// steps are split between calls). On the CPU reference any wall servos are updated every
    /// `servo_interval` steps as `advance_servoed` does (the GPU engine has none beside it);
    /// the GPU engine takes the steps of
    /// each interval as one batch and reads back the stress it sums on the device, not the
    /// particles (`Backend::advance_for_stress`).
    fn advance_cell_controlled(&mut self, steps: u64) -> wgdem_core::Result<()> {
        let Some(control) = self.cell_control else {
            return Ok(());
        };
        let (servo, modes) = (control.servo, control.modes);
        self.forces_at = None;
        let invalid = |message: String| wgdem_core::Error::Invalid {
            file: "Simulation.control_cell".to_owned(),
            field: "velocity_gradient".to_owned(),
            message,
        };
        let no_cell = || invalid("the scene has no periodic cell".to_owned());
        if let Engine::Gpu(gpu) = &mut self.engine {
            // (No wall servo acts beside it: `control_cell` and `servo` refuse each other on
            // the GPU engine.) The stress the device summed after the last batch; before any, that of the
            // state (read back).
            let mut stress = gpu.engine.cell_stress();
            if stress.is_none() && !self.synced {
                gpu.engine
                    .read_into(&mut self.sim)
                    .map_err(|e| wgdem_core::Error::Backend(e.to_string()))?;
                self.synced = true;
            }
            let mut done = 0;
            while done < steps {
                let mut n = control.steps_to_update(self.sim.steps);
                if n == 0 {
                    let stress_now = stress.or_else(|| self.sim.stress()).ok_or_else(no_cell)?;
                    self.sim
                        .set_velocity_gradient(servo.velocity_gradient(&modes, stress_now))
                        .map_err(invalid)?;
                    n = control.interval;
                }
                let n = n.min(steps - done);
                self.synced = false;
                let ran = gpu.advance_for_stress(&mut self.sim, n);
                if ran.is_err() {
                    // A blow-up reads the particles back with it.
                    self.synced = true;
                }
                stress = Some(ran?.ok_or_else(no_cell)?);
                done += n;
            }
            return Ok(());
        }
        self.clear_shown_forces();
        for k in 0..steps {
            if control.steps_to_update(self.sim.steps) == 0 {
                let stress = self.sim.stress().ok_or_else(no_cell)?;
                self.sim
                    .set_velocity_gradient(servo.velocity_gradient(&modes, stress))
                    .map_err(invalid)?;
            }
            self.sim.step();
            if (k + 1) % self.servo_interval == 0 {
                for servo in &mut self.servos {
                    if let Some((w, v)) = servo.update(self.sim.walls[servo.wall].force) {
                        self.sim.walls[w].velocity = v;
                    }
                }
            }
        }
        wgdem_core::guard::check(&self.sim, "the Simulation's arrays")
    }

    /// `sim`'s particles as the engine holds them.
    pub(crate) fn sync(&mut self) -> PyResult<()> {
        if !self.synced
            && let Engine::Gpu(gpu) = &self.engine
        {
            gpu.engine.read_into(&mut self.sim).map_err(gpu_to_py)?;
        }
        self.synced = true;
        Ok(())
    }

    /// `sim`'s particles with the forces and torques of the last step. Before the first step
    /// they are evaluated on a copy (so the contacts' history does not advance).
    pub(crate) fn sync_forces(&mut self) -> PyResult<()> {
        self.sync()?;
        if self.forces_at == Some(self.sim.steps) {
            return Ok(());
        }
        if self.sim.steps == 0 {
            let initial = self.initial_state();
            self.sim.particles.force = initial.particles.force;
            self.sim.particles.torque = initial.particles.torque;
        } else if let Engine::Gpu(gpu) = &self.engine {
            gpu.engine
                .read_forces_into(&mut self.sim)
                .map_err(gpu_to_py)?;
        }
        self.forces_at = Some(self.sim.steps);
        Ok(())
    }

    /// Before the first step, the state a row or snapshot shows: a copy with the initial
    /// state's forces, wall forces, counts and contacts (the history not advanced), as
    /// `wgdem run` writes its first row; `None` after it (`sim` with the last step's forces).
    pub(crate) fn initial(&mut self) -> PyResult<Option<CpuSimulation>> {
        if self.sim.steps != 0 {
            self.sync_forces()?;
            return Ok(None);
        }
        // One evaluation serves both the copy and the forces `sim` shows.
        self.sync()?;
        let initial = self.initial_state();
        self.sim
            .particles
            .force
            .clone_from(&initial.particles.force);
        self.sim
            .particles
            .torque
            .clone_from(&initial.particles.torque);
        self.forces_at = Some(0);
        Ok(Some(initial))
    }

    /// Before the first step: a copy of `sim` with the forces of the initial state evaluated
    /// as the first step evaluates them (its dashpots' predictor from no earlier force).
    pub(crate) fn initial_state(&self) -> CpuSimulation {
        let mut initial = self.sim.clone();
        initial.particles.force.fill(DVec3::ZERO);
        initial.particles.torque.fill(DVec3::ZERO);
        initial.compute_forces();
        initial
    }

    /// Writes snapshot `files` (paths relative to `out`) of the current state.
    pub(crate) fn snapshot(&mut self, out: &std::path::Path, files: &Snapshot) -> PyResult<()> {
        let (shown, histories) = match self.initial()? {
            Some(mut initial) => {
                let h = CpuBackend.contact_histories(&mut initial);
                (initial, h)
            }
            None => {
                let mut shown = self.sim.clone();
                let h = match &mut self.engine {
                    Engine::Cpu => CpuBackend.contact_histories(&mut shown),
                    Engine::Gpu(gpu) => gpu.contact_histories(&mut shown),
                };
                (shown, h)
            }
        };
        let histories = histories.map_err(to_py)?;
        let contacts = contacts(&shown, &histories);
        let looks = &self.looks;
        let frame = wgdem_core::snapshot::Frame {
            sim: &shown,
            reference: (&looks.reference.0, &looks.reference.1),
            contacts: &contacts,
            material_names: &looks.names,
            content: &looks.content,
        };
        wgdem_io::VtkFiles
            .snapshot(out, files, &frame)
            .map_err(to_py)
    }

    /// Hands `sim`'s gravity and local damping to the engine (the CPU steps `sim`).
    pub(crate) fn update_gravity_and_damping(&mut self) {
        if let Engine::Gpu(gpu) = &mut self.engine {
            gpu.engine.update_gravity_and_damping(&self.sim);
        }
    }

    /// Every touching contact, with the forces its model gives from the stored history.
    pub(crate) fn contacts(&mut self) -> PyResult<Vec<ContactRecord>> {
        self.sync()?;
        let histories: ContactHistories = match &mut self.engine {
            Engine::Cpu => self.sim.contact_histories(),
            Engine::Gpu(gpu) => gpu.contact_histories(&mut self.sim).map_err(to_py)?,
        };
        Ok(contacts(&self.sim, &histories))
    }

    /// The checkpoint file's bytes.
    pub(crate) fn save(&mut self) -> PyResult<Vec<u8>> {
        // The last step's forces go with the particles (the GPU does not keep them in the
        // buffers it saves).
        self.sync_forces()?;
        let engine = match &mut self.engine {
            Engine::Cpu => Vec::new(),
            Engine::Gpu(gpu) => gpu.save_state().map_err(to_py)?,
        };
        let saved = Saved {
            input_toml: self.input_toml.clone(),
            source: self.source.clone(),
            backend: self.backend().to_owned(),
            sim: self.sim.state(),
            engine,
        };
        let payload = postcard::to_allocvec(&saved)
            .map_err(|e| crate::errors::EngineError::new_err(e.to_string()))?;
        Ok(checkpoint::seal(
            Kind::Simulation,
            FORMAT,
            &self.input_toml,
            &payload,
        ))
    }
}

/// Advances `session` by `steps` steps in chunks ([`Session::chunk`]), the GIL released
/// during each and Ctrl-C looked for between them.
pub(crate) fn step_session(py: Python<'_>, session: &mut Session, mut steps: u64) -> PyResult<()> {
    let chunk = session.chunk();
    while steps > 0 {
        let k = steps.min(chunk);
        py.detach(|| session.advance(k)).map_err(to_py)?;
        steps -= k;
        py.check_signals()?;
    }
    Ok(())
}

/// Hands `session`'s velocities and angular velocities to the engine (the CPU steps `sim`).
pub(crate) fn upload_velocities(session: &mut Session) -> PyResult<()> {
    if let Engine::Gpu(gpu) = &mut session.engine {
        gpu.engine
            .write_velocities(&session.sim)
            .map_err(gpu_to_py)?;
    }
    Ok(())
}
