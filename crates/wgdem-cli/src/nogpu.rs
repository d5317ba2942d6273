//! Stands in for `gpu.rs` in a wgdem built without the cargo feature `gpu`: every request for
//! the GPU engine is refused with one line saying how to get it.

use wgdem_core::contact_case::CaseEvaluator;
use wgdem_core::cpu::Simulation;
use wgdem_core::runner::Backend as RunBackend;

use crate::GpuSettings;

/// Why the GPU engine is not there.
pub fn unavailable() -> String {
    "this wgdem was built without the GPU engine (cargo feature `gpu`); run with --backend cpu, or build with the default features".to_owned()
}

/// Refuses: no GPU engine in this build.
pub fn backend(
    _adapter: Option<&str>,
    _sim: &Simulation,
    _settings: GpuSettings,
) -> Result<Box<dyn RunBackend>, String> {
    Err(unavailable())
}

/// `--backend auto` in a build without the GPU engine: the CPU reference, said in the log.
pub fn auto_backend(
    _adapter: Option<&str>,
    _sim: &Simulation,
    _settings: GpuSettings,
) -> Result<Box<dyn RunBackend>, String> {
    log::info!("auto: cpu, because this wgdem was built without the GPU engine");
    Ok(Box::new(wgdem_core::runner::CpuBackend))
}

/// Refuses: no GPU engine in this build.
pub fn contact_evaluator(_adapter: Option<&str>) -> Result<Box<dyn CaseEvaluator>, String> {
    Err(unavailable())
}
