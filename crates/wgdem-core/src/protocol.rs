//! What the laboratory protocols (`wgdem shear`, [`crate::shear`]; `wgdem cell`,
//! [`crate::element`]) share: the CSV of rows appended one whole row at a time, the checkpoint
//! that holds a driver's state beside the simulation's and the engine's, and the writer of
//! snapshots, plots and saved specimens. Each protocol keeps its own stages, rows and summary.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use glam::{DQuat, DVec3};

use crate::checkpoint::Kind;
use crate::cpu::{SimState, Simulation};
use crate::error::{Error, Result};
use crate::material::PairParams;
use crate::output::{OutputLock, atomic_write};
use crate::provenance::Provenance;
use crate::runner::Backend;
use crate::scene::Scene;
use crate::snapshot::{Series, SnapshotWriter, VtkContent};

/// A protocol's output directory while its test runs: the lock that keeps other runs out, and
/// its CSV of rows.
pub struct TestDir {
    _lock: OutputLock,
    path: PathBuf,
    csv: RowFile,
}

impl TestDir {
    /// A new test in `out`: claimed (a directory holding an earlier test's `entries` is refused
    /// unless `overwrite`), with `vtk/`, `input.toml` and the CSV `csv` holding `header`.
    pub fn create(
        out: &Path,
        entries: &[&str],
        overwrite: bool,
        provenance: &Provenance,
        (csv, header): (&str, &[&str]),
    ) -> Result<Self> {
        let lock = OutputLock::claim(out, entries, overwrite)?;
        std::fs::create_dir_all(out.join("vtk")).map_err(|e| Error::io(out, e))?;
        provenance.write_input(out)?;
        Self::reopened(lock, out, (csv, header), &[] as &[()])
    }

