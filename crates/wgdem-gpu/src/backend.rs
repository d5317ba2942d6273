//! The GPU engine as a [`wgdem_core::runner::Backend`]: steps on the device, then copies the
//! state back.

use glam::{DMat3, DVec3};
use wgdem_core::cpu::Simulation;
use wgdem_core::runner::{Readout, RowSums};

use crate::context::GpuError;
use crate::engine::GpuEngine;

/// Below this many spheres `backend = "auto"` takes the CPU reference when the only adapter is
/// a software one. On lavapipe with two cores the CPU reference (one thread) is faster up to
/// between 5 832 and 9 680 spheres of the bench lattice (1.2× at 5 832, the GPU engine 1.1–1.4×
/// at 9 680: `wgdem bench --particles N --backend cpu|gpu`, docs/performance.md), and on the
/// settling twin of LIGGGHTS's preparation at 10 000 (33 s against 36 s); a 1 000-sphere pour
/// ran 13–16 times faster on the CPU.
pub const AUTO_SOFTWARE_CPU_BELOW: usize = 10_000;

/// The same for a scene in a periodic cell, whose contacts through images and affine field
/// cost the GPU engine more than the CPU reference: on lavapipe with two cores the CPU
/// reference (one thread) was 1.1–1.45× faster at 10 648, 29 791 and 97 336 spheres of the
/// bench lattice in a periodic cube (`wgdem bench --scene` of `assets/scenes/periodic_lattice.toml`
/// and the same lattice at 31³ and 46³, `--backend cpu|gpu`, two alternated rounds,
/// docs/performance.md); larger cells were not measured. A cell test's servo, which waits
/// for the device every control interval, favours the CPU further.
pub const AUTO_SOFTWARE_CPU_BELOW_PERIODIC: usize = 100_000;

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
        self.take_cell(sim)?;
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
        self.take_cell(sim)?;
        let ran = self.stream(steps, interval, control);
        self.finish(sim, ran)
    }

    fn advance_for_row(
        &mut self,
        sim: &mut Simulation,
        steps: u64,
        interval: u64,
        control: &mut dyn FnMut(&Readout<'_>) -> Vec<(usize, DVec3)>,
    ) -> wgdem_core::Result<Option<RowSums>> {
        if sim.cell().is_some() {
            // The row's pairs through the cell's images are the host's to find.
            self.advance_controlled(sim, steps, interval, control)?;
            return Ok(None);
        }
        let ran = self.stream(steps, interval, control);
        self.finish_reading(sim, ran, false)?;
        let sums = self.engine.row_sums().map_err(backend_error)?;
        Ok(Some(sums.to_core()))
    }

    fn sync_particles(&mut self, sim: &mut Simulation) -> wgdem_core::Result<()> {
        self.engine.read_into(sim).map_err(backend_error)
    }

    fn advance_for_stress(
        &mut self,
        sim: &mut Simulation,
        steps: u64,
    ) -> wgdem_core::Result<Option<DMat3>> {
        self.advance_walls_only(sim, steps)?;
        match (sim.cell(), self.engine.cell_stress()) {
            (Some(_), None) => Err(wgdem_core::Error::Backend(
                "the GPU engine gave no cell stress after its steps".to_owned(),
            )),
            (_, stress) => Ok(stress),
        }
    }

    fn update_walls(&mut self, sim: &Simulation) -> wgdem_core::Result<()> {
        self.engine.update_walls(sim);
        Ok(())
    }

    fn update_pair_params(&mut self, sim: &Simulation) -> wgdem_core::Result<()> {
        self.engine.update_pair_table(sim).map_err(backend_error)
    }

    fn update_gravity_and_damping(&mut self, sim: &Simulation) -> wgdem_core::Result<()> {
        self.engine.update_gravity_and_damping(sim);
        Ok(())
    }

    fn reload(&mut self, sim: &Simulation) -> wgdem_core::Result<()> {
        self.engine = self.engine.rebuild(sim).map_err(backend_error)?;
        Ok(())
    }

    fn read_forces(&mut self, sim: &mut Simulation) -> wgdem_core::Result<()> {
        self.engine.read_forces_into(sim).map_err(backend_error)
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

    /// The engine `backend = "auto"` takes for `sim` (see [`AUTO_SOFTWARE_CPU_BELOW`] and
    /// [`AUTO_SOFTWARE_CPU_BELOW_PERIODIC`]): the GPU
    /// engine on `adapter` (`Some`), or `None` for the CPU reference, with the reason in words
    /// ("auto: cpu, because …"). Without a usable adapter it takes the CPU reference, unless an
    /// adapter was named, which is then refused as with `backend = "gpu"`.
    pub fn auto(
        adapter: Option<&str>,
        sim: &Simulation,
        options: crate::GpuOptions,
    ) -> Result<(Option<Self>, String), GpuError> {
        let n = sim.particles.len();
        if let Some((why, _)) = crate::engine::cpu_only(sim) {
            return Ok((None, format!("auto: cpu, because {why}")));
        }
        // The adapter alone first: a device is created only for the GPU engine.
        let info = match crate::context::adapter_info(adapter) {
            Ok(info) => info,
            Err(e) if adapter.is_none() => {
                return Ok((
                    None,
                    format!("auto: cpu, because no GPU adapter can be used ({e})"),
                ));
            }
            Err(e) => return Err(e),
        };
        let software = crate::context::is_software(&info);
        let described = crate::context::describe(&info);
        let (below, spheres) = match sim.cell() {
            Some(_) => (
                AUTO_SOFTWARE_CPU_BELOW_PERIODIC,
                "spheres in a periodic cell",
            ),
            None => (AUTO_SOFTWARE_CPU_BELOW, "spheres"),
        };
        if software && n < below {
            return Ok((
                None,
                format!(
                    "auto: cpu, because the GPU adapter is a software one ({described}) and {n} {spheres} are fewer than {below}, where the CPU reference is faster (--backend gpu to use it anyway)"
                ),
            ));
        }
        let why = if software {
            format!("{n} {spheres} are at least {below}")
        } else {
            "a hardware adapter".to_owned()
        };
        let backend = Self::new(adapter, sim, options)?;
        let why = format!("auto: gpu, because {why}: {}", backend.adapter);
        Ok((Some(backend), why))
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
        self.take_cell(sim)?;
        let ran = self.engine.run(steps);
        self.finish_reading(sim, ran, false)
    }

    /// `steps` steps in batches of `interval`, showing `control` the wall forces after each.
    fn stream(
        &mut self,
        steps: u64,
        interval: u64,
        control: &mut dyn FnMut(&Readout<'_>) -> Vec<(usize, DVec3)>,
    ) -> Result<(), GpuError> {
        self.engine
            .set_batch_steps(interval.clamp(1, u32::MAX as u64) as u32);
        self.engine.run_streaming(steps, |r, walls| {
            let readout = Readout {
                steps: r.steps,
                time: r.time,
                walls: &r.walls,
                stats: r.stats,
            };
            for (w, v) in control(&readout) {
                walls.set_velocity(w, v);
            }
        })
    }

    /// The velocity gradient of `sim`'s periodic cell (set by a servo, or by hand) for the
    /// next steps.
    fn take_cell(&mut self, sim: &Simulation) -> wgdem_core::Result<()> {
        match sim.cell() {
            Some(c) => self
                .engine
                .set_velocity_gradient(c.velocity_gradient())
                .map_err(backend_error),
            None => Ok(()),
        }
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
