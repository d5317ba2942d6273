//! wgdem's errors as Python exceptions (the classes live in `wgdem/errors.py`), each with the
//! one-line message the command-line program prints, its flags named as this package's
//! keyword arguments.

use pyo3::import_exception;
use pyo3::{PyErr, PyResult};
use wgdem_core::error::Error;
use wgdem_gpu::{GpuError, GpuOptions};

import_exception!(wgdem.errors, ConfigError);
import_exception!(wgdem.errors, EngineError);
import_exception!(wgdem.errors, BlowUpError);
import_exception!(wgdem.errors, FileError);

/// Library arguments the command line sets from a flag, as this package's keywords.
const KEYWORDS: [(&str, &str); 3] = [
    ("particles", "particles="),
    ("model", "model="),
    ("resume", "Simulation.restore"),
];

/// A library error as a Python exception: bad input is a `ConfigError` (a `ValueError`), a
/// blow-up a `BlowUpError`, an engine failure an `EngineError`, an output directory in the
/// way or a file that cannot be read or written a `FileError` (a `RuntimeError` and an
/// `OSError`; the other two are `RuntimeError`s).
pub fn to_py(e: Error) -> PyErr {
    match e {
        Error::OutputExists { dir, found } => FileError::new_err(format!(
            "output directory {} already holds results ({found}); choose another out= or pass overwrite=True",
            dir.display()
        )),
        Error::OutputBusy { dir, holder } => FileError::new_err(format!(
            "output directory {} is being written by another run ({holder}); wait for it to end or choose another out=",
            dir.display()
        )),
        e @ Error::Invalid { .. } => ConfigError::new_err(e.renaming_field(&KEYWORDS).to_string()),
        e @ Error::Parse { .. } => ConfigError::new_err(e.to_string()),
        e @ Error::BlowUp(_) => BlowUpError::new_err(e.to_string()),
        e @ Error::Backend(_) => EngineError::new_err(e.to_string()),
        e @ (Error::Io { .. } | Error::Encode { .. }) => FileError::new_err(e.to_string()),
        e @ Error::Stopped { .. } => pyo3::exceptions::PyKeyboardInterrupt::new_err(e.to_string()),
    }
}

/// A GPU engine error as an `EngineError`, with what the caller can do about it here.
pub fn gpu_to_py(e: GpuError) -> PyErr {
    let hint = match &e {
        GpuError::NoNamedAdapter { .. } => {
            "pick one of those with adapter= or WGPU_ADAPTER_NAME, or use backend=\"cpu\""
        }
        GpuError::NoAdapter => "or use backend=\"cpu\"",
        GpuError::Device(_) | GpuError::Readback(_) => "",
        GpuError::Checkpoint(_) => "restore with the backend that wrote it",
        _ => "backend=\"cpu\" runs it on the CPU reference engine",
    };
    if hint.is_empty() {
        EngineError::new_err(e.to_string())
    } else {
        EngineError::new_err(format!("{e}; {hint}"))
    }
}

/// `n` as a count for argument `field` of `what`, or a `ConfigError` (Python's ints are
/// unbounded: a negative or huge one was an `OverflowError`).
pub fn count(what: &str, field: &str, n: i64) -> PyResult<u32> {
    u32::try_from(n).map_err(|_| {
        bad_argument(
            what,
            field,
            format!("{n} is not a count of spheres (0 to {})", u32::MAX),
        )
    })
}

/// A `ConfigError` naming the argument `field` of `what` (a Python call).
pub fn bad_argument(what: &str, field: &str, message: impl std::fmt::Display) -> PyErr {
    ConfigError::new_err(format!("{what}: `{field}`: {message}"))
}

/// Whether `backend`, an argument of `what`, asks for the GPU engine ("gpu") or the CPU
/// reference ("cpu"); anything else is a `ConfigError`.
/// The GPU engine's options from the arguments of `what` (a Python call): `gpu_path`, how it
/// records its steps, as `--gpu-path` (`"auto"`: by size, `"general"` or `"single-workgroup"`;
/// `GpuOptions::single_workgroup`), and `pairs`, how it evaluates a pair, as `--pairs`
/// (`"auto"`: once on a software adapter where the contact model's slots are wide, `"once"`
/// or `"both"`;
/// `GpuOptions::pairs_once`). Anything else is a `ConfigError` naming the argument.
pub fn gpu_options(what: &str, gpu_path: &str, pairs: &str) -> PyResult<GpuOptions> {
    let single_workgroup = match gpu_path {
        "auto" => None,
        "general" => Some(false),
        "single-workgroup" => Some(true),
        other => {
            return Err(bad_argument(
                what,
                "gpu_path",
                format!(
                    "\"{other}\" is not a GPU path; use \"auto\", \"general\" or \"single-workgroup\""
                ),
            ));
        }
    };
    let pairs_once = match pairs {
        "auto" => None,
        "once" => Some(true),
        "both" => Some(false),
        other => {
            return Err(bad_argument(
                what,
                "pairs",
                format!(
                    "\"{other}\" is not a way to evaluate pairs; use \"auto\", \"once\" or \"both\""
                ),
            ));
        }
    };
    Ok(GpuOptions {
        single_workgroup,
        pairs_once,
        ..GpuOptions::default()
    })
}

/// The engine a `backend` argument of `Simulation` or `wgdem.shear` asks for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// The GPU engine.
    Gpu,
    /// The CPU reference.
    Cpu,
    /// Chosen by the scene's size and the adapter (`GpuBackend::auto`).
    Auto,
}

/// `backend` of `what` as a [`Choice`], or a `ConfigError` naming it.
pub fn choice(what: &str, backend: &str) -> PyResult<Choice> {
    match backend {
        "auto" => Ok(Choice::Auto),
        "gpu" => Ok(Choice::Gpu),
        "cpu" => Ok(Choice::Cpu),
        other => Err(bad_argument(
            what,
            "backend",
            format!("\"{other}\" is not an engine; use \"auto\", \"gpu\" or \"cpu\""),
        )),
    }
}

pub fn is_gpu(what: &str, backend: &str) -> PyResult<bool> {
    match backend {
        "gpu" => Ok(true),
        "cpu" => Ok(false),
        other => Err(bad_argument(
            what,
            "backend",
            format!("\"{other}\" is not an engine; use \"gpu\" or \"cpu\""),
        )),
    }
}
