//! The engines that advance a [`Simulation`]: the [`Backend`] trait that the protocols (run,
//! shear, contact cases) and the snapshots drive, and the CPU reference's implementation of it
//! (the GPU engine's lives in `wgdem-gpu`).

use glam::{DMat3, DVec3};

use crate::cpu::{ContactHistories, Simulation, StepStats};
use crate::error::Result;

/// An engine that advances a [`Simulation`].
pub trait Backend {
    /// "cpu" or "gpu".
    fn name(&self) -> &'static str;
    /// The device that runs the steps, if it is worth naming.
    fn adapter(&self) -> Option<String> {
        None
    }
    /// Device memory the backend holds for the simulation (bytes), where it keeps any.
    fn memory_bytes(&self) -> Option<u64> {
        None
    }
    /// Advances `steps` steps; afterwards `sim` holds the state, the wall forces and contact
    /// counts of the last step.
    fn advance(&mut self, sim: &mut Simulation, steps: u64) -> Result<()>;

    /// Advances `steps` steps like [`Backend::advance`], showing `control` the wall forces
    /// every `interval` steps; the wall velocities it returns apply from a later step (the
    /// next one on the CPU, the next batch submitted on the GPU, which keeps one batch in
    /// flight while the host reads the other). The schedule depends only on the step counts,
    /// so a run is reproducible whatever the host's timing.
    fn advance_controlled(
        &mut self,
        sim: &mut Simulation,
        steps: u64,
        interval: u64,
        control: &mut dyn FnMut(&Readout<'_>) -> Vec<(usize, DVec3)>,
    ) -> Result<()>;

    /// Advances `steps` steps like [`Backend::advance_controlled`] for a row of a direct shear
    /// test, and returns what the row measures of the particles ([`RowSums`]) where the
    /// backend sums it itself: `sim` then holds the walls, time and step count, and its
    /// particles only after [`Backend::sync_particles`] (the GPU engine reads back 48 bytes,
    /// not the state, and the host finds no contacts). `None` where `sim` holds the particles
    /// and the host measures them (the CPU reference; a periodic cell).
    fn advance_for_row(
        &mut self,
        sim: &mut Simulation,
        steps: u64,
        interval: u64,
        control: &mut dyn FnMut(&Readout<'_>) -> Vec<(usize, DVec3)>,
    ) -> Result<Option<RowSums>> {
        self.advance_controlled(sim, steps, interval, control)?;
        Ok(None)
    }

    /// Copies the particles into `sim` after [`Backend::advance_for_row`] left them out (the
    /// CPU reference's `sim` holds them already).
    fn sync_particles(&mut self, _sim: &mut Simulation) -> Result<()> {
        Ok(())
    }

    /// Advances `steps` steps like [`Backend::advance`] for a servo of the periodic cell,
    /// which needs only the stress afterwards: returns [`Simulation::stress`] of the last
    /// step. `sim` then holds the cell, the walls, time and step count, but its particles
    /// only where the backend keeps them there (the CPU reference); the GPU engine sums the
    /// stress on the device and reads back only the sums, not the particles.
    fn advance_for_stress(&mut self, sim: &mut Simulation, steps: u64) -> Result<Option<DMat3>> {
        self.advance(sim, steps)?;
        Ok(sim.stress())
    }

    /// After [`Backend::advance`]: the particles' forces and torques of the last step into
    /// `sim` (the CPU reference's `sim` holds them already; the GPU engine reads them back).
    fn read_forces(&mut self, _sim: &mut Simulation) -> Result<()> {
        Ok(())
    }

    /// For snapshots, after [`Backend::advance`]: the particles' forces and torques of the
    /// last step into `sim`, and the contact histories the backend keeps.
    fn contact_histories(&mut self, sim: &mut Simulation) -> Result<ContactHistories> {
        Ok(sim.contact_histories())
    }

    /// Takes over the walls of `sim` (shapes and velocities set by the host).
    fn update_walls(&mut self, sim: &Simulation) -> Result<()>;

    /// Takes over the material-pair table of `sim` (e.g. a friction change), keeping history.
    fn update_pair_params(&mut self, sim: &Simulation) -> Result<()>;

    /// Takes over the gravity and local damping of `sim` (e.g. a preparation's damping
    /// switched off), keeping the state and contact history.
    fn update_gravity_and_damping(&mut self, sim: &Simulation) -> Result<()>;

    /// Starts again from `sim` with no contact history (after particles were resized).
    fn reload(&mut self, sim: &Simulation) -> Result<()>;

    /// State the backend keeps beyond what [`Backend::advance`] copies into `sim` (the GPU's
    /// buffers, bit for bit), for checkpoints.
    fn save_state(&mut self) -> Result<Vec<u8>>;

    /// Restores [`Backend::save_state`] output taken with `sim` in the same state.
    fn restore_state(&mut self, sim: &Simulation, state: &[u8]) -> Result<()>;

    /// Neighbour-list builds since the run began (the CPU's count is in `sim`).
    fn neighbour_builds(&mut self, sim: &Simulation) -> Result<u64> {
        Ok(sim.neighbour_builds)
    }
}

/// What a direct shear row measures of the particles, summed by the backend
/// ([`Backend::advance_for_row`]; the GPU engine's `row_reduce.wgsl`, in f32).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowSums {
    /// Σ ½ m |v|² + ½ I |ω|² (J).
    pub kinetic_energy: f64,
    /// The highest sphere top, max(z + r) (m).
    pub top: f64,
    /// The touching pairs (overlap > 0), each once.
    pub pairs: u64,
    /// Σ n ⊗ n over those pairs (the fabric tensor times `pairs`).
    pub normals: DMat3,
}

impl RowSums {
    /// The fabric tensor `φ = (1/N_c) Σ n ⊗ n` ([`crate::analysis::fabric_tensor`]); zero
    /// without contacts.
    pub fn fabric(&self) -> DMat3 {
        if self.pairs == 0 {
            DMat3::ZERO
        } else {
            self.normals * (1.0 / self.pairs as f64)
        }
    }
}

/// What the host sees of the walls during [`Backend::advance_controlled`].
#[derive(Debug, Clone, Copy)]
pub struct Readout<'a> {
    /// Steps taken.
    pub steps: u64,
    /// Simulated time (s).
    pub time: f64,
    /// Force (N) and torque (N·m) on each wall in the last step.
    pub walls: &'a [(DVec3, DVec3)],
    /// Contact counts of the last step.
    pub stats: StepStats,
}

