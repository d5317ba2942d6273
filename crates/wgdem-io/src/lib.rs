//! wgdem's file writers: ParaView (VTK XML) snapshots and plots. The physics crate,
//! `wgdem-core`, writes CSV and JSON itself and reaches these through
//! [`wgdem_core::shear::ShearWriter`], so that it depends on no file-format crate.
//!
//! - [`vtk`]: particles, force chains and the `.pvd` collection;
//! - [`plots`]: stress ratio and vertical displacement against shear strain (PNG, SVG).

pub mod plots;
pub mod vtk;

use std::path::Path;

use glam::{DQuat, DVec3};
use wgdem_core::cpu::Simulation;
use wgdem_core::error::Result;
use wgdem_core::shear::{Row, ShearWriter, Snapshot};

/// The files of a direct shear test: VTK snapshots and their collection, and the plots.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShearFiles;

impl ShearWriter for ShearFiles {
    fn particles(
        &self,
        path: &Path,
        sim: &Simulation,
        reference: &(Vec<DVec3>, Vec<DQuat>),
    ) -> Result<()> {
        vtk::write_particles(path, sim, reference)
    }

    fn force_chains(&self, path: &Path, sim: &Simulation) -> Result<()> {
        vtk::write_force_chains(path, sim)
    }

    fn collection(&self, out: &Path, snapshots: &[Snapshot]) -> Result<()> {
        vtk::write_pvd(out, snapshots)
    }

    fn plots(&self, dir: &Path, rows: &[Row]) -> Result<()> {
        plots::write_plots(dir, rows)
    }
}
