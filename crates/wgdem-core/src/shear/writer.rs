//! What a direct shear test writes beyond its CSV, summary and checkpoint: ParaView snapshots
//! ([`SnapshotWriter`]) and plots. Core declares the interface; `wgdem-io` implements it (VTK
//! through `vtkio`, plots through `plotters`), so that the physics does not depend on
//! file-format crates.

use std::path::Path;

use super::Row;
use crate::cpu::Simulation;
use crate::error::Result;
use crate::snapshot::SnapshotWriter;

/// Writes a shear test's snapshot files and plots; each file atomically.
pub trait ShearWriter: SnapshotWriter {
    /// The plots of `rows` into the directory `dir`.
    fn plots(&self, dir: &Path, rows: &[Row]) -> Result<()>;
    /// The specimen of `sim` as a packing, `out/NAME.csv` and `out/NAME.vtu`, which
    /// `wgdem shear --specimen` and scenes' `kind = "file"` groups read back.
    fn specimen(&self, out: &Path, name: &str, sim: &Simulation) -> Result<()>;
}
