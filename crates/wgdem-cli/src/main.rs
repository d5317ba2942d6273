//! `wgdem`: run discrete element scenes from the command line.
//!
//! Errors print as one sentence naming the file and field at fault, and the exit status is 1
//! (2 for command-line usage errors, from clap).

mod bench;
mod cell;
#[cfg_attr(not(feature = "gpu"), path = "nogpu.rs")]
mod gpu;
mod sweep;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use wgdem_core::output::{OutputDir, SeriesColumns};
use wgdem_core::runner::{Backend as RunBackend, CpuBackend, step_count};
use wgdem_core::shear::{ShearRun, ShearSetup};

/// GPU discrete element method for granular materials. Units are SI throughout.
#[derive(Debug, Parser)]
#[command(name = "wgdem", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scene file and write timeseries.csv, particle snapshots, the ParaView series
    /// vtk/run.pvd, summary.json, input.toml and checkpoint.bin.
    Run {
        /// Scene file (TOML; reference in docs/scene.md).
        scene: PathBuf,
        /// Engine that takes the steps: auto takes the CPU reference where the only GPU is a
        /// software one (lavapipe) and the scene has fewer than 10 000 spheres (100 000 in a
        /// periodic cell), the GPU engine otherwise, and logs why.
        #[arg(long, value_enum, default_value_t = Engine::Auto)]
        backend: Engine,
        /// GPU adapter to use: the first whose name contains this text (case-insensitive), or
        /// the one with this PCI bus id (`0000:18:00.0`: one of identical GPUs);
        /// default: the `WGPU_ADAPTER_NAME` environment variable, else a high-performance one.
        #[arg(long, value_name = "NAME")]
        adapter: Option<String>,
        /// Output directory (created if missing).
        #[arg(long, default_value = "out", conflicts_with = "resume")]
        out: PathBuf,
        /// Continue the run in this directory from its last checkpoint (same scene file, same
        /// backend); the results are those of an uninterrupted run.
        #[arg(long, value_name = "DIR")]
        resume: Option<PathBuf>,
        /// Replace the results of an earlier run in the output directory.
        #[arg(long, conflicts_with = "resume")]
        overwrite: bool,
        #[command(flatten)]
        gpu_path: GpuPathArg,
        /// Override a value of the file by its dotted key, as the file would set it (repeatable):
        /// `--set materials.quartz.friction=0.3 --set simulation.seed=7`; array entries by
        /// name or index from 0. input.toml records the result.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Run a direct shear test: preparation, consolidation under a servo-controlled normal
    /// stress, shear at constant speed. Writes shear.csv, summary.json, plots/ (PNG, SVG),
    /// vtk/ (ParaView) and checkpoint.bin to the output directory.
    Shear(ShearArgs),
    /// Run an element test in a periodic cell: a gas compacted to a confining stress, then
    /// drained or constant-p triaxial compression, biaxial plane strain or simple shear.
    /// Writes cell.csv, summary.json, plots/ (PNG, SVG), vtk/ (ParaView) and checkpoint.bin.
    Cell(cell::CellArgs),
    /// Drive one contact (two spheres, or a plane and a sphere) through the motions of a case
    /// file and write contact.csv: forces on body 2 and the contact's elastic and dissipated
    /// work, one row per step.
    Contact {
        /// Case file (TOML; reference in docs/contact.md, cases in assets/contact/).
        case: PathBuf,
        /// Engine that evaluates the contact: the f64 CPU reference or the WGSL models in f32.
        #[arg(long, value_enum, default_value_t = Backend::Cpu)]
        backend: Backend,
        /// GPU adapter to use (see `wgdem run --help`).
        #[arg(long, value_name = "NAME")]
        adapter: Option<String>,
        /// Output directory (created if missing).
        #[arg(long, default_value = "out/contact")]
        out: PathBuf,
        /// Replace an earlier contact.csv in the output directory.
        #[arg(long)]
        overwrite: bool,
        /// Override a value of the file by its dotted key, as the file would set it (repeatable):
        /// `--set materials.quartz.friction=0.3 --set simulation.seed=7`; array entries by
        /// name or index from 0. input.toml records the result.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Measure particle-steps per second on a dense specimen in a shear box whose lower half
    /// shears (built at once, no preparation), or on a scene file (`--scene`), with contacts
    /// and GPU bytes per particle and the time of each stage of a step.
    Bench {
        /// Spheres in the specimen (rounded to a lattice of side² × layers).
        #[arg(long, default_value_t = 100_000)]
        particles: u32,
        /// Measure this scene file instead of the lattice specimen (its own particles, walls,
        /// contact law and time step; `--particles` and `--model` do not apply).
        #[arg(long, value_name = "FILE", conflicts_with_all = ["particles", "model"])]
        scene: Option<PathBuf>,
        /// With `--scene`: simulated time (s) taken first, untimed, on the same engine, so
        /// that the timed steps see the scene at that point (e.g. a settled packing).
        #[arg(
            long,
            value_name = "SECONDS",
            default_value_t = 0.0,
            requires = "scene",
            allow_negative_numbers = true
        )]
        after: f64,
        /// Timed steps (after 40 warm-up steps, with a reorder by cell after the 20th).
        #[arg(long, default_value_t = 200)]
        steps: u64,
        /// Engine that takes the steps.
        #[arg(long, value_enum, default_value_t = Backend::DEFAULT)]
        backend: Backend,
        /// GPU adapter to use (see `wgdem run --help`).
        #[arg(long, value_name = "NAME")]
        adapter: Option<String>,
        /// Contact model: hertz or hooke (Fleischmann, true history), linear (Kuhn) or hill.
        #[arg(long, default_value = "hertz")]
        model: String,
        /// Compile the GPU contact kernels for every contact model instead of the specimen's
        /// alone (same results, slower; for comparison).
        #[arg(long)]
        generic_kernels: bool,
        /// Load and store the per-particle arrays in the GPU kernels as 32-bit words even where
        /// the device has 64-bit integers (same results, slower on lavapipe; for comparison).
        #[arg(long)]
        words32: bool,
        #[command(flatten)]
        gpu_path: GpuPathArg,
        /// Print one JSON object on stdout instead of text (log lines go to stderr).
        #[arg(long)]
        json: bool,
    },
    /// Run a parameter sweep described by a file (a base configuration, a grid or a CSV of
    /// override sets, repeats) on Dask, through the Python package (`python -m wgdem sweep`;
    /// needs `pip install "./python[sweep]"`). Writes a directory per member, index.json and
    /// results.csv.
    Sweep(sweep::SweepArgs),
    /// Validate a scene file and print what it builds (particles, walls, time step).
    Check {
        /// Scene file (TOML).
        scene: PathBuf,
    },
}

