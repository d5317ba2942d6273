//! `wgdem bench`: particle-steps per second of one backend on the sheared dense specimen of
//! [`wgdem_core::bench`] or on a scene file, with contacts per particle, GPU memory per
//! particle and the time of each stage of a step.

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use wgdem_core::cpu::Simulation;

/// Steps run before the timed ones: pipelines compiled, neighbour lists built, tables regrown.
const WARM_UP: u64 = 20;

/// What `wgdem bench` measures.
#[derive(Debug, Clone)]
pub enum Specimen {
    /// The dense lattice in a shear box of [`wgdem_core::bench`]: about `particles` spheres,
    /// contact model `model`.
    Lattice { particles: u32, model: String },
    /// A scene file, measured after `after` seconds of simulated time.
    Scene { path: PathBuf, after: f64 },
}

/// What `wgdem bench` measures (SI units; the JSON keys are the field names).
#[derive(Debug, Serialize)]
pub struct BenchReport {
    /// `gpu` or `cpu`.
    pub backend: &'static str,
    /// The GPU adapter, or the CPU reference's name.
    pub adapter: String,
    /// What was measured: `lattice`, or the scene file (`--scene`).
    pub specimen: String,
    /// Simulated time taken before the warm-up and the timed steps (s; `--after`).
    pub after_s: f64,
    /// Contact model (`--model`; a scene's `[contact] law`).
    pub model: String,
    /// Whether the contact kernels were compiled for the specimen's contact model alone
    /// (`false` with `--generic-kernels`: for every model; the CPU reference: `false`).
    pub specialized_kernels: bool,
    /// Bits per word in which the per-step GPU kernels load and store the per-particle arrays
    /// and slots: 64 where the device has 64-bit integers (same results, fewer per-lane
    /// loads on lavapipe), 32 without them or with `--words32`; 0 on the CPU.
    pub storage_word_bits: u32,
    /// Whether the GPU engine took each batch's steps in one workgroup (small systems,
    /// `--gpu-path`; docs/architecture.md) rather than a dispatch per pass of each step;
    /// `false` on the CPU.
    pub single_workgroup: bool,
    /// Whether the GPU engine evaluated each pair once, on one side, which hands the other its
    /// force and torque (`--pairs`; docs/architecture.md), rather than on both sides; the CPU
    /// reference always evaluates a pair once.
    pub pairs_once: bool,
    /// Spheres in the specimen.
    pub particles: usize,
    /// Timed steps (after the warm-up).
    pub steps: u64,
    /// Time step (s).
    pub dt_s: f64,
    /// Wall-clock time of the timed steps (s).
    pub wall_clock_s: f64,
    /// Particles × timed steps / wall-clock seconds.
    pub particle_steps_per_s: f64,
    /// Twice the touching pairs per sphere, plus wall contacts per sphere, after the run.
    pub contacts_per_particle: f64,
    /// Contacts (touching pairs, each once, and wall contacts) × timed steps / wall-clock
    /// seconds, from the contacts after the run: LIGGGHTS-comparable work per second.
    pub contact_steps_per_s: f64,
    /// GPU memory the engine holds per sphere (bytes); 0 on the CPU.
    pub gpu_bytes_per_particle: f64,
    /// The same by group of buffers (bytes per sphere).
    pub gpu_bytes_per_particle_by_group: Vec<(String, f64)>,
    /// Each stage of a step (GPU only).
    pub stages: Vec<StageReport>,
    /// How the stage times were taken.
    pub stage_timer: &'static str,
    /// Partners listed (within the neighbour skin) per sphere; 0 on the CPU.
    pub listed_per_particle: f64,
    /// Neighbour slots per sphere the history table holds after the run (sized from the
    /// specimen, regrown if a list outgrew it); 0 on the CPU.
    pub neighbour_slots: u32,
    /// Rows of wall slots (held by the spheres with a wall within their skin); 0 on the CPU.
    pub wall_rows: u32,
    /// Times a table was regrown during the run; 0 on the CPU.
    pub regrowths: u32,
    /// Neighbour-list builds during the timed steps: a build is the sort and the list
    /// passes, taken where some sphere has moved half the skin, so a falling or flowing
    /// packing builds far more often than a settled one.
    pub neighbour_builds: u64,
    /// Neighbour-list builds during the profiled steps (GPU only; 0 on the CPU): the rebuild
    /// stages' times are averages over these builds and the steps without one.
    pub profiled_neighbour_builds: u64,
    /// Measured device copy bandwidth, read plus write (bytes/s); 0 on the CPU.
    pub copy_bandwidth_bytes_per_second: f64,
    /// What a direct shear row's measures of the particles (kinetic energy, highest sphere,
    /// touching pairs and fabric) cost after the timed steps, in seconds, the median of
    /// three: summed on the device and 48 bytes read back (`GpuEngine::row_sums`, what a GPU
    /// shear test does), and the whole state read back and measured on the host (what the
    /// CPU reference's rows do); both 0 on the CPU.
    pub row_device_s: f64,
    /// See [`BenchReport::row_device_s`].
    pub row_host_s: f64,
}

