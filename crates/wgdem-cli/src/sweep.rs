//! `wgdem sweep SWEEP.toml`: starts the Python package's sweep (`python -m wgdem sweep`), which
//! spreads the members over Dask. The scheduling lives in one place, Dask's, reached from
//! Python; this command is the door for those who do not write Python (docs/sweeps.md).

use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// The arguments of `wgdem sweep`, passed on as they are.
#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// The sweep file (TOML: job, config, grid or sets, repeats, backend, out; docs/sweeps.md).
    file: PathBuf,
    /// A running Dask scheduler's address (tcp://host:8786); default: the file's `scheduler`,
    /// else a cluster of worker processes on this machine.
    #[arg(long)]
    scheduler: Option<String>,
    /// The sweep's directory (default: the file's `out`, else out/sweep).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Worker processes of this machine's cluster (default: one per GPU adapter for the GPU
    /// engine, one per core for the CPU reference).
    #[arg(long)]
    workers: Option<u32>,
    /// No progress line.
    #[arg(long)]
    quiet: bool,
}

/// The Python interpreter that has the package: `WGDEM_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var("WGDEM_PYTHON")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".to_owned())
}

const INSTALL: &str = "install the Python package with its sweep extra (pip install \"./python[sweep]\" from the wgdem sources), or set WGDEM_PYTHON to the interpreter that has it";

/// Runs the sweep in Python, returning its exit status (1 where a member failed).
pub fn launch(args: SweepArgs) -> Result<ExitCode, String> {
    let python = python();
    // Whether the package and Dask are there, asked first so that a missing one is named
    // with the fix rather than as a Python traceback.
    let probe = Command::new(&python)
        .args(["-c", "import wgdem.sweeps, distributed, pandas"])
        .output()
        .map_err(|e| format!("wgdem sweep runs the Python package's sweep, but {python} cannot be started ({e}); {INSTALL}"))?;
    if !probe.status.success() {
        let why = String::from_utf8_lossy(&probe.stderr);
        let last = why.lines().last().unwrap_or("").trim();
        return Err(format!(
            "wgdem sweep runs the Python package's sweep, but {python} cannot import it ({last}); {INSTALL}"
        ));
    }
    let mut command = Command::new(&python);
    command.args(["-m", "wgdem", "sweep"]).arg(&args.file);
    if let Some(s) = &args.scheduler {
        command.args(["--scheduler", s]);
    }
    if let Some(out) = &args.out {
        command.arg("--out").arg(out);
    }
    if let Some(n) = args.workers {
        command.args(["--workers", &n.to_string()]);
    }
    if args.quiet {
        command.arg("--quiet");
    }
    let status = command
        .status()
        .map_err(|e| format!("{python} -m wgdem sweep: {e}"))?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}
