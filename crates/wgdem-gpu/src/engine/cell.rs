//! The periodic cell on the device (`Cell` in common.wgsl; the conventions are
//! `wgdem_core::cell`'s). The host advances the cell in f64 exactly as the CPU reference does
//! (`H ← exp(L Δt) H` each step) and writes the cell of every step of a run into a table before
//! the run, at most [`CELL_TABLE_STEPS`] steps at a time: the kernels of step n read entry
//! n − first, so the cell the spheres are mapped, wrapped and paired with is the reference's,
//! rounded to f32 (double-single for the edges). `rebuild.plan` copies the entry of a build's
//! step to `Cell.built`, which the hash bins and the list's images use and from which
//! `integrate` measures the cell's drift. After a run the host reads back the images of the
//! wraps and the pairs' Σ f ⊗ d, summed in f64 into the Love–Weber stress.

use glam::DMat3;
use wgdem_core::cell::PeriodicCell;
use wgdem_core::cpu::Simulation;

use super::GpuEngine;
use super::readback::d3;
use super::state::split3;
use crate::context::GpuError;
use crate::layout::{CellHead, CellStep};

/// Steps whose cells one table holds: a longer run is taken in pieces of this many steps.
pub(super) const CELL_TABLE_STEPS: u64 = 1024;

/// Most hash bins along an edge (`pack_cell` keeps 10 bits of z).
const MAX_BINS: f64 = 1023.0;

/// Byte offsets in the cell buffer: the head, the cell at the last build, the table.
const BUILT_AT: u64 = size_of::<CellHead>() as u64;
const STEPS_AT: u64 = BUILT_AT + size_of::<CellStep>() as u64;

/// `Sums` in cell_reduce.wgsl: Σ f ⊗ d and Σ m v ⊗ v, two `mat3x3<f32>` of three columns
/// padded to 16 bytes.
pub(super) const CELL_SUMS_BYTES: u64 = 96;

/// The cell buffer's size: the head, the built cell and a table of `CELL_TABLE_STEPS + 1`
/// entries (a run's steps and the one after its last) where the scene is periodic.
pub(super) fn cell_buffer_bytes(periodic: bool) -> u64 {
    let entries = if periodic { CELL_TABLE_STEPS + 1 } else { 1 };
    STEPS_AT + entries * size_of::<CellStep>() as u64
}

/// The host's side of the periodic cell.
#[derive(Debug, Clone)]
pub(super) struct HostCell {
    /// The cell at the engine's step (f64, the CPU reference's arithmetic).
    pub(super) now: PeriodicCell,
    /// The neighbour reach: the largest diameter, the skin and a bridge's reach (m).
    pub(super) reach: f64,
    /// The cells of the table last written, from step `first` on.
    table: Vec<PeriodicCell>,
    first: u64,
}

impl HostCell {
    pub(super) fn new(now: PeriodicCell, reach: f64) -> Self {
        Self {
            now,
            reach,
            table: Vec::new(),
            first: 0,
        }
    }

    /// The cell at `step`, where the last table holds it.
    fn at(&self, step: u64) -> Option<&PeriodicCell> {
        self.table
            .get(usize::try_from(step.checked_sub(self.first)?).ok()?)
    }

    /// The volume of the cell that the last of `steps` steps began in, in which its
    /// contacts were evaluated.
    fn last_step_volume(&self, steps: u64) -> f64 {
        (steps.checked_sub(1).and_then(|s| self.at(s)))
            .unwrap_or(&self.now)
            .volume()
    }
}

/// Three columns of f32 (padded to four) as a matrix.
fn mat3(columns: &[[f32; 4]]) -> DMat3 {
    DMat3::from_cols(d3(columns[0]), d3(columns[1]), d3(columns[2]))
}

fn columns(m: DMat3) -> [[f32; 4]; 3] {
    [m.x_axis, m.y_axis, m.z_axis].map(|c| [c.x as f32, c.y as f32, c.z as f32, 0.0])
}

/// One table entry: the edges in double-single, `H⁻¹` and the bins.
fn entry(cell: &PeriodicCell, bins: [u32; 3]) -> CellStep {
    let edges = cell.edges().map(split3);
    let inverse = cell.matrix().inverse();
    CellStep {
        h_hi: edges.map(|e| e.0),
        h_lo: edges.map(|e| e.1),
        inv: columns(inverse),
        bins: [bins[0], bins[1], bins[2], 0],
    }
}