/// The f64 CPU reference: steps the simulation in place.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn advance(&mut self, sim: &mut Simulation, steps: u64) -> Result<()> {
        sim.run(steps);
        Ok(())
    }

    fn advance_controlled(
        &mut self,
        sim: &mut Simulation,
        steps: u64,
        interval: u64,
        control: &mut dyn FnMut(&Readout<'_>) -> Vec<(usize, DVec3)>,
    ) -> Result<()> {
        let mut done = 0;
        let mut walls = Vec::with_capacity(sim.walls.len());
        while done < steps {
            let n = interval.max(1).min(steps - done);
            sim.run(n);
            done += n;
            walls.clear();
            walls.extend(sim.walls.iter().map(|w| (w.force, w.torque)));
            let readout = Readout {
                steps: sim.steps,
                time: sim.time,
                walls: &walls,
                stats: sim.stats,
            };
            for (w, v) in control(&readout) {
                sim.walls[w].velocity = v;
            }
        }
        Ok(())
    }

    // The CPU reference steps `sim` itself: nothing to take over or save beyond it.
    fn update_walls(&mut self, _sim: &Simulation) -> Result<()> {
        Ok(())
    }
    fn update_pair_params(&mut self, _sim: &Simulation) -> Result<()> {
        Ok(())
    }
    fn update_gravity_and_damping(&mut self, _sim: &Simulation) -> Result<()> {
        Ok(())
    }
    fn reload(&mut self, _sim: &Simulation) -> Result<()> {
        Ok(())
    }
    fn save_state(&mut self) -> Result<Vec<u8>> {
        Ok(Vec::new())
    }
    fn restore_state(&mut self, _sim: &Simulation, _state: &[u8]) -> Result<()> {
        Ok(())
    }
}
