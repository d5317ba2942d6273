//! `wgdem.Scene`: a scene file (or its text) loaded, validated and built, ready to become a
//! `Simulation`.

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use wgdem_core::provenance::Provenance;
use wgdem_core::scene::scene_from_text;

use crate::errors::to_py;

/// The name a scene given as text goes by in messages.
pub const TEXT_SOURCE: &str = "<scene text>";

/// A scene built from TOML (the format of `wgdem run`, docs/scene.md), ready to simulate.
#[pyclass(module = "wgdem._wgdem", frozen)]
pub struct Scene {
    pub(crate) scene: wgdem_core::scene::Scene,
}

impl Scene {
    /// Builds the scene from `text`, read from `source` (a path, or [`TEXT_SOURCE`]); packing
    /// files are found relative to `source`'s directory.
    pub(crate) fn build(text: &str, source: &str) -> PyResult<Self> {
        let scene = scene_from_text(text, source, &wgdem_io::PackingFiles).map_err(to_py)?;
        Ok(Self { scene })
    }

    /// The scene's input as the engine ran it (all defaults written out), which checkpoints
    /// hash and carry.
    pub(crate) fn input_toml(&self) -> PyResult<String> {
        let s = &self.scene;
        Provenance::new(&s.source, &s.config, Some(s.config.simulation.seed))
            .map(|p| p.input_toml)
            .map_err(to_py)
    }
}

/// A TOML argument from Python: `(text, source)`, the text as given if it reads as TOML
/// (a str holding a newline or `=`; `source` is then `text_name`), else the file it names
/// (a str or `os.PathLike`).
pub fn toml_argument(arg: &Bound<'_, PyAny>, text_name: &str) -> PyResult<(String, String)> {
    if let Ok(text) = arg.extract::<String>()
        && (text.contains('\n') || text.contains('='))
    {
        return Ok((text, text_name.to_owned()));
    }
    let path: PathBuf = arg.extract()?;
    Ok((read(&path)?, path.display().to_string()))
}

/// [`toml_argument`] with `overrides` applied to the text (`wgdem_core::overrides`).
pub fn overridden_argument(
    arg: &Bound<'_, PyAny>,
    text_name: &str,
    what: &str,
    overrides: Option<&Bound<'_, pyo3::types::PyDict>>,
) -> PyResult<(String, String)> {
    let (text, source) = toml_argument(arg, text_name)?;
    let sets = crate::args::overrides(what, overrides)?;
    let text = wgdem_core::overrides::apply(&text, &source, &sets).map_err(to_py)?;
    Ok((text, source))
}

#[pymethods]
impl Scene {
    /// Loads a scene from a TOML file (a path, str or `pathlib.Path`) or from TOML text (a
    /// str holding a newline or `=`). Relative packing files are found next to the file, or
    /// from the working directory for text. Raises `ConfigError` naming the field and line of
    /// anything invalid, `FileError` when the file cannot be read.
    /// `overrides` (a dict of dotted key → value, `{"materials.quartz.friction": 0.3,
    /// "simulation.seed": 7}`; array entries by name or index from 0) change the file's values
    /// before it is checked, as `--set` does.
    #[staticmethod]
    #[pyo3(signature = (path_or_text, overrides = None))]
    fn from_toml(
        path_or_text: &Bound<'_, PyAny>,
        overrides: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<Self> {
        let (text, source) =
            overridden_argument(path_or_text, TEXT_SOURCE, "Scene.from_toml", overrides)?;
        Self::build(&text, &source)
    }

    /// The specimen `wgdem bench` times: about `particles` spheres in a dense lattice in a shear
    /// box whose lower half moves, with contact model `model` ("hertz", "hooke", "linear" or
    /// "hill"), so that stepping from Python can be timed against the command line.
    #[staticmethod]
    #[pyo3(signature = (particles, model = "hertz"))]
    fn bench_specimen(particles: i64, model: &str) -> PyResult<Self> {
        let particles = crate::errors::count("Scene.bench_specimen", "particles", particles)?;
        let text = wgdem_core::bench::specimen_toml(particles, model).map_err(to_py)?;
        Self::build(&text, "bench specimen")
    }

    /// Number of spheres.
    #[getter]
    fn n_particles(&self) -> usize {
        self.scene.simulation.particles.len()
    }

    /// Time step the simulation takes (s): `safety_factor ×` the critical time step, or
    /// `simulation.dt` where the scene sets it.
    #[getter]
    fn dt(&self) -> f64 {
        self.scene.simulation.dt
    }

    /// Critical time step estimate (s).
    #[getter]
    fn critical_dt(&self) -> f64 {
        self.scene.critical_dt
    }

    /// Simulated time the scene asks for (`simulation.duration`, s).
    #[getter]
    fn duration(&self) -> f64 {
        self.scene.duration
    }

    /// Material names, in file order (a sphere's `materials` entry indexes this list).
    #[getter]
    fn materials(&self) -> Vec<String> {
        self.scene
            .materials
            .iter()
            .map(|m| m.name.clone())
            .collect()
    }

    /// Wall names, in scene order (the index `Simulation`'s wall methods take).
    #[getter]
    fn walls(&self) -> Vec<String> {
        let walls = &self.scene.simulation.walls;
        walls.iter().map(|w| w.name.clone()).collect()
    }

    /// Where the scene came from: its file, or `<scene text>`.
    #[getter]
    fn source(&self) -> String {
        self.scene.source.clone()
    }

    /// The scene as TOML, every default written out (what `input.toml` of a run holds).
    fn to_toml(&self) -> PyResult<String> {
        self.input_toml()
    }

    fn __repr__(&self) -> String {
        format!(
            "Scene({:?}: {} spheres, {} walls, dt {:.3e} s)",
            self.scene.source,
            self.scene.simulation.particles.len(),
            self.scene.simulation.walls.len(),
            self.scene.simulation.dt
        )
    }
}

/// The text of the file at `path`, or an `FileError` saying why it cannot be read.
pub fn read(path: &Path) -> PyResult<String> {
    std::fs::read_to_string(path).map_err(|e| to_py(wgdem_core::Error::io(path, e)))
}