/// One stage of a GPU step.
#[derive(Debug, Serialize)]
pub struct StageReport {
    /// Stage name (`wgdem_gpu::STAGES`).
    pub name: String,
    /// Seconds per step: GPU time of the stage's compute pass from timestamp queries where
    /// the adapter has them, else `cpu_seconds_per_step` (see `BenchReport::stage_timer`).
    pub seconds_per_step: f64,
    /// Seconds per step from CPU timers around one submission per stage. They include a
    /// submit and wait per stage, which a batched run does not pay, so they give the shares
    /// of the stages, not the batched rate.
    pub cpu_seconds_per_step: f64,
    /// Bytes the stage reads and writes per particle-step
    /// (`GpuEngine::stage_bytes_per_particle`); `null` where not modelled.
    pub bytes_per_particle_step: Option<f64>,
    /// Those bytes for all particles over `seconds_per_step` (bytes/s).
    pub bandwidth_bytes_per_second: Option<f64>,
}

/// The simulation `specimen` describes, its name and model for the report, and the steps to
/// take before the warm-up.
fn build(
    specimen: &Specimen,
    log: &mut impl FnMut(&str),
) -> Result<(Simulation, String, String, u64), String> {
    match specimen {
        Specimen::Lattice { particles, model } => {
            let sim = wgdem_core::bench::specimen(*particles, model).map_err(crate::cli_error)?;
            log(&format!(
                "specimen: {} spheres of {} mm, dense lattice in a shear box, lower half at {} m/s, dt {:.3e} s",
                sim.particles.len(),
                wgdem_core::bench::DIAMETER * 1e3,
                wgdem_core::bench::SHEAR_SPEED,
                sim.dt
            ));
            Ok((sim, "lattice".to_owned(), model.clone(), 0))
        }
        Specimen::Scene { path, after } => {
            let sim = wgdem_io::load_scene(path)
                .map_err(crate::cli_error)?
                .simulation;
            // Written so that NaN fails too; a step count past 2^53 is no benchmark.
            let first = after / sim.dt;
            if !(*after >= 0.0 && first < 9e15) {
                return Err(format!(
                    "--after: {after} s is not a time to run first; give 0 or more seconds (at most {:.3e} s at dt {:.3e} s)",
                    9e15 * sim.dt,
                    sim.dt
                ));
            }
            let first = first.round() as u64;
            log(&format!(
                "scene: {}: {} spheres, {} walls, dt {:.3e} s; {first} steps ({after} s) first, untimed",
                path.display(),
                sim.particles.len(),
                sim.walls.len(),
                sim.dt
            ));
            let model = format!("{:?}", sim.model.law).to_lowercase();
            Ok((sim, path.display().to_string(), model, first))
        }
    }
}

