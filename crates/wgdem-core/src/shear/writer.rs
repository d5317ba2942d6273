//! What a direct shear test writes beyond its CSV, summary and checkpoint: ParaView snapshots
//! and plots. Core declares the interface; `wgdem-io` implements it (VTK through `vtkio`, plots
//! through `plotters`), so that the physics does not depend on file-format crates.

use std::path::Path;

use glam::{DQuat, DVec3};

use super::{Row, Snapshot};
use crate::cpu::Simulation;
use crate::error::Result;

/// Writes a shear test's snapshot files and plots; each file atomically.
pub trait ShearWriter {
    /// The particles of `sim` at `path` (a `.vtu`), with displacement and rotation measured
    /// from `reference` (positions and orientations at the start of the shear).
    fn particles(
        &self,
        path: &Path,
        sim: &Simulation,
        reference: &(Vec<DVec3>, Vec<DQuat>),
    ) -> Result<()>;
    /// The contact network of `sim` at `path` (a `.vtp`).
    fn force_chains(&self, path: &Path, sim: &Simulation) -> Result<()>;
    /// The collection file indexing `snapshots` (under `out/vtk/`).
    fn collection(&self, out: &Path, snapshots: &[Snapshot]) -> Result<()>;
    /// The plots of `rows` into the directory `dir`.
    fn plots(&self, dir: &Path, rows: &[Row]) -> Result<()>;
}
