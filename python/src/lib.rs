//! The native part of the `wgdem` Python package (`wgdem._wgdem`): scenes, simulations on the
//! GPU engine or the CPU reference with their state as NumPy arrays, and the direct shear and
//! contact jobs. `python/wgdem/` wraps it (exceptions, pandas tables, docstrings and stubs);
//! docs/python.md is the user's guide.

use pyo3::prelude::*;

mod args;
mod engines;
mod errors;
mod jobs;
mod scene;
mod series;
mod servo;
mod session;
mod simulation;

/// wgdem's engine, driven from Python.
#[pymodule]
fn _wgdem(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Progress lines and the engine's warnings as the command-line program logs them
    // (RUST_LOG sets the level).
    let _ = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"))
        .format_timestamp(None)
        .try_init();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<scene::Scene>()?;
    m.add_class::<simulation::Simulation>()?;
    m.add_class::<series::Series>()?;
    m.add_function(wrap_pyfunction!(jobs::shear_json, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::cell_json, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::run_json, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::contact_json, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::member_input, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::adapters, m)?)?;
    Ok(())
}