/// Builds the specimen and measures it.
pub fn run(
    specimen: &Specimen,
    steps: u64,
    gpu: bool,
    adapter: Option<&str>,
    settings: crate::GpuSettings,
    mut log: impl FnMut(&str),
) -> Result<BenchReport, String> {
    if steps == 0 {
        return Err("--steps: 0 steps measure nothing; give at least 1".to_owned());
    }
    let (sim, name, model, first) = build(specimen, &mut log)?;
    let after_s = first as f64 * sim.dt;
    let n = sim.particles.len();
    let timed = |wall: f64, after: &Simulation, builds: u64| BenchReport {
        backend: "cpu",
        adapter: "CPU reference (f64, one thread)".to_owned(),
        specimen: name.clone(),
        after_s,
        model: model.clone(),
        specialized_kernels: false,
        storage_word_bits: 0,
        single_workgroup: false,
        pairs_once: true,
        particles: n,
        steps,
        dt_s: after.dt,
        wall_clock_s: wall,
        particle_steps_per_s: n as f64 * steps as f64 / wall,
        contacts_per_particle: contacts_per_particle(after),
        contact_steps_per_s: (after.stats.contacts + after.stats.wall_contacts) as f64
            * steps as f64
            / wall,
        gpu_bytes_per_particle: 0.0,
        gpu_bytes_per_particle_by_group: Vec::new(),
        stages: Vec::new(),
        stage_timer: "none",
        listed_per_particle: 0.0,
        neighbour_slots: 0,
        wall_rows: 0,
        regrowths: 0,
        neighbour_builds: builds,
        profiled_neighbour_builds: 0,
        copy_bandwidth_bytes_per_second: 0.0,
        row_device_s: 0.0,
        row_host_s: 0.0,
    };
    if !gpu {
        let mut cpu = sim;
        cpu.run(first + WARM_UP);
        let builds = cpu.neighbour_builds;
        let t0 = Instant::now();
        cpu.run(steps);
        let wall = t0.elapsed().as_secs_f64();
        return Ok(timed(wall, &cpu, cpu.neighbour_builds - builds));
    }
    gpu_run(&sim, first, steps, adapter, settings, &mut log, timed)
}

