//! `wgdem`: run discrete element scenes from the command line.
//!
//! Errors print as one sentence naming the file and field at fault, and the exit status is 1
//! (2 for command-line usage errors, from clap).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use wgdem_core::output::OutputDir;
use wgdem_core::runner::{run_cpu, step_count};
use wgdem_core::scene::load_scene;

/// GPU discrete element method for granular materials. Units are SI throughout.
#[derive(Debug, Parser)]
#[command(name = "wgdem", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scene file and write timeseries.csv, particle snapshots and summary.json.
    Run {
        /// Scene file (TOML; reference in docs/scene.md).
        scene: PathBuf,
        /// Engine that takes the steps.
        #[arg(long, value_enum, default_value_t = Backend::Cpu)]
        backend: Backend,
        /// Output directory (created if missing).
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Replace the results of an earlier run in the output directory.
        #[arg(long)]
        overwrite: bool,
    },
    /// Validate a scene file and print what it builds (particles, walls, time step).
    Check {
        /// Scene file (TOML).
        scene: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Backend {
    /// The f64 CPU reference engine.
    Cpu,
    /// The wgpu compute-shader engine.
    Gpu,
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"))
        .format_timestamp(None)
        .init();
    let cli = Cli::parse();
    match execute(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn execute(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Check { scene } => {
            let scene = load_scene(&scene).map_err(|e| e.to_string())?;
            let sim = &scene.simulation;
            println!(
                "ok: {} particles, {} walls, law {:?}, history {:?}",
                sim.particles.len(),
                sim.walls.len(),
                sim.model.law,
                sim.model.history
            );
            println!(
                "time step {:.3e} s (critical {:.3e} s, allowed {:.3e} s), {} steps for {} s",
                sim.dt,
                scene.critical_dt,
                scene.max_dt,
                step_count(scene.duration, sim.dt),
                scene.duration
            );
            Ok(())
        }
        Command::Run {
            scene: path,
            backend,
            out,
            overwrite,
        } => {
            if backend == Backend::Gpu {
                return Err(
                    "the GPU backend is not part of this build yet; run with --backend cpu"
                        .to_owned(),
                );
            }
            let mut scene = load_scene(&path).map_err(|e| e.to_string())?;
            let names: Vec<String> = scene
                .simulation
                .walls
                .iter()
                .map(|w| w.name.clone())
                .collect();
            let mut dir = OutputDir::create(&out, &names, overwrite).map_err(|e| e.to_string())?;
            let total = step_count(scene.duration, scene.simulation.dt);
            log::info!(
                "{}: {} particles, dt {:.3e} s, {} steps, writing to {}",
                path.display(),
                scene.simulation.particles.len(),
                scene.simulation.dt,
                total,
                out.display()
            );
            let bar = std::io::stderr().is_terminal().then(|| {
                let bar = ProgressBar::new(total);
                bar.set_style(
                    ProgressStyle::with_template(
                        "{bar:40} {pos}/{len} steps  t = {msg}  [{elapsed} < {eta}]",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                bar
            });
            let summary = run_cpu(&mut scene, &mut dir, |p| match &bar {
                Some(bar) => {
                    bar.set_position(p.step);
                    bar.set_message(format!("{:.4} s", p.time));
                }
                None => log::info!(
                    "step {}/{}  t = {:.4} s  kinetic energy = {:.4e} J",
                    p.step,
                    p.total,
                    p.time,
                    p.kinetic_energy
                ),
            })
            .map_err(|e| e.to_string())?;
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            log::info!(
                "done: {} steps in {:.2} s ({:.3e} particle-steps/s); results in {}",
                summary.steps,
                summary.wall_seconds,
                summary.particle_steps_per_second,
                out.display()
            );
            Ok(())
        }
    }
}
