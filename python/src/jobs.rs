//! `wgdem.shear` and `wgdem.contact`: the command-line program's jobs, returning their summary
//! and rows (as JSON text, which `wgdem/__init__.py` turns into a dict and arrays or a pandas
//! DataFrame).

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use wgdem_core::contact_case::{CaseEvaluator, CpuEvaluator, run_case};
use wgdem_core::element::{CellRun, CellSetup};
use wgdem_core::runner::{Backend, CpuBackend};
use wgdem_core::shear::{ShearRun, ShearSetup};
use wgdem_gpu::{GpuContext, GpuOptions};

use crate::errors::{EngineError, gpu_to_py, to_py};
use crate::scene::{Scene, TEXT_SOURCE, overridden_argument};

/// While held, the log shows warnings and errors only (`progress=False`): the jobs' stage
/// lines and their INFO lines (the engine chosen, the outputs) are left out. The level is
/// the process's, so a job run quietly in one thread quiets another's INFO lines meanwhile.
struct Quiet(log::LevelFilter);

impl Quiet {
    fn new() -> Self {
        let before = log::max_level();
        log::set_max_level(before.min(log::LevelFilter::Warn));
        Self(before)
    }
}

impl Drop for Quiet {
    fn drop(&mut self) {
        log::set_max_level(self.0);
    }
}

fn json(value: &impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| EngineError::new_err(e.to_string()))
}

/// Where a job writes: `out`, or a temporary directory removed when the job returns.
enum Output {
    Kept(PathBuf),
    Temporary(tempfile::TempDir),
}

impl Output {
    fn new(out: Option<PathBuf>) -> PyResult<Self> {
        match out {
            Some(dir) => Ok(Self::Kept(dir)),
            None => tempfile::Builder::new()
                .prefix("wgdem-")
                .tempdir()
                .map(Self::Temporary)
                .map_err(|e| to_py(wgdem_core::Error::io(std::env::temp_dir(), e))),
        }
    }

    fn dir(&self) -> &Path {
        match self {
            Self::Kept(dir) => dir,
            Self::Temporary(t) => t.path(),
        }
    }

    /// The directory to report: None for a temporary one.
    fn kept(&self) -> Option<String> {
        match self {
            Self::Kept(dir) => Some(dir.display().to_string()),
            Self::Temporary(_) => None,
        }
    }
}

/// The output directory of a job: `out`, which a resumed one (`resume`) must name and may not
/// overwrite.
fn resume_dir(
    what: &str,
    out: Option<PathBuf>,
    resume: bool,
    overwrite: bool,
) -> PyResult<Option<PathBuf>> {
    if resume && out.is_none() {
        return Err(crate::errors::bad_argument(
            what,
            "resume",
            "continues the results in `out`; give out= the directory to continue",
        ));
    }
    if resume && overwrite {
        return Err(crate::errors::bad_argument(
            what,
            "overwrite",
            "replaces the results that resume=True continues; give one of them",
        ));
    }
    Ok(out)
}

/// The engine of a job: the GPU engine or the CPU reference `choice` asks for `sim` (built
/// with the GIL released).
fn job_engine(
    py: Python<'_>,
    choice: crate::errors::Choice,
    adapter: Option<&str>,
    sim: &wgdem_core::cpu::Simulation,
    options: GpuOptions,
) -> PyResult<Box<dyn Backend + Send>> {
    Ok(
        match py.detach(|| crate::engines::gpu_backend(choice, adapter, sim, options))? {
            Some(backend) => Box::new(backend),
            None => Box::new(CpuBackend),
        },
    )
}