/// What `wgdem shear` is asked for.
#[derive(Debug, clap::Args)]
struct ShearArgs {
    /// Direct shear file (TOML; reference in docs/shear.md, presets in assets/shear/).
    config: PathBuf,
    /// Engine that takes the steps (auto: as `wgdem run --help` says).
    #[arg(long, value_enum, default_value_t = Engine::Auto)]
    backend: Engine,
    /// GPU adapter to use (see `wgdem run --help`).
    #[arg(long, value_name = "NAME")]
    adapter: Option<String>,
    /// Output directory (created if missing).
    #[arg(long, default_value = "out/shear", conflicts_with = "resume")]
    out: PathBuf,
    /// Continue the test in this directory from its last checkpoint (same configuration
    /// file, same backend).
    #[arg(long, value_name = "DIR")]
    resume: Option<PathBuf>,
    /// Replace the results of an earlier test in the output directory.
    #[arg(long, conflicts_with = "resume")]
    overwrite: bool,
    /// Override a value of the file by its dotted key, as the file would set it (repeatable):
    /// `--set materials.quartz.friction=0.3 --set simulation.seed=7`; array entries by
    /// name or index from 0. input.toml records the result.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Scale the test to this many spheres of the file's sizes: the box (length, width,
    /// heights) and the shear displacement grow by (N / specimen.count)^(1/3), keeping
    /// the specimen's shape, packing and shear strain; stresses, speeds and the time
    /// step stay as in the file (docs/shear.md). A resumed test needs the same N.
    #[arg(long, value_name = "N")]
    particles: Option<u32>,
    /// Start from a saved packing instead of preparing one (CSV, wgdem's .vtu, LAMMPS
    /// data or dump; e.g. an earlier test's specimen_consolidated.csv): the spheres must
    /// lie inside the box, fill the lower box and reach above the shear plane, and number
    /// specimen.count; consolidation begins at once. The box is the file's: not with
    /// --particles.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["resume", "particles"])]
    specimen: Option<PathBuf>,
    #[command(flatten)]
    gpu_path: GpuPathArg,
}