/// The GPU half of [`run`]: the engine warmed up, reordered, timed, then profiled stage by stage.
#[cfg(feature = "gpu")]
fn gpu_run(
    sim: &Simulation,
    first: u64,
    steps: u64,
    adapter: Option<&str>,
    settings: crate::GpuSettings,
    log: &mut impl FnMut(&str),
    timed: impl Fn(f64, &Simulation, u64) -> BenchReport,
) -> Result<BenchReport, String> {
    use wgdem_gpu::{GpuContext, GpuEngine, STAGES};
    let n = sim.particles.len();
    let options = crate::gpu::options(settings);
    let ctx = GpuContext::new(adapter).map_err(crate::gpu::error)?;
    log(&format!("adapter: {}", ctx.describe()));
    let mut engine =
        GpuEngine::new(&ctx.device, &ctx.queue, sim, options).map_err(crate::gpu::error)?;
    // The lists are built in the warm-up; then the particles are reordered by cell, as a long
    // run's are every `reorder_every` steps, so that the timed steps see that order rather than
    // the lattice's, which no run keeps.
    engine.run(first + WARM_UP).map_err(|e| e.to_string())?;
    engine.reorder_next_batch();
    engine.run(WARM_UP).map_err(|e| e.to_string())?;
    let builds = |engine: &GpuEngine| engine.neighbour_builds().map_err(|e| e.to_string());
    let before = builds(&engine)?;
    let t0 = Instant::now();
    engine.run(steps).map_err(|e| e.to_string())?;
    let wall = t0.elapsed().as_secs_f64();
    let after_timed = builds(&engine)?;
    let profiled = profiled_steps(steps);
    let times = engine.profile_stages(profiled).map_err(|e| e.to_string())?;
    let profiled_builds = builds(&engine)? - after_timed;
    let mut after = sim.clone();
    engine.read_into(&mut after).map_err(|e| e.to_string())?;
    let row_device_s =
        median_of_three(|| engine.row_sums().map(|_| ()).map_err(|e| e.to_string()))?;
    // Into a state already there, as a shear test's rows read into its simulation.
    let mut state = after.clone();
    let row_host_s = median_of_three(|| {
        engine.read_into(&mut state).map_err(|e| e.to_string())?;
        let contacts = wgdem_core::analysis::touching(&state.particles);
        std::hint::black_box((
            wgdem_core::analysis::fabric_tensor(&contacts),
            state.particles.kinetic_energy(),
        ));
        Ok(())
    })?;
    let listed = engine.listed_per_particle().map_err(|e| e.to_string())?;
    let touching = 2.0 * after.stats.contacts as f64 / n as f64;
    let bytes = engine.stage_bytes_per_particle(listed, touching);
    // 256 MiB, far beyond any cache.
    let copy = ctx.copy_bandwidth(1 << 28).map_err(|e| e.to_string())?;
    let by_group: Vec<(String, f64)> = engine
        .memory_breakdown()
        .into_iter()
        .map(|(name, b)| (name.to_owned(), b as f64 / n as f64))
        .collect();
    Ok(BenchReport {
        backend: "gpu",
        adapter: ctx.describe(),
        specialized_kernels: options.specialize,
        storage_word_bits: if engine.words64() { 64 } else { 32 },
        single_workgroup: engine.single_workgroup(),
        pairs_once: engine.pairs_once(),
        gpu_bytes_per_particle: by_group.iter().map(|(_, b)| b).sum(),
        gpu_bytes_per_particle_by_group: by_group,
        stages: (0..STAGES.len())
            .map(|k| {
                let cpu = times.cpu[k] / profiled as f64;
                let per_step = times.gpu.map_or(cpu, |g| g[k] / profiled as f64);
                StageReport {
                    name: STAGES[k].to_owned(),
                    seconds_per_step: per_step,
                    cpu_seconds_per_step: cpu,
                    bytes_per_particle_step: bytes[k],
                    bandwidth_bytes_per_second: bytes[k].map(|b| b * n as f64 / per_step),
                }
            })
            .collect(),
        stage_timer: if times.gpu.is_some() {
            "gpu timestamp queries around each stage's compute pass"
        } else {
            "cpu timers around one submission per stage (the adapter has no timestamp queries)"
        },
        listed_per_particle: listed,
        neighbour_slots: engine.slots(),
        wall_rows: engine.wall_rows(),
        regrowths: engine.regrowths,
        profiled_neighbour_builds: u64::from(profiled_builds),
        copy_bandwidth_bytes_per_second: copy,
        row_device_s,
        row_host_s,
        ..timed(wall, &after, u64::from(after_timed - before))
    })
}

/// No GPU engine in this build: refused.
#[cfg(not(feature = "gpu"))]
fn gpu_run(
    _sim: &Simulation,
    _first: u64,
    _steps: u64,
    _adapter: Option<&str>,
    _settings: crate::GpuSettings,
    _log: &mut impl FnMut(&str),
    _timed: impl Fn(f64, &Simulation, u64) -> BenchReport,
) -> Result<BenchReport, String> {
    Err(crate::gpu::unavailable())
}

/// The median wall-clock seconds of three calls of `f`.
#[cfg(feature = "gpu")]
fn median_of_three(mut f: impl FnMut() -> Result<(), String>) -> Result<f64, String> {
    let mut t = [0.0; 3];
    for x in &mut t {
        let t0 = Instant::now();
        f()?;
        *x = t0.elapsed().as_secs_f64();
    }
    t.sort_by(f64::total_cmp);
    Ok(t[1])
}

/// The steps over which a GPU bench takes its stage shares: a tenth of the timed steps, at
/// least 5.
fn profiled_steps(steps: u64) -> u64 {
    (steps / 10).max(5)
}

/// `builds` over `steps` in words: one build every so many steps, or none.
fn builds_per_step(builds: u64, steps: u64) -> String {
    if builds == 0 {
        "none".to_owned()
    } else {
        format!("one every {:.1} steps", steps as f64 / builds as f64)
    }
}

fn contacts_per_particle(sim: &Simulation) -> f64 {
    (2 * sim.stats.contacts + sim.stats.wall_contacts) as f64 / sim.particles.len() as f64
}

