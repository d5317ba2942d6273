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
use wgdem_core::runner::{Backend as RunBackend, CpuBackend, run, step_count};
use wgdem_core::scene::load_scene;
use wgdem_gpu::{GpuBackend, GpuContext, GpuEngine, GpuOptions};

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
        #[arg(long, value_enum, default_value_t = Backend::Gpu)]
        backend: Backend,
        /// GPU adapter to use: the first whose name contains this text (case-insensitive);
        /// default: the `WGPU_ADAPTER_NAME` environment variable, else a high-performance one.
        #[arg(long, value_name = "NAME")]
        adapter: Option<String>,
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
    /// The wgpu compute-shader engine (Vulkan, Metal, DX12; lavapipe without a GPU).
    Gpu,
    /// The f64 CPU reference engine.
    Cpu,
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
            adapter,
            out,
            overwrite,
        } => {
            let mut scene = load_scene(&path).map_err(|e| e.to_string())?;
            let mut engine: Box<dyn RunBackend> = match backend {
                Backend::Cpu => Box::new(CpuBackend),
                Backend::Gpu => {
                    let ctx = GpuContext::new(adapter.as_deref()).map_err(|e| e.to_string())?;
                    let engine = GpuEngine::new(
                        &ctx.device,
                        &ctx.queue,
                        &scene.simulation,
                        GpuOptions::default(),
                    )
                    .map_err(|e| e.to_string())?;
                    Box::new(GpuBackend {
                        engine,
                        adapter: ctx.describe(),
                    })
                }
            };
            let names: Vec<String> = scene
                .simulation
                .walls
                .iter()
                .map(|w| w.name.clone())
                .collect();
            let mut dir = OutputDir::create(&out, &names, overwrite).map_err(|e| e.to_string())?;
            let total = step_count(scene.duration, scene.simulation.dt);
            log::info!(
                "{}: {} particles, dt {:.3e} s, {} steps on {}, writing to {}",
                path.display(),
                scene.simulation.particles.len(),
                scene.simulation.dt,
                total,
                engine
                    .adapter()
                    .unwrap_or_else(|| "the CPU reference".to_owned()),
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
            let summary = run(&mut scene, engine.as_mut(), &mut dir, |p| match &bar {
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
