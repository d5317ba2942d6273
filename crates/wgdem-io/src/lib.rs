//! wgdem's file readers and writers: packings, ParaView (VTK XML) snapshots and plots, and the
//! progress line of long runs, shared by the command-line program and the Python package. The physics crate,
//! `wgdem-core`, writes CSV and JSON itself and reaches these through
//! [`wgdem_core::snapshot::SnapshotWriter`] and [`wgdem_core::shear::ShearWriter`], so that it
//! depends on no file-format crate.
//!
//! - [`packing`]: packings in (CSV, `.vtu`, LAMMPS data and dump) and out (CSV);
//! - [`vtk`]: particles, contacts, walls and the `.pvd` collection;
//! - [`plots`]: stress ratio and vertical displacement against shear strain (PNG, SVG);
//! - [`progress`]: one line per stage of a long run, with an ETA.

pub mod packing;
pub mod plots;
pub mod progress;
pub mod vtk;

pub use packing::{PackingFiles, load_scene, read_packing, write_lammps_dump};

use std::path::Path;

use wgdem_core::cpu::Simulation;
use wgdem_core::element::Row as CellRow;
use wgdem_core::error::Result;
use wgdem_core::protocol::TestWriter;
use wgdem_core::shear::Row;
use wgdem_core::snapshot::{Frame, ParticleField, Snapshot, SnapshotWriter, VtkContent};

/// ParaView snapshots (`wgdem run`).
#[derive(Debug, Clone, Copy, Default)]
pub struct VtkFiles;

impl SnapshotWriter for VtkFiles {
    fn snapshot(&self, out: &Path, files: &Snapshot, frame: &Frame<'_>) -> Result<()> {
        vtk::write_snapshot(out, files, frame)
    }

    fn collection(&self, path: &Path, snapshots: &[Snapshot]) -> Result<()> {
        vtk::write_pvd(path, snapshots)
    }
}

/// The files of a laboratory protocol (`wgdem shear`, `wgdem cell`): ParaView snapshots and
/// their collection, the plots and the saved specimens.
#[derive(Debug, Clone, Copy, Default)]
pub struct TestFiles;

impl SnapshotWriter for TestFiles {
    fn snapshot(&self, out: &Path, files: &Snapshot, frame: &Frame<'_>) -> Result<()> {
        VtkFiles.snapshot(out, files, frame)
    }

    fn collection(&self, path: &Path, snapshots: &[Snapshot]) -> Result<()> {
        VtkFiles.collection(path, snapshots)
    }
}

impl TestWriter<Row> for TestFiles {
    fn plots(&self, dir: &Path, rows: &[Row]) -> Result<()> {
        plots::write_plots(dir, rows)
    }

    fn specimen(&self, out: &Path, name: &str, sim: &Simulation) -> Result<()> {
        write_specimen(out, name, sim)
    }
}

impl TestWriter<CellRow> for TestFiles {
    fn plots(&self, dir: &Path, rows: &[CellRow]) -> Result<()> {
        plots::write_cell_plots(dir, rows)
    }

    fn specimen(&self, out: &Path, name: &str, sim: &Simulation) -> Result<()> {
        write_specimen(out, name, sim)
    }
}

impl wgdem_core::element::CellWriter for TestFiles {
    fn probe_plot(
        &self,
        dir: &Path,
        name: &str,
        rows: &[wgdem_core::element::ProbeRow],
        centre: Option<[f64; 2]>,
    ) -> Result<()> {
        plots::write_probe_plot(dir, name, rows, centre)
    }
}

/// `out/NAME.csv` and `out/NAME.vtu`: the spheres of `sim` as a packing, with its largest
/// overlap recorded in both files: a specimen saved under load is read back by its own test
/// (`Packing::overlap_limit`).
pub(crate) fn write_specimen(out: &Path, name: &str, sim: &Simulation) -> Result<()> {
    let overlap =
        wgdem_core::packing::largest_overlap(&sim.particles.position, &sim.particles.radius);
    packing::write_specimen_csv(&out.join(format!("{name}.csv")), sim, overlap)?;
    let content = VtkContent {
        particle_fields: vec![
            ParticleField::Id,
            ParticleField::Radius,
            ParticleField::Material,
            ParticleField::Velocity,
            ParticleField::AngularVelocity,
        ],
        contacts: false,
        walls: false,
    };
    let frame = Frame {
        sim,
        reference: (&sim.particles.position, &sim.particles.orientation),
        contacts: &[],
        material_names: &[],
        content: &content,
    };
    vtk::write_particles_with(
        &out.join(format!("{name}.vtu")),
        &frame,
        &[(wgdem_core::packing::RECORDED_OVERLAP_KEY, overlap)],
    )
}