/// `--gpu-path` and `--pairs`, on every command that steps the GPU engine.
#[derive(Debug, clap::Args)]
struct GpuPathArg {
    /// How the GPU engine records its steps: `general` (a dispatch per pass of each step,
    /// the rebuild's passes only in every 16th),
    /// `single-workgroup` (many steps per dispatch in one workgroup, for small systems; same
    /// results), or `auto` (the latter up to 1 500 spheres on a software adapter, 340 on a GPU).
    #[arg(long = "gpu-path", value_name = "KIND", value_enum, default_value_t = GpuPath::Auto)]
    path: GpuPath,
    /// How the GPU engine evaluates a pair of spheres: `once` (on one side, which hands the
    /// other its force and torque: less arithmetic, 36 bytes more per neighbour slot), `both`
    /// (on each side), or `auto` (once on a software adapter where the contact model's slots
    /// are wide: Kuhn, hill, Jäger, Type C rolling resistance; on both sides on a GPU). Same
    /// results.
    #[arg(long = "pairs", value_name = "HOW", value_enum, default_value_t = Pairs::Auto)]
    pairs: Pairs,
}

impl GpuPathArg {
    /// The settings these options ask for, the rest default.
    fn settings(&self) -> GpuSettings {
        GpuSettings {
            single_workgroup: self.path.single_workgroup(),
            pairs_once: match self.pairs {
                Pairs::Auto => None,
                Pairs::Once => Some(true),
                Pairs::Both => Some(false),
            },
            ..GpuSettings::default()
        }
    }
}

/// How the GPU engine evaluates a pair (`GpuOptions::pairs_once`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Pairs {
    /// Once on a software adapter where the slots are wide; on both sides for the spring's
    /// 16-byte slots and on a GPU.
    Auto,
    /// Once, on the side of the smaller stable id (where the slots are one table).
    Once,
    /// On both sides.
    Both,
}

/// How the GPU engine records its steps (`GpuOptions::single_workgroup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum GpuPath {
    /// Many steps per dispatch in one workgroup up to 1 500 spheres on a software adapter
    /// (lavapipe) and 340 on a GPU, the general path above.
    Auto,
    /// A dispatch per pass of every step.
    General,
    /// Many steps per dispatch in one workgroup wherever the engine can (one slot chunk).
    SingleWorkgroup,
}

impl GpuPath {
    fn single_workgroup(self) -> Option<bool> {
        match self {
            GpuPath::Auto => None,
            GpuPath::General => Some(false),
            GpuPath::SingleWorkgroup => Some(true),
        }
    }
}

/// The engine of `run` and `shear`: as [`Backend`], or chosen by the scene's size and the
/// adapter (`GpuBackend::auto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Engine {
    /// The CPU reference on a software adapter (lavapipe) below 10 000 spheres (100 000 in a
    /// periodic cell), or where no adapter can be used; the GPU engine otherwise. The log
    /// says which and why.
    Auto,
    /// The wgpu compute-shader engine (Vulkan, Metal, DX12; lavapipe without a GPU).
    Gpu,
    /// The f64 CPU reference engine.
    Cpu,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Backend {
    /// The wgpu compute-shader engine (Vulkan, Metal, DX12; lavapipe without a GPU).
    Gpu,
    /// The f64 CPU reference engine.
    Cpu,
}

impl Backend {
    /// The GPU engine where this build has it, else the CPU reference.
    const DEFAULT: Self = if cfg!(feature = "gpu") {
        Backend::Gpu
    } else {
        Backend::Cpu
    };
}

/// What the CLI asks of the GPU engine beyond its defaults (unread in a build without it).
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
struct GpuSettings {
    /// Steps per submit (the servo's control interval in a shear test).
    batch_steps: Option<u32>,
    /// Contact kernels compiled for the scene's models only.
    specialize: bool,
    /// 64-bit storage words where the device has them.
    words64: bool,
    /// Many steps per dispatch in one workgroup (`None`: by size).
    single_workgroup: Option<bool>,
    /// Each pair evaluated once (`None`: by the slots' width).
    pairs_once: Option<bool>,
}

