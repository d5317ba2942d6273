//! The GPU engine behind the CLI (cargo feature `gpu`, on by default): building a backend, a
//! contact evaluator and a bench run on an adapter, and the hints the CLI adds to GPU errors.
//! `nogpu.rs` stands in for it when the feature is off.

use wgdem_core::contact_case::CaseEvaluator;
use wgdem_core::cpu::Simulation;
use wgdem_core::runner::Backend as RunBackend;
use wgdem_gpu::{GpuBackend, GpuContext, GpuError, GpuOptions};

use crate::GpuSettings;

/// A GPU engine error as one line, with what the user can do about it on this command line.
pub fn error(e: GpuError) -> String {
    let hint = match &e {
        GpuError::NoNamedAdapter { .. } => {
            "pick one of those with --adapter or WGPU_ADAPTER_NAME, or run with --backend cpu"
        }
        GpuError::NoAdapter => "or run with --backend cpu",
        GpuError::Device(_) | GpuError::Readback(_) => "",
        GpuError::Checkpoint(_) => "resume with the configuration and backend that wrote it",
        _ => "--backend cpu runs it on the CPU reference engine",
    };
    if hint.is_empty() {
        e.to_string()
    } else {
        format!("{e}; {hint}")
    }
}

/// The engine's options from the CLI's settings.
pub fn options(settings: GpuSettings) -> GpuOptions {
    let defaults = GpuOptions::default();
    GpuOptions {
        batch_steps: settings.batch_steps.unwrap_or(defaults.batch_steps),
        specialize: settings.specialize,
        words64: settings.words64,
        single_workgroup: settings.single_workgroup,
        pairs_once: settings.pairs_once,
        ..defaults
    }
}

/// The GPU engine on `adapter` (or the default one) for `sim`.
pub fn backend(
    adapter: Option<&str>,
    sim: &Simulation,
    settings: GpuSettings,
) -> Result<Box<dyn RunBackend>, String> {
    let backend = GpuBackend::new(adapter, sim, options(settings)).map_err(error)?;
    Ok(Box::new(backend))
}

/// The engine `--backend auto` takes for `sim` (`GpuBackend::auto`: the CPU reference on a
/// software adapter below `AUTO_SOFTWARE_CPU_BELOW` spheres (`_PERIODIC` in a periodic cell)
/// or without an adapter, else the
/// GPU engine), with the reason logged.
pub fn auto_backend(
    adapter: Option<&str>,
    sim: &Simulation,
    settings: GpuSettings,
) -> Result<Box<dyn RunBackend>, String> {
    let (gpu, why) = GpuBackend::auto(adapter, sim, options(settings)).map_err(error)?;
    log::info!("{why}");
    Ok(match gpu {
        Some(backend) => Box::new(backend),
        None => Box::new(wgdem_core::runner::CpuBackend),
    })
}

/// The WGSL contact models on `adapter`, for `wgdem contact`.
pub fn contact_evaluator(adapter: Option<&str>) -> Result<Box<dyn CaseEvaluator>, String> {
    let ctx = GpuContext::new(adapter).map_err(error)?;
    Ok(Box::new(wgdem_gpu::contact_probe::GpuCaseEvaluator::new(
        &ctx,
    )))
}