/// The cells of the `steps` steps from `now`, and the one after the last (a step's
/// integration wraps into the next step's cell): each advanced from the last as the CPU
/// reference advances it. Where the cell turns flat or narrower than twice `reach`, the cells
/// before that step and why it stops there (naming the step): the steps up to it are taken.
fn advance_cells(
    now: &PeriodicCell,
    first: u64,
    steps: u64,
    dt: f64,
    reach: f64,
) -> (Vec<PeriodicCell>, Option<String>) {
    let mut cells = Vec::with_capacity(steps as usize + 1);
    let mut cell = *now;
    for k in 0..=steps {
        let refuse = |e: String| {
            format!(
                "the periodic cell at step {}: {e}; the run stops there",
                first + k
            )
        };
        if k > 0 && cell.velocity_gradient() != DMat3::ZERO {
            match cell.advanced(dt) {
                Ok(next) => cell = next,
                Err(e) => return (cells, Some(refuse(e))),
            }
        }
        if let Err(e) = cell.check_reach(reach) {
            return (cells, Some(refuse(e)));
        }
        cells.push(cell);
    }
    (cells, None)
}

/// Hash bins along each edge for every cell of `cells`: each bin at least `reach` wide in
/// all of them (`⌊w_k / reach⌋` of the narrowest), so that a pair within reach lies in the same
/// or adjacent bins, as in `broadphase::periodic_pairs_within`.
fn bins_for(cells: &[PeriodicCell], reach: f64) -> [u32; 3] {
    let mut narrowest = [f64::INFINITY; 3];
    for c in cells {
        for (n, w) in narrowest.iter_mut().zip(c.widths()) {
            *n = n.min(w);
        }
    }
    narrowest.map(|w| (w / reach).floor().clamp(1.0, MAX_BINS) as u32)
}

impl GpuEngine {
    /// Sets the periodic cell's velocity gradient `L` (1/s) for the steps from now on (a
    /// servo's output, between runs); the cell's edges are the engine's own.
    pub fn set_velocity_gradient(&mut self, l: DMat3) -> Result<(), GpuError> {
        match &mut self.cell {
            Some(host) => host
                .now
                .set_velocity_gradient(l)
                .map_err(GpuError::Unsupported),
            None => Err(GpuError::Unsupported(
                "this engine was built for a scene without a periodic cell".to_owned(),
            )),
        }
    }

    /// The periodic cell at the engine's step, where the scene has one.
    pub fn cell(&self) -> Option<&PeriodicCell> {
        self.cell.as_ref().map(|c| &c.now)
    }

    /// Writes the cells of the next `steps` steps (at most [`CELL_TABLE_STEPS`]) and the
    /// head, and points the kernels' parameters at them. Returns the steps the table covers
    /// and, where that is fewer (the cell would turn too narrow or flat), why the run must
    /// stop after them.
    pub(super) fn write_cell_table(&mut self, steps: u64) -> (u64, Option<GpuError>) {
        let Some(host) = &mut self.cell else {
            return (steps, None);
        };
        let dt = self.schedule.dt;
        let (cells, stop) = advance_cells(&host.now, self.steps, steps, dt, host.reach);
        // A step needs its cell and the next one's.
        let covered = (cells.len() as u64).saturating_sub(1);
        let stop = stop.map(GpuError::Unsupported);
        if cells.is_empty() {
            return (0, stop);
        }
        let bins = bins_for(&cells, host.reach);
        let table: Vec<CellStep> = cells.iter().map(|c| entry(c, bins)).collect();
        let (origin_hi, origin_lo) = split3(host.now.origin());
        let head = CellHead {
            l: columns(host.now.velocity_gradient()),
            map: columns(host.now.step_map(dt) - DMat3::IDENTITY),
            origin_hi,
            origin_lo,
        };
        host.table = cells;
        host.first = self.steps;
        let b = &self.buffers;
        self.queue
            .write_buffer(&b.cell, 0, bytemuck::bytes_of(&head));
        self.queue
            .write_buffer(&b.cell, STEPS_AT, bytemuck::cast_slice(&table));
        let p = &mut self.shape.params;
        p.cell_first_lo = self.steps as u32;
        p.cell_first_hi = (self.steps >> 32) as u32;
        p.cell_steps = table.len() as u32;
        self.queue
            .write_buffer(&b.params, 0, bytemuck::bytes_of(&self.shape.params));
        (covered, stop)
    }