impl Default for GpuSettings {
    fn default() -> Self {
        Self {
            batch_steps: None,
            specialize: true,
            words64: true,
            single_workgroup: None,
            pairs_once: None,
        }
    }
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"))
        .format_timestamp(None)
        .init();
    let cli = Cli::parse();
    match execute(cli) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The library's arguments that the CLI sets from a flag: `(argument, flag)`.
const FLAGS: [(&str, &str); 3] = [
    ("particles", "--particles"),
    ("model", "--model"),
    ("resume", "--resume"),
];

/// A library error as the CLI prints it: an argument the library names becomes the flag that
/// sets it, and a directory that already holds results gets the flags that resolve it.
fn cli_error(e: wgdem_core::error::Error) -> String {
    use wgdem_core::error::Error;
    match e {
        Error::OutputExists { dir, found } => format!(
            "output directory {} already holds results ({found}); choose another --out or pass --overwrite",
            dir.display()
        ),
        Error::OutputBusy { dir, holder } => format!(
            "output directory {} is being written by another run ({holder}); wait for it to end or choose another --out",
            dir.display()
        ),
        e => e.renaming_field(&FLAGS).to_string(),
    }
}

fn make_backend(
    backend: Engine,
    adapter: Option<&str>,
    sim: &wgdem_core::cpu::Simulation,
    settings: GpuSettings,
) -> Result<Box<dyn RunBackend>, String> {
    match backend {
        Engine::Cpu => Ok(Box::new(CpuBackend)),
        Engine::Gpu => gpu::backend(adapter, sim, settings),
        Engine::Auto => gpu::auto_backend(adapter, sim, settings),
    }
}

/// The text of the input file `path` with the `--set` overrides applied
/// (`wgdem_core::overrides`), and the file's name for errors.
fn overridden(path: &std::path::Path, set: &[String]) -> Result<(String, String), String> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: {e}"))?;
    let sets = set
        .iter()
        .map(|s| wgdem_core::overrides::Override::parse(s))
        .collect::<wgdem_core::Result<Vec<_>>>()
        .map_err(cli_error)?;
    let text = wgdem_core::overrides::apply(&text, &file, &sets).map_err(cli_error)?;
    Ok((text, file))
}

fn contact(
    case: PathBuf,
    backend: Backend,
    adapter: Option<String>,
    out: PathBuf,
    overwrite: bool,
    set: &[String],
) -> Result<(), String> {
    use wgdem_core::contact_case::{CaseEvaluator, CpuEvaluator, run_case, stage_ends};
    let (text, file) = overridden(&case, set)?;
    let mut evaluator: Box<dyn CaseEvaluator> = match backend {
        Backend::Cpu => Box::new(CpuEvaluator::default()),
        Backend::Gpu => gpu::contact_evaluator(adapter.as_deref())?,
    };
    let csv = out.join("contact.csv");
    let name = match backend {
        Backend::Cpu => "cpu",
        Backend::Gpu => "gpu",
    };
    let (_, rows) = run_case(
        &text,
        &file,
        evaluator.as_mut(),
        name,
        Some(&out),
        overwrite,
    )
    .map_err(cli_error)?;
    println!("contact evaluated on: {}", evaluator.name());
    println!(
        "{:<28} {:>6} {:>14} {:>14} {:>14} {:>14}",
        "stage", "step", "F_n (N)", "|F_t| (N)", "W_elastic (J)", "W_dissip (J)"
    );
    for row in stage_ends(&rows) {
        let ft = (row.tangential_force_x.powi(2)
            + row.tangential_force_y.powi(2)
            + row.tangential_force_z.powi(2))
        .sqrt();
        println!(
            "{:<28} {:>6} {:>14.5e} {:>14.5e} {:>14.5e} {:>14.5e}",
            row.stage, row.step, row.normal_force, ft, row.elastic_work, row.dissipated_work
        );
    }
    println!(
        "wrote {} and {}",
        csv.display(),
        out.join("summary.json").display()
    );
    Ok(())
}