/// Runs a direct shear test (see `wgdem.shear` in `wgdem/__init__.py`); returns the summary
/// and the rows as JSON, and the output directory if it is kept.
#[pyfunction]
#[pyo3(signature = (config, backend = "auto", adapter = None, out = None, particles = None, progress = true, overwrite = false, specimen = None, gpu_path = "auto", pairs = "auto", overrides = None, resume = false))]
#[allow(clippy::too_many_arguments)]
pub fn shear_json(
    py: Python<'_>,
    config: &Bound<'_, PyAny>,
    backend: &str,
    adapter: Option<&str>,
    out: Option<PathBuf>,
    particles: Option<i64>,
    progress: bool,
    overwrite: bool,
    specimen: Option<PathBuf>,
    gpu_path: &str,
    pairs: &str,
    overrides: Option<&Bound<'_, pyo3::types::PyDict>>,
    resume: bool,
) -> PyResult<(String, String, Option<String>)> {
    let out = resume_dir("wgdem.shear", out, resume, overwrite)?;
    if resume && specimen.is_some() {
        return Err(crate::errors::bad_argument(
            "wgdem.shear",
            "specimen",
            "a resumed test continues from its checkpoint, not from a specimen; leave one of them out",
        ));
    }
    let particles = particles
        .map(|n| crate::errors::count("wgdem.shear", "particles", n))
        .transpose()?;
    let choice = crate::errors::choice("wgdem.shear", backend)?;
    let options = crate::errors::gpu_options("wgdem.shear", gpu_path, pairs)?;
    if let (Some(n), Some(_)) = (particles, &specimen) {
        return Err(crate::errors::bad_argument(
            "wgdem.shear",
            "particles",
            format!(
                "{n} scales the box for that many spheres, but `specimen` brings its own in the file's box; give one of them"
            ),
        ));
    }
    let _quiet = (!progress).then(Quiet::new);
    let (text, file) =
        overridden_argument(config, "<shear config text>", "wgdem.shear", overrides)?;
    let setup = ShearSetup::parse_scaled(&text, &file, particles).map_err(to_py)?;
    let specimen = specimen
        .map(|path| wgdem_io::read_packing(&path))
        .transpose()
        .map_err(to_py)?;
    let output = Output::new(out)?;
    let dir = output.dir().to_owned();
    let options = GpuOptions {
        batch_steps: setup.config.simulation.control_interval_steps as u32,
        ..options
    };
    let files = || Box::new(wgdem_io::TestFiles);
    // A resumed test's engine is built from the setup and takes over the checkpoint's state
    // (as `wgdem shear --resume`); a new one's from the specimen it starts with.
    let (mut run, mut engine) = if resume {
        let mut engine = job_engine(py, choice, adapter, &setup.scene.simulation, options)?;
        let run = ShearRun::resume(setup, &dir, engine.as_mut(), files()).map_err(to_py)?;
        (run, engine)
    } else {
        let run = match &specimen {
            Some(packing) => {
                ShearRun::create_from_specimen(setup, packing, &dir, overwrite, files())
            }
            None => ShearRun::create(setup, &dir, overwrite, files()),
        }
        .map_err(to_py)?;
        let engine = job_engine(py, choice, adapter, run.simulation(), options)?;
        (run, engine)
    };
    let summary = row_by_row(py, progress, |mut line| {
        run.run(engine.as_mut(), Some(1), |p| {
            if let Some(line) = line.as_deref_mut() {
                line.shear(p);
            }
        })
    })?;
    Ok((json(&summary)?, json(&run.state().rows)?, output.kept()))
}

/// Runs an element test in a periodic cell (see `wgdem.cell` in `wgdem/__init__.py`) on
/// either engine; returns the summary and the rows as JSON, and the output directory if it is
/// kept.
#[pyfunction]
#[pyo3(signature = (config, backend = "auto", out = None, progress = true, overwrite = false, overrides = None, resume = false, specimen = None))]
#[allow(clippy::too_many_arguments)]
pub fn cell_json(
    py: Python<'_>,
    config: &Bound<'_, PyAny>,
    backend: &str,
    out: Option<PathBuf>,
    progress: bool,
    overwrite: bool,
    overrides: Option<&Bound<'_, pyo3::types::PyDict>>,
    resume: bool,
    specimen: Option<PathBuf>,
) -> PyResult<(String, String, Option<String>)> {
    let what = "wgdem.cell";
    let out = resume_dir(what, out, resume, overwrite)?;
    if resume && specimen.is_some() {
        return Err(crate::errors::bad_argument(
            what,
            "specimen",
            "a resumed test continues from its checkpoint, not from a specimen; leave one of them out",
        ));
    }
    let choice = crate::errors::choice(what, backend)?;
    let _quiet = (!progress).then(Quiet::new);
    let (text, file) = overridden_argument(config, "<cell config text>", what, overrides)?;
    let setup = CellSetup::parse(&text, &file).map_err(to_py)?;
    let output = Output::new(out)?;
    let dir = output.dir().to_owned();
    let files = || Box::new(wgdem_io::TestFiles);
    let (mut run, mut engine) = if resume {
        let mut engine = job_engine(
            py,
            choice,
            None,
            &setup.scene.simulation,
            GpuOptions::default(),
        )?;
        let run = CellRun::resume(setup, &dir, engine.as_mut(), files()).map_err(to_py)?;
        (run, engine)
    } else {
        let run = match specimen {
            Some(path) => {
                let packing = wgdem_io::read_packing(&path).map_err(to_py)?;
                CellRun::create_from_specimen(setup, &packing, &dir, overwrite, files())
            }
            None => CellRun::create(setup, &dir, overwrite, files()),
        }
        .map_err(to_py)?;
        let engine = job_engine(py, choice, None, run.simulation(), GpuOptions::default())?;
        (run, engine)
    };
    let summary = row_by_row(py, progress, |mut line| {
        run.run(engine.as_mut(), Some(1), |p| {
            if let Some(line) = line.as_deref_mut() {
                line.cell(p);
            }
        })
    })?;
    Ok((json(&summary)?, json(&run.state().rows)?, output.kept()))
}

