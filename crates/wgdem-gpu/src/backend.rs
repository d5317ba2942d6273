//! The GPU engine as a [`wgdem_core::runner::Backend`]: steps on the device, then copies the
//! state back.

use glam::DVec3;
use wgdem_core::cpu::Simulation;
use wgdem_core::runner::Readout;

use crate::context::GpuError;
use crate::engine::GpuEngine;

/// The GPU engine as a runner backend: steps on the device, then copies the state back.
pub struct GpuBackend {
    /// The engine.
    pub engine: GpuEngine,
    /// The adapter's description.
    pub adapter: String,
}

impl wgdem_core::runner::Backend for GpuBackend {
    fn name(&self) -> &'static str {
        "gpu"
    }
    fn adapter(&self) -> Option<String> {
        Some(self.adapter.clone())
    }
    fn memory_bytes(&self) -> Option<u64> {
        Some(self.engine.memory_bytes())
    }
    fn neighbour_builds(&mut self, _sim: &Simulation) -> wgdem_core::Result<u64> {
        self.engine
            .neighbour_builds()
            .map(u64::from)
            .map_err(backend_error)
    }
    fn advance(&mut self, sim: &mut Simulation, steps: u64) -> wgdem_core::Result<()> {
        let ran = self.engine.run(steps);
        self.finish(sim, ran)
    }

    fn advance_controlled(
        &mut self,
        sim: &mut Simulation,
        steps: u64,
        interval: u64,
        control: &mut dyn FnMut(&Readout<'_>) -> Vec<(usize, DVec3)>,
    ) -> wgdem_core::Result<()> {
        self.engine
            .set_batch_steps(interval.clamp(1, u32::MAX as u64) as u32);
        let ran = self.engine.run_streaming(steps, |r, walls| {
            let readout = Readout {
                steps: r.steps,
                time: r.time,
                walls: &r.walls,
                stats: r.stats,
            };
            for (w, v) in control(&readout) {
                walls.set_velocity(w, v);
            }
        });
        self.finish(sim, ran)
    }

    fn update_walls(&mut self, sim: &Simulation) -> wgdem_core::Result<()> {
        self.engine.update_walls(sim);
        Ok(())
    }

    fn update_pair_params(&mut self, sim: &Simulation) -> wgdem_core::Result<()> {
        self.engine.update_pair_table(sim).map_err(backend_error)
    }

    fn reload(&mut self, sim: &Simulation) -> wgdem_core::Result<()> {
        self.engine = self.engine.rebuild(sim).map_err(backend_error)?;
        Ok(())
    }

    fn contact_histories(
        &mut self,
        sim: &mut Simulation,
    ) -> wgdem_core::Result<wgdem_core::snapshot::ContactHistories> {
        self.engine.contact_histories(sim).map_err(backend_error)
    }

    fn save_state(&mut self) -> wgdem_core::Result<Vec<u8>> {
        self.engine.save_state().map_err(backend_error)
    }

    fn restore_state(&mut self, sim: &Simulation, state: &[u8]) -> wgdem_core::Result<()> {
        self.engine = self
            .engine
            .restore_state(sim, state)
            .map_err(backend_error)?;
        Ok(())
    }
}

impl GpuBackend {
    /// The engine for `sim` on `adapter` (or the default adapter), with `options`.
    pub fn new(
        adapter: Option<&str>,
        sim: &Simulation,
        options: crate::GpuOptions,
    ) -> Result<Self, GpuError> {
        let ctx = crate::GpuContext::new(adapter)?;
        let engine = GpuEngine::new(&ctx.device, &ctx.queue, sim, options)?;
        Ok(Self {
            engine,
            adapter: ctx.describe(),
        })
    }

    /// Advances `steps` steps like [`wgdem_core::runner::Backend::advance`] but copies only
    /// the walls, time and counts into `sim`, not the particles (which [`GpuEngine::read_into`]
    /// copies when the host wants them): for a host that steers walls between short batches
    /// and looks at the particles now and then. A blow-up reads the particles back too.
    pub fn advance_walls_only(
        &mut self,
        sim: &mut Simulation,
        steps: u64,
    ) -> wgdem_core::Result<()> {
        let ran = self.engine.run(steps);
        self.finish_reading(sim, ran, false)
    }

    /// Reads the state back after stepping; a blow-up the GPU counted is reported as
    /// [`wgdem_core::Error::BlowUp`] with the state read back, so that the caller can write it
    /// for diagnosis (`wgdem_core::output::guarded`).
    fn finish(
        &mut self,
        sim: &mut Simulation,
        ran: Result<(), GpuError>,
    ) -> wgdem_core::Result<()> {
        self.finish_reading(sim, ran, true)
    }

    fn finish_reading(
        &mut self,
        sim: &mut Simulation,
        ran: Result<(), GpuError>,
        particles: bool,
    ) -> wgdem_core::Result<()> {
        match ran {
            Ok(()) if particles => self.engine.read_into(sim).map_err(backend_error),
            Ok(()) => self.engine.read_walls_into(sim).map_err(backend_error),
            Err(e @ GpuError::Runaway { .. }) => {
                self.engine.read_into(sim).map_err(backend_error)?;
                Err(wgdem_core::Error::BlowUp(e.to_string()))
            }
            Err(e) => Err(backend_error(e)),
        }
    }
}

fn backend_error(e: GpuError) -> wgdem_core::Error {
    wgdem_core::Error::Backend(e.to_string())
}