fn shear(args: ShearArgs) -> Result<(), String> {
    let ShearArgs {
        config,
        backend,
        adapter,
        out,
        resume,
        overwrite,
        particles,
        specimen,
        gpu_path,
        set,
    } = args;
    let (text, file) = overridden(&config, &set)?;
    let setup = ShearSetup::parse_scaled(&text, &file, particles).map_err(cli_error)?;
    let specimen = specimen
        .map(|path| wgdem_io::read_packing(&path))
        .transpose()
        .map_err(cli_error)?;
    // The engine is built from the specimen the test starts with.
    let start = match &specimen {
        Some(packing) => Some(
            ShearRun::create_from_specimen(
                setup.clone(),
                packing,
                &out,
                overwrite,
                Box::new(wgdem_io::TestFiles),
            )
            .map_err(cli_error)?,
        ),
        None => None,
    };
    let options = GpuSettings {
        batch_steps: Some(setup.config.simulation.control_interval_steps as u32),
        ..gpu_path.settings()
    };
    let mut engine = make_backend(
        backend,
        adapter.as_deref(),
        start
            .as_ref()
            .map_or(&setup.scene.simulation, |run| run.simulation()),
        options,
    )?;
    let (mut run, dir) = match (resume, start) {
        (_, Some(run)) => (run, out),
        (Some(dir), None) => (
            ShearRun::resume(setup, &dir, engine.as_mut(), Box::new(wgdem_io::TestFiles))
                .map_err(cli_error)?,
            dir,
        ),
        (None, None) => (
            ShearRun::create(setup, &out, overwrite, Box::new(wgdem_io::TestFiles))
                .map_err(cli_error)?,
            out,
        ),
    };
    let s = run.setup();
    let target = s.config.shear.displacement;
    log::info!(
        "{}: {} particles, dt {:.3e} s, σn {:.4e} Pa, shear {:.3e} m at {:.3e} m/s on {}, writing to {}",
        config.display(),
        run.simulation().particles.len(),
        s.scene.simulation.dt,
        s.config.consolidation.normal_stress,
        target,
        s.config.shear.speed,
        engine
            .adapter()
            .unwrap_or_else(|| "the CPU reference".to_owned()),
        dir.display()
    );
    if particles.is_some() {
        let b = &s.config.shear_box;
        log::info!(
            "scaled box: {:.4} × {:.4} m, lower half {:.4} m, upper half {:.4} m high",
            b.length,
            b.width,
            b.lower_height,
            b.upper_height
        );
    }
    if let Some(bytes) = engine.memory_bytes() {
        let n = s.scene.simulation.particles.len().max(1);
        log::info!(
            "GPU memory at the start: {:.0} B per sphere, {:.1} MiB in all (summary.json gives the end)",
            bytes as f64 / n as f64,
            bytes as f64 / (1u64 << 20) as f64
        );
    }
    let mut line = wgdem_io::progress::StageLine::new();
    let summary = run
        .run(engine.as_mut(), None, |p| line.shear(p))
        .map_err(cli_error)?
        .ok_or("the test stopped before its end")?;
    line.finish();
    log::info!(
        "done: peak τ/σ {:.3} (φ_p {:.1}°), residual {:.3} (φ_r {:.1}°), max dilation angle {:.1}°, initial void ratio {:.3}, normal stress within {:.2} %; {} steps in {:.1} s ({:.3e} particle-steps/s)",
        summary.peak_stress_ratio,
        summary.peak_friction_angle_deg,
        summary.residual_stress_ratio,
        summary.residual_friction_angle_deg,
        summary.max_dilation_angle_deg,
        summary.initial_void_ratio,
        100.0 * summary.normal_stress_error_max_fraction,
        summary.steps,
        summary.wall_clock_s,
        summary.particle_steps_per_s
    );
    println!(
        "results: {} (shear.csv, summary.json); plots: {}; ParaView: {}",
        dir.display(),
        dir.join("plots").display(),
        dir.join("vtk").join("shear.pvd").display()
    );
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn run_scene(
    path: PathBuf,
    backend: Engine,
    adapter: Option<String>,
    out: PathBuf,
    resume: Option<PathBuf>,
    overwrite: bool,
    gpu_path: GpuPathArg,
    set: &[String],
) -> Result<(), String> {
    let (text, file) = overridden(&path, set)?;
    let mut scene = wgdem_core::scene::scene_from_text(&text, &file, &wgdem_io::PackingFiles)
        .map_err(cli_error)?;
    let mut engine = make_backend(
        backend,
        adapter.as_deref(),
        &scene.simulation,
        gpu_path.settings(),
    )?;
    let dir = resume.clone().unwrap_or(out);
    let total = step_count(scene.duration, scene.simulation.dt);
    log::info!(
        "{}: {} particles, dt {:.3e} s, {} steps on {}, {} {}",
        path.display(),
        scene.simulation.particles.len(),
        scene.simulation.dt,
        total,
        engine
            .adapter()
            .unwrap_or_else(|| "the CPU reference".to_owned()),
        if resume.is_some() {
            "resuming in"
        } else {
            "writing to"
        },
        dir.display()
    );
    if resume.is_none() {
        let estimate = wgdem_core::runner::output_estimate(&scene);
        if estimate.bytes > wgdem_core::runner::OUTPUT_WARNING_BYTES {
            log::warn!(
                "outputs: {}; raise simulation.output_interval or output.vtk_interval (0: no snapshots) unless that much is meant",
                estimate.describe()
            );
        } else {
            log::info!("outputs: {}", estimate.describe());
        }
    }
    let mut line = wgdem_io::progress::StageLine::new();
    let show = |p: wgdem_core::runner::Progress| {
        line.run(&p);
        Ok(())
    };
    let vtk = Some(&wgdem_io::VtkFiles as &dyn wgdem_core::snapshot::SnapshotWriter);
    let summary = if resume.is_some() {
        wgdem_core::runner::resume(&mut scene, engine.as_mut(), &dir, vtk, show)
    } else {
        let names: Vec<String> = scene
            .simulation
            .walls
            .iter()
            .map(|w| w.name.clone())
            .collect();
        let mut output = OutputDir::create(
            &dir,
            &names,
            SeriesColumns::of(&scene.simulation),
            overwrite,
        )
        .map_err(cli_error)?;
        wgdem_core::runner::run_stoppable(&mut scene, engine.as_mut(), &mut output, vtk, show)
    }
    .map_err(cli_error)?;
    line.finish();
    log::info!(
        "done: {} steps in {:.2} s ({:.3e} particle-steps/s); results in {}",
        summary.steps,
        summary.wall_clock_s,
        summary.particle_steps_per_s,
        dir.display()
    );
    Ok(())
}

/// Runs the command; its exit status is 0 unless it fails (a sweep's is 1 where a member
/// failed, as `python -m wgdem sweep` says).
fn execute(cli: Cli) -> Result<ExitCode, String> {
    let done = match cli.command {
        Command::Sweep(args) => return sweep::launch(args),
        Command::Shear(args) => shear(args),
        Command::Cell(args) => cell::cell(args),
        Command::Contact {
            case,
            backend,
            adapter,
            out,
            overwrite,
            set,
        } => contact(case, backend, adapter, out, overwrite, &set),
        Command::Bench {
            particles,
            scene,
            after,
            steps,
            backend,
            adapter,
            model,
            generic_kernels,
            words32,
            gpu_path,
            json,
        } => {
            let specimen = match scene {
                Some(path) => bench::Specimen::Scene { path, after },
                None => bench::Specimen::Lattice { particles, model },
            };
            let report = bench::run(
                &specimen,
                steps,
                backend == Backend::Gpu,
                adapter.as_deref(),
                GpuSettings {
                    specialize: !generic_kernels,
                    words64: !words32,
                    ..gpu_path.settings()
                },
                |line| log::info!("{line}"),
            )?;
            if json {
                let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
                println!("{text}");
            } else {
                bench::print(&report);
            }
            Ok(())
        }
        Command::Check { scene } => {
            let scene = wgdem_io::load_scene(&scene).map_err(cli_error)?;
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
            let estimate = wgdem_core::runner::output_estimate(&scene);
            println!("outputs of `wgdem run`: {}", estimate.describe());
            if estimate.bytes > wgdem_core::runner::OUTPUT_WARNING_BYTES {
                println!(
                    "warning: more than {:.0} GB of outputs; raise simulation.output_interval or output.vtk_interval (0: no snapshots) unless that much is meant",
                    wgdem_core::runner::OUTPUT_WARNING_BYTES / 1e9
                );
            }
            Ok(())
        }
        Command::Run {
            scene,
            backend,
            adapter,
            out,
            resume,
            overwrite,
            gpu_path,
            set,
        } => run_scene(
            scene, backend, adapter, out, resume, overwrite, gpu_path, &set,
        ),
    };
    done.map(|()| ExitCode::SUCCESS)
}