/// The report as aligned text lines.
pub fn print(r: &BenchReport) {
    println!("backend                     {}", r.backend);
    println!("adapter                     {}", r.adapter);
    println!("specimen                    {}", r.specimen);
    if r.after_s > 0.0 {
        println!("after                       {} s (untimed)", r.after_s);
    }
    println!("model                       {}", r.model);
    if r.backend == "gpu" {
        println!(
            "contact kernels             {}",
            if r.specialized_kernels {
                "for this model alone"
            } else {
                "for every model (--generic-kernels)"
            }
        );
        println!(
            "storage words               {}-bit{}",
            r.storage_word_bits,
            if r.storage_word_bits == 64 {
                ""
            } else {
                " (--words32, or the device has no 64-bit integers)"
            }
        );
        println!(
            "steps recorded              {}",
            if r.single_workgroup {
                "in one workgroup per batch (--gpu-path; the stage table below times the general path's passes)"
            } else {
                "a dispatch per pass of each step, the rebuild's in every 16th (general path)"
            }
        );
        println!(
            "pairs evaluated             {}",
            if r.pairs_once {
                "once, on one side, which hands the other its share (--pairs)"
            } else {
                "on both sides (--pairs)"
            }
        );
    }
    println!("particles                   {}", r.particles);
    println!(
        "steps                       {} (dt {:.3e} s)",
        r.steps, r.dt_s
    );
    println!("wall_clock_s                {:.3}", r.wall_clock_s);
    println!("particle_steps_per_s   {:.3e}", r.particle_steps_per_s);
    println!("contacts_per_particle       {:.2}", r.contacts_per_particle);
    println!("contact_steps_per_s    {:.3e}", r.contact_steps_per_s);
    println!(
        "neighbour_builds            {} in the timed steps ({})",
        r.neighbour_builds,
        builds_per_step(r.neighbour_builds, r.steps)
    );
    if r.backend == "gpu" {
        println!(
            "gpu_bytes_per_particle      {:.0}",
            r.gpu_bytes_per_particle
        );
        for (name, b) in &r.gpu_bytes_per_particle_by_group {
            println!("  {name:<34} {b:>7.0}");
        }
        println!("listed_per_particle         {:.2}", r.listed_per_particle);
        println!(
            "shear_row_s                 {:.4} summed on the device; {:.4} read back and measured on the host",
            r.row_device_s, r.row_host_s
        );
        println!(
            "neighbour_slots             {} per particle; wall rows {} ({:.1} % of particles); {} regrowths",
            r.neighbour_slots,
            r.wall_rows,
            100.0 * f64::from(r.wall_rows) / r.particles as f64,
            r.regrowths
        );
        println!(
            "copy_bandwidth              {:.2} GB/s (read + write)",
            r.copy_bandwidth_bytes_per_second / 1e9
        );
        let total: f64 = r.stages.iter().map(|s| s.seconds_per_step).sum();
        println!("stage times per step ({}):", r.stage_timer);
        println!(
            "  over {} profiled steps with {} neighbour builds: the rebuild stages average the steps with a build and without",
            profiled_steps(r.steps),
            r.profiled_neighbour_builds
        );
        println!(
            "  {:<14} {:>10} {:>7} {:>12} {:>10} {:>10} {:>10}",
            "stage", "ms", "share", "B/particle", "GB/s", "of copy", "cpu ms"
        );
        for st in &r.stages {
            let (bytes, bw, frac) =
                match (st.bytes_per_particle_step, st.bandwidth_bytes_per_second) {
                    (Some(b), Some(bw)) => (
                        format!("{b:.0}"),
                        format!("{:.2}", bw / 1e9),
                        format!("{:.1} %", 100.0 * bw / r.copy_bandwidth_bytes_per_second),
                    ),
                    _ => ("-".to_owned(), "-".to_owned(), "-".to_owned()),
                };
            println!(
                "  {:<14} {:>10.3} {:>6.1}% {bytes:>12} {bw:>10} {frac:>10} {:>10.3}",
                st.name,
                st.seconds_per_step * 1e3,
                100.0 * st.seconds_per_step / total.max(f64::MIN_POSITIVE),
                st.cpu_seconds_per_step * 1e3
            );
        }
    }
}
