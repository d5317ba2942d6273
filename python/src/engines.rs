//! The engine a `backend` argument asks for, built for a simulation: shared by `Simulation`
//! and `wgdem.shear`.

use pyo3::PyResult;
use wgdem_gpu::{GpuBackend, GpuOptions};

use crate::errors::{Choice, gpu_to_py};

/// The GPU engine (`Some`) or the CPU reference (`None`) that `choice` asks for `sim` on
/// `adapter`, with `auto`'s reason logged (`GpuBackend::auto`).
pub fn gpu_backend(
    choice: Choice,
    adapter: Option<&str>,
    sim: &wgdem_core::cpu::Simulation,
    options: GpuOptions,
) -> PyResult<Option<GpuBackend>> {
    match choice {
        Choice::Cpu => Ok(None),
        Choice::Gpu => GpuBackend::new(adapter, sim, options)
            .map(Some)
            .map_err(gpu_to_py),
        Choice::Auto => {
            let (backend, why) = GpuBackend::auto(adapter, sim, options).map_err(gpu_to_py)?;
            log::info!("{why}");
            Ok(backend)
        }
    }
}