    /// The test in `out`, whose lock `lock` is held, with its CSV rewritten to `rows` (those of
    /// the checkpoint it resumes from).
    pub fn reopened<R: Serialize>(
        lock: OutputLock,
        out: &Path,
        (csv, header): (&str, &[&str]),
        rows: &[R],
    ) -> Result<Self> {
        Ok(Self {
            _lock: lock,
            path: out.to_path_buf(),
            csv: RowFile::rewrite(&out.join(csv), header, rows)?,
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends a row to the CSV.
    pub fn append<R: Serialize>(&mut self, row: &R) -> Result<()> {
        self.csv.append(row)
    }
}

/// Writes the next snapshot of `series` for `sim` (displacements from `reference`, materials
/// named as in `scene`), its contacts read through `backend`.
#[allow(clippy::too_many_arguments)]
pub fn snapshot(
    series: &mut Series,
    writer: &dyn SnapshotWriter,
    out: &Path,
    sim: &mut Simulation,
    backend: &mut dyn Backend,
    reference: &(Vec<DVec3>, Vec<DQuat>),
    scene: &Scene,
    vtk: &VtkContent,
) -> Result<()> {
    let names: Vec<String> = scene.materials.iter().map(|m| m.name.clone()).collect();
    series.take(
        writer,
        out,
        sim,
        backend,
        (&reference.0, &reference.1),
        &names,
        vtk,
    )
}

/// Puts the spheres of a saved `packing` in place of `sim`'s, all of its first sphere's
/// material at `density` (kg/m³), with their saved velocities and spins; the contacts'
/// histories start afresh and the neighbour-list skin is the new sizes' default.
pub fn replace_spheres(sim: &mut Simulation, packing: &crate::packing::Packing, density: f64) {
    let material = sim.particles.material.first().copied().unwrap_or(0);
    let mut particles = crate::particles::Particles::default();
    for sphere in &packing.spheres {
        let i = particles.push(sphere.position, sphere.radius, density, material);
        particles.velocity[i] = sphere.velocity;
        particles.angular_velocity[i] = sphere.angular_velocity;
    }
    sim.particles = particles;
    sim.reset_history();
    sim.set_default_skin();
}

/// A finished test's `summary.json` and plots.
pub fn finish<R, W: TestWriter<R> + ?Sized>(
    out: &Path,
    summary: &impl Serialize,
    writer: &W,
    rows: &[R],
) -> Result<()> {
    crate::output::write_json(&out.join("summary.json"), summary)?;
    writer.plots(&out.join("plots"), rows)
}

/// Puts the pair table `to` in place of `from` once (`switched` records that it was done);
/// returns whether the table changed (not when it was switched already, nor when the two
/// are the same).
pub fn switch_pairs(
    sim: &mut Simulation,
    backend: &mut dyn Backend,
    switched: &mut bool,
    (from, to): (&[PairParams], &[PairParams]),
) -> Result<bool> {
    if *switched {
        return Ok(false);
    }
    *switched = true;
    if from == to {
        return Ok(false);
    }
    sim.set_pair_params(to.to_vec());
    backend.update_pair_params(sim)?;
    Ok(true)
}

/// Writes a protocol's snapshot files, plots and saved specimens; each file atomically. Core
/// declares it; `wgdem-io` implements it (VTK through `vtkio`, plots through `plotters`), so
/// that the physics depends on no file-format crate.
pub trait TestWriter<R>: SnapshotWriter {
    /// The plots of `rows` into the directory `dir`.
    fn plots(&self, dir: &Path, rows: &[R]) -> Result<()>;
    /// The specimen of `sim` as a packing, `out/NAME.csv` and `out/NAME.vtu`, which
    /// `--specimen` and scenes' `kind = "file"` groups read back.
    fn specimen(&self, out: &Path, name: &str, sim: &Simulation) -> Result<()>;
}

/// A protocol's CSV of rows (`shear.csv`, `cell.csv`), appended one whole row per write so
/// that a killed run leaves whole rows.
pub struct RowFile {
    path: PathBuf,
    file: File,
}

impl RowFile {
    /// Writes `path` afresh with `header` and `rows` (a new test, or a resumed one's rows up
    /// to its checkpoint), then opens it for appending.
    pub fn rewrite<R: Serialize>(path: &Path, header: &[&str], rows: &[R]) -> Result<Self> {
        let mut w = csv::Writer::from_writer(Vec::new());
        if rows.is_empty() {
            // Header only: serialize's header comes with the first record.
            w.write_record(header).map_err(|e| encode(path, e))?;
        }
        for r in rows {
            w.serialize(r).map_err(|e| encode(path, e))?;
        }
        let bytes = w.into_inner().map_err(|e| encode(path, e))?;
        atomic_write(path, &bytes)?;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Appends `row`.
    pub fn append<R: Serialize>(&mut self, row: &R) -> Result<()> {
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        w.serialize(row).map_err(|e| encode(&self.path, e))?;
        let bytes = w.into_inner().map_err(|e| encode(&self.path, e))?;
        self.file
            .write_all(&bytes)
            .map_err(|e| Error::io(&self.path, e))
    }
}

/// A checkpoint's payload: the backend's name, the protocol's driver state, the simulation and
/// the engine's own state.
#[derive(Serialize, Deserialize)]
struct Checkpoint<D> {
    backend: String,
    driver: D,
    sim: SimState,
    engine: Vec<u8>,
}

/// How a protocol's checkpoints are told apart: the envelope's kind, the payload's format and
/// the input the test runs.
#[derive(Debug, Clone, Copy)]
pub struct CheckpointFile<'a> {
    /// The envelope's kind.
    pub kind: Kind,
    /// The payload's format, raised whenever its meaning changes.
    pub format: u32,
    /// The configuration's text as run (`input.toml`).
    pub input: &'a str,
}

impl CheckpointFile<'_> {
    /// Writes `path` atomically: `driver`, `sim`'s state and `backend`'s.
    pub fn save<D: Serialize>(
        &self,
        path: &Path,
        backend: &mut dyn Backend,
        driver: &D,
        sim: &Simulation,
    ) -> Result<()> {
        let cp = Checkpoint {
            backend: backend.name().to_owned(),
            driver,
            sim: sim.state(),
            engine: backend.save_state()?,
        };
        let bytes = postcard::to_allocvec(&cp).map_err(|e| encode(path, e))?;
        let sealed = crate::checkpoint::seal(self.kind, self.format, self.input, &bytes);
        atomic_write(path, &sealed)
    }

    /// Reads `path`: the driver's state, the simulation's and the engine's, refused with one
    /// line (ending "start the test again") if it is not this test's, is damaged, or was
    /// written by another backend than `backend`.
    pub fn load<D: DeserializeOwned>(
        &self,
        path: &Path,
        backend: &str,
    ) -> Result<(D, SimState, Vec<u8>)> {
        let again = "start the test again";
        let bytes = crate::output::read_checkpoint(path, again)?;
        let refuse = |what: String| Error::Invalid {
            file: path.display().to_string(),
            field: "resume".to_owned(),
            message: what,
        };
        let payload =
            crate::checkpoint::open(path, &bytes, self.kind, self.format, self.input, again)?;
        let cp: Checkpoint<D> = postcard::from_bytes(payload)
            .map_err(|e| refuse(format!("not a readable checkpoint ({e}); {again}")))?;
        if cp.backend != backend {
            return Err(refuse(format!(
                "was written by the {} backend; resume on that backend",
                cp.backend
            )));
        }
        Ok((cp.driver, cp.sim, cp.engine))
    }
}

/// An encoding error of `path`.
pub fn encode(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Encode {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}
