//! `wgdem cell`: an element test in a periodic cell (`wgdem_core::element`).

use std::path::PathBuf;

use wgdem_core::element::{CellRun, CellSetup};

use crate::{Engine, GpuSettings, cli_error, make_backend, overridden};

/// What `wgdem cell` is asked for.
#[derive(Debug, clap::Args)]
pub struct CellArgs {
    /// Periodic-cell test file (TOML; reference in docs/cell.md, presets in assets/cell/).
    config: PathBuf,
    /// Engine that takes the steps (auto: the GPU engine on a hardware adapter or from 100 000
    /// spheres, else the CPU reference).
    #[arg(long, value_enum, default_value_t = Engine::Auto)]
    backend: Engine,
    /// Output directory (created if missing).
    #[arg(long, default_value = "out/cell", conflicts_with = "resume")]
    out: PathBuf,
    /// Continue the test in this directory from its last checkpoint (same configuration
    /// file, same backend).
    #[arg(long, value_name = "DIR")]
    resume: Option<PathBuf>,
    /// Replace the results of an earlier test in the output directory.
    #[arg(long, conflicts_with = "resume")]
    overwrite: bool,
    /// Override a value of the file by its dotted key, as the file would set it (repeatable):
    /// `--set loading.path=constant_p --set simulation.seed=7`. input.toml records the result.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Start from a saved specimen instead of a gas: the specimen_compacted.csv of an earlier
    /// test (it records its periodic cell), of specimen.count spheres; the confining stress is
    /// held until the packing settles again, then the loading starts.
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    specimen: Option<PathBuf>,
}

/// Runs `wgdem cell`.
pub fn cell(args: CellArgs) -> Result<(), String> {
    let CellArgs {
        config,
        backend,
        out,
        resume,
        overwrite,
        set,
        specimen,
    } = args;
    let (text, file) = overridden(&config, &set)?;
    let setup = CellSetup::parse(&text, &file).map_err(cli_error)?;
    let files = || Box::new(wgdem_io::TestFiles);
    // The engine is built from the spheres the test starts with.
    let start = match specimen {
        Some(path) => {
            let packing = wgdem_io::read_packing(&path).map_err(cli_error)?;
            Some(
                CellRun::create_from_specimen(setup.clone(), &packing, &out, overwrite, files())
                    .map_err(cli_error)?,
            )
        }
        None => None,
    };
    let sim = start
        .as_ref()
        .map_or(&setup.scene.simulation, |run| run.simulation());
    let mut engine = make_backend(backend, None, sim, GpuSettings::default())?;
    let (mut run, dir) = match (resume, start) {
        (_, Some(run)) => (run, out),
        (Some(dir), None) => (
            CellRun::resume(setup, &dir, engine.as_mut(), files()).map_err(cli_error)?,
            dir,
        ),
        (None, None) => (
            CellRun::create(setup, &out, overwrite, files()).map_err(cli_error)?,
            out,
        ),
    };
    let c = &run.setup().config;
    log::info!(
        "{}: {} spheres, dt {:.3e} s, p₀ {:.4e} Pa, {} to {} at {:.3e} /s on {}, writing to {}",
        config.display(),
        run.simulation().particles.len(),
        run.simulation().dt,
        c.compaction.mean_stress,
        c.loading.path.name(),
        c.loading.strain,
        c.loading.strain_rate,
        engine
            .adapter()
            .unwrap_or_else(|| "the CPU reference".to_owned()),
        dir.display()
    );
    let mut line = wgdem_io::progress::StageLine::new();
    let summary = run
        .run(engine.as_mut(), None, |p| line.cell(p))
        .map_err(cli_error)?
        .ok_or("the test stopped before its end")?;
    line.finish();
    log::info!(
        "done: peak stress ratio {:.3} (φ {:.1}°) at strain {:.4}, max dilatancy rate {:.3}, initial void ratio {:.3}, held stresses within {:.2} % on average ({:.2} % at most); {} steps in {:.1} s ({:.3e} particle-steps/s)",
        summary.peak_stress_ratio,
        summary.peak_friction_angle_deg,
        summary.strain_at_peak,
        summary.max_dilatancy_rate,
        summary.initial_void_ratio,
        100.0 * summary.held_stress_error_mean_fraction,
        100.0 * summary.held_stress_error_max_fraction,
        summary.steps,
        summary.wall_clock_s,
        summary.particle_steps_per_s
    );
    println!(
        "results: {} (cell.csv, summary.json); plots: {}; ParaView: {}",
        dir.display(),
        dir.join("plots").display(),
        dir.join("vtk").join("cell.pvd").display()
    );
    Ok(())
}