/// Runs a protocol one row per call of `row` (which gets the progress line, if shown) until it
/// returns its summary, the GIL released meanwhile; Ctrl-C stops it between rows (the output
/// directory keeps its last checkpoint, from which `--resume` continues).
fn row_by_row<S: Send>(
    py: Python<'_>,
    progress: bool,
    mut row: impl FnMut(Option<&mut wgdem_io::progress::StageLine>) -> wgdem_core::Result<Option<S>>
    + Send,
) -> PyResult<S> {
    let mut line = progress.then(wgdem_io::progress::StageLine::new);
    let summary = loop {
        let done = py.detach(|| row(line.as_mut())).map_err(to_py)?;
        if let Some(summary) = done {
            break summary;
        }
        py.check_signals()?;
    };
    if let Some(line) = line {
        line.finish();
    }
    Ok(summary)
}

/// A scene argument: a `wgdem.Scene`, or a scene file or its text with `overrides` applied.
fn scene_argument(
    arg: &Bound<'_, PyAny>,
    overrides: Option<&Bound<'_, pyo3::types::PyDict>>,
) -> PyResult<wgdem_core::scene::Scene> {
    if let Ok(scene) = arg.extract::<PyRef<'_, Scene>>() {
        if overrides.is_some_and(|d| !d.is_empty()) {
            return Err(crate::errors::bad_argument(
                "wgdem.run",
                "overrides",
                "apply to a scene file or its text; a Scene is built already (give them to Scene.from_toml)",
            ));
        }
        return Ok(scene.scene.clone());
    }
    let (text, source) = overridden_argument(arg, TEXT_SOURCE, "wgdem.run", overrides)?;
    Ok(Scene::build(&text, &source)?.scene)
}