    /// After a run: the host's cell is the one at the step the engine reached.
    pub(super) fn cell_reached(&mut self) {
        if let Some(host) = &mut self.cell
            && let Some(c) = host.at(self.steps).copied()
        {
            host.now = c;
        }
    }

    /// The stress of the periodic cell after the last batch, as `Simulation::stress` gives
    /// it (`(1/V₀) Σ f ⊗ d + (1/V) Σ m v ⊗ v`, `V₀` the cell's volume at the last step's start,
    /// `V` at its end), from the sums the device made in f32 (cell_reduce.wgsl) and read back
    /// with the batch: without reading the particles. `None` without a cell, or before a batch
    /// (after a restore).
    pub fn cell_stress(&self) -> Option<DMat3> {
        let host = self.cell.as_ref()?;
        let last = &self.stream.last;
        let sums = last.cell_sums.filter(|_| last.steps == self.steps)?;
        let contact = mat3(&sums[..3]) * (1.0 / host.last_step_volume(self.steps));
        Some(contact + mat3(&sums[3..]) * (1.0 / host.now.volume()))
    }

    /// The periodic state into `sim`, from the images of the wraps by stable id and the
    /// pairs' Σ f ⊗ d by particle as read back: the cell, the images, and the last step's
    /// contact stress `(1/V) Σ f ⊗ d`, summed in f64 in the particles' order with the volume of
    /// the cell the step began in.
    pub(super) fn cell_into(
        &self,
        sim: &mut Simulation,
        images: &[[i32; 4]],
        parts: &[[[f32; 4]; 3]],
    ) -> Result<(), GpuError> {
        let Some(host) = &self.cell else {
            return Ok(());
        };
        let sum = parts.iter().map(|part| mat3(part)).sum::<DMat3>();
        let volume = host.last_step_volume(self.steps);
        let Some(periodic) = sim.periodic_mut() else {
            return Err(GpuError::Unsupported(
                "the simulation read into has no periodic cell".to_owned(),
            ));
        };
        periodic.contact_stress = sum * (1.0 / volume);
        // By stable id, which is the simulation's index.
        for (image, k) in periodic.images.iter_mut().zip(images) {
            *image = [k[0] as i64, k[1] as i64, k[2] as i64];
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    fn cube(side: f64, l: DMat3) -> PeriodicCell {
        PeriodicCell::new(
            [DVec3::X * side, DVec3::Y * side, DVec3::Z * side],
            DVec3::ZERO,
            l,
        )
        .expect("a cube")
    }

    /// The table's cells are the CPU reference's, step by step, bit for bit.
    #[test]
    fn the_table_advances_the_cell_as_the_reference_does() {
        let l = DMat3::from_cols(
            DVec3::new(-0.1, 0.0, 0.0),
            DVec3::ZERO,
            DVec3::new(0.05, 0.0, 0.0),
        );
        let start = cube(0.01, l);
        let (cells, stop) = advance_cells(&start, 7, 20, 1e-4, 1e-3);
        assert_eq!((cells.len(), stop), (21, None));
        let mut c = start;
        for (k, got) in cells.iter().enumerate() {
            assert_eq!(*got, c, "step {k}");
            c = c.advanced(1e-4).expect("a cell");
        }
    }

    /// A cell that would become narrower than twice the reach is refused with its step.
    #[test]
    fn a_cell_squeezed_below_twice_the_reach_is_refused_naming_the_step() {
        let squeeze = DMat3::from_diagonal(DVec3::new(-1000.0, 0.0, 0.0));
        let (cells, stop) = advance_cells(&cube(0.01, squeeze), 100, 50, 1e-4, 4.9e-3);
        let e = stop.expect("too narrow");
        assert_eq!(cells.len(), 1, "{e}");
        assert!(
            e.contains("at step 101") && e.contains("twice the neighbour reach"),
            "{e}"
        );
    }

    /// Bins are at least the reach wide in the narrowest cell, between 1 and the packing's
    /// limit, and at the extremes of f64.
    #[test]
    fn bins_are_at_least_the_reach_wide() {
        let c = cube(0.01, DMat3::ZERO);
        assert_eq!(bins_for(&[c], 1e-3), [10; 3]);
        assert_eq!(bins_for(&[c], 0.0099), [1; 3]);
        assert_eq!(bins_for(&[c], 1e-300), [1023; 3]);
        assert_eq!(bins_for(&[c], f64::MAX), [1; 3]);
        let narrow = cube(0.005, DMat3::ZERO);
        assert_eq!(bins_for(&[c, narrow], 1e-3), [5; 3]);
    }
}
