//! `wgdem.Series`: the files of `wgdem run` written from a Python loop — a row of
//! `timeseries.csv`, a particle CSV and a ParaView snapshot indexed by `vtk/run.pvd` at each
//! `append()` — so that a test steered from Python leaves the outputs a scene run from the
//! command line leaves.

use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::prelude::*;
use wgdem_core::output::OutputDir;
use wgdem_core::provenance::Provenance;
use wgdem_core::snapshot::SnapshotWriter;

use crate::errors::to_py;
use crate::simulation::Simulation;

/// The files of `wgdem run` for a simulation stepped from Python: `timeseries.csv`,
/// `particles/particles_NNNNNN.csv`, `vtk/run.pvd` with its snapshots, and `input.toml`,
/// each `append()` adding a row, a particle CSV and a snapshot of the simulation's current
/// state (docs/outputs.md gives the columns and arrays).
#[pyclass(module = "wgdem._wgdem", frozen)]
pub struct Series {
    sim: Py<Simulation>,
    state: Mutex<State>,
}

struct State {
    out: OutputDir,
    series: wgdem_core::snapshot::Series,
    vtk: bool,
}

#[pymethods]
impl Series {
    /// A series of `sim` in directory `out` (created if missing). A directory that holds
    /// results is refused unless `overwrite=True`, as `wgdem run` refuses it. `vtk=False`
    /// leaves out the ParaView snapshots.
    #[new]
    #[pyo3(signature = (sim, out, overwrite = false, vtk = true))]
    fn new(sim: Py<Simulation>, out: PathBuf, overwrite: bool, vtk: bool) -> PyResult<Self> {
        let state = {
            let session = sim.get().lock()?;
            let walls: Vec<String> = session.sim.walls.iter().map(|w| w.name.clone()).collect();
            let dir = OutputDir::create(
                &out,
                &walls,
                wgdem_core::output::SeriesColumns::of(&session.sim),
                overwrite,
            )
            .map_err(to_py)?;
            Provenance::from_text(&session.source, &session.input_toml, None)
                .write_input(&out)
                .map_err(to_py)?;
            if vtk {
                let path = out.join("vtk");
                std::fs::create_dir_all(&path)
                    .map_err(|e| to_py(wgdem_core::Error::io(&path, e)))?;
            }
            State {
                out: dir,
                series: wgdem_core::snapshot::Series::new("run"),
                vtk,
            }
        };
        Ok(Self {
            sim,
            state: Mutex::new(state),
        })
    }

    /// Appends the simulation's current state: a row of `timeseries.csv`, a particle CSV
    /// and (unless `vtk=False`) a ParaView snapshot, rewriting `vtk/run.pvd`.
    fn append(&self, py: Python<'_>) -> PyResult<()> {
        let mut guard = self.sim.get().lock()?;
        let session = &mut *guard;
        let mut state = self.state.lock().map_err(|_| {
            crate::errors::EngineError::new_err(
                "Series: an earlier append failed midway; start a new Series",
            )
        })?;
        let state = &mut *state;
        let initial = session.initial()?;
        let forces = initial.as_ref().unwrap_or(&session.sim);
        py.detach(|| state.out.record(&session.sim, forces))
            .map_err(to_py)?;
        if state.vtk {
            let files = state
                .series
                .next_files(&session.sim, &session.looks.content);
            let dir = state.out.dir().to_owned();
            py.detach(|| session.snapshot(&dir, &files))?;
            state.series.snapshots.push(files);
            state
                .series
                .write_collection(&wgdem_io::VtkFiles as &dyn SnapshotWriter, &dir)
                .map_err(to_py)?;
        }
        Ok(())
    }

    /// Rows appended so far.
    fn __len__(&self) -> PyResult<usize> {
        let state = self.state.lock().map_err(|_| {
            crate::errors::EngineError::new_err("Series: an earlier append failed midway")
        })?;
        Ok(state.out.position().map_err(to_py)?.0)
    }
}