/// Runs a scene to its end as `wgdem run` does (see `wgdem.run` in `wgdem/__init__.py`),
/// writing the same files; returns the summary as JSON, `timeseries.csv`'s text and the
/// output directory if it is kept.
#[pyfunction]
#[pyo3(signature = (scene, backend = "auto", adapter = None, out = None, progress = true, overwrite = false, gpu_path = "auto", pairs = "auto", overrides = None, resume = false))]
#[allow(clippy::too_many_arguments)]
pub fn run_json(
    py: Python<'_>,
    scene: &Bound<'_, PyAny>,
    backend: &str,
    adapter: Option<&str>,
    out: Option<PathBuf>,
    progress: bool,
    overwrite: bool,
    gpu_path: &str,
    pairs: &str,
    overrides: Option<&Bound<'_, pyo3::types::PyDict>>,
    resume: bool,
) -> PyResult<(String, String, Option<String>)> {
    let out = resume_dir("wgdem.run", out, resume, overwrite)?;
    let choice = crate::errors::choice("wgdem.run", backend)?;
    let options = crate::errors::gpu_options("wgdem.run", gpu_path, pairs)?;
    let _quiet = (!progress).then(Quiet::new);
    let mut scene = scene_argument(scene, overrides)?;
    let output = Output::new(out)?;
    let walls: Vec<String> = scene
        .simulation
        .walls
        .iter()
        .map(|w| w.name.clone())
        .collect();
    let columns = wgdem_core::output::SeriesColumns::of(&scene.simulation);
    let mut dir = if resume {
        None
    } else {
        Some(
            wgdem_core::output::OutputDir::create(output.dir(), &walls, columns, overwrite)
                .map_err(to_py)?,
        )
    };
    let sim = &scene.simulation;
    let mut engine = job_engine(py, choice, adapter, sim, options)?;
    let mut line = progress.then(wgdem_io::progress::StageLine::new);
    // Ctrl-C is looked for at each progress report (every row, and every
    // `runner::progress_steps` steps between rows far apart).
    let mut interrupted = None;
    let ran = py.detach(|| {
        let vtk = Some(&wgdem_io::VtkFiles as &dyn wgdem_core::snapshot::SnapshotWriter);
        let progress = |p: wgdem_core::runner::Progress| {
            if let Some(line) = line.as_mut() {
                line.run(&p);
            }
            Python::attach(|py| py.check_signals()).map_err(|e| {
                interrupted = Some(e);
                wgdem_core::Error::Stopped { step: p.step }
            })
        };
        match dir.as_mut() {
            Some(dir) => {
                wgdem_core::runner::run_stoppable(&mut scene, engine.as_mut(), dir, vtk, progress)
            }
            None => {
                let dir = output.dir();
                wgdem_core::runner::resume(&mut scene, engine.as_mut(), dir, vtk, progress)
            }
        }
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    let summary = ran.map_err(to_py)?;
    if let Some(line) = line {
        line.finish();
    }
    let table = crate::scene::read(&output.dir().join("timeseries.csv"))?;
    Ok((json(&summary)?, table, output.kept()))
}

/// Runs a contact case (see `wgdem.contact` in `wgdem/__init__.py`); returns the summary and
/// the rows as JSON, and the output directory if one was given.
#[pyfunction]
#[pyo3(signature = (case, backend = "cpu", adapter = None, out = None, overwrite = false, overrides = None))]
pub fn contact_json(
    py: Python<'_>,
    case: &Bound<'_, PyAny>,
    backend: &str,
    adapter: Option<&str>,
    out: Option<PathBuf>,
    overwrite: bool,
    overrides: Option<&Bound<'_, pyo3::types::PyDict>>,
) -> PyResult<(String, String, Option<String>)> {
    let gpu = crate::errors::is_gpu("wgdem.contact", backend)?;
    let (text, file) =
        overridden_argument(case, "<contact case text>", "wgdem.contact", overrides)?;
    let (summary, rows) = py.detach(|| {
        let mut evaluator: Box<dyn CaseEvaluator + Send> = if gpu {
            let ctx = GpuContext::new(adapter).map_err(gpu_to_py)?;
            Box::new(wgdem_gpu::contact_probe::GpuCaseEvaluator::new(&ctx))
        } else {
            Box::new(CpuEvaluator::default())
        };
        run_case(
            &text,
            &file,
            evaluator.as_mut(),
            backend,
            out.as_deref(),
            overwrite,
        )
        .map_err(to_py)
    })?;
    let out = out.map(|d| d.display().to_string());
    Ok((json(&summary)?, json(&rows)?, out))
}

/// The input of a sweep's member (see `wgdem/sweeps.py`): `config` (a file or its text) with
/// `overrides` applied, as the job would run it; raises `ConfigError` naming a key that
/// `job`'s format does not know (`overrides::check_keys`; a bad value is the member's to fail
/// on).
#[pyfunction]
#[pyo3(signature = (job, config, overrides = None))]
pub fn member_input(
    job: &str,
    config: &Bound<'_, PyAny>,
    overrides: Option<&Bound<'_, pyo3::types::PyDict>>,
) -> PyResult<String> {
    use wgdem_core::overrides::Input;
    let input = match job {
        "shear" => Input::Shear,
        "run" => Input::Scene,
        "contact" => Input::ContactCase,
        other => {
            return Err(crate::errors::bad_argument(
                "wgdem.sweep",
                "job",
                format!("{other:?} is not a job; give \"shear\", \"run\" or \"contact\""),
            ));
        }
    };
    let (text, file) = crate::scene::toml_argument(config, "<configuration text>")?;
    let sets = crate::args::overrides("wgdem.sweep", overrides)?;
    wgdem_core::overrides::check_keys(&text, &file, input, &sets).map_err(to_py)?;
    wgdem_core::overrides::apply(&text, &file, &sets).map_err(to_py)
}

/// The GPU adapters a run could take (`wgdem_gpu::context::adapters`), each as a dict: name,
/// backend, device type, PCI bus id (empty where the driver gives none), and whether it is a
/// software one (lavapipe).
#[pyfunction]
pub fn adapters(py: Python<'_>) -> PyResult<Vec<Bound<'_, pyo3::types::PyDict>>> {
    let infos = py.detach(wgdem_gpu::context::adapters);
    infos
        .iter()
        .map(|info| {
            let d = pyo3::types::PyDict::new(py);
            d.set_item("name", &info.name)?;
            d.set_item("backend", format!("{:?}", info.backend))?;
            d.set_item("device_type", format!("{:?}", info.device_type))?;
            d.set_item("pci_bus_id", &info.device_pci_bus_id)?;
            d.set_item("software", wgdem_gpu::context::is_software(info))?;
            d.set_item("description", wgdem_gpu::context::describe(info))?;
            Ok(d)
        })
        .collect()
}
