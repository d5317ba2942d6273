//! `wgdem bench`: particle-steps per second of one backend on the sheared dense specimen of
//! [`wgdem_core::bench`], with contacts per particle, GPU memory per particle and the time of
//! each stage of a step.

use std::time::Instant;

use serde::Serialize;
use wgdem_core::bench::specimen;
use wgdem_core::cpu::Simulation;
use wgdem_gpu::{GpuContext, GpuEngine, GpuOptions, STAGES};

/// Steps run before the timed ones: pipelines compiled, neighbour lists built, tables regrown.
const WARM_UP: u64 = 20;

/// What `wgdem bench` measures (SI units; the JSON keys are the field names).
#[derive(Debug, Serialize)]
pub struct BenchReport {
    /// `gpu` or `cpu`.
    pub backend: &'static str,
    /// The GPU adapter, or the CPU reference's name.
    pub adapter: String,
    /// Contact model (`--model`).
    pub model: String,
    /// Spheres in the specimen.
    pub particles: usize,
    /// Timed steps (after the warm-up).
    pub steps: u64,
    /// Time step (s).
    pub dt_s: f64,
    /// Wall-clock time of the timed steps (s).
    pub wall_seconds: f64,
    /// Particles × timed steps / wall-clock seconds.
    pub particle_steps_per_second: f64,
    /// Twice the touching pairs per sphere, plus wall contacts per sphere, after the run.
    pub contacts_per_particle: f64,
    /// GPU memory the engine holds per sphere (bytes); 0 on the CPU.
    pub gpu_bytes_per_particle: f64,
    /// The same by group of buffers (bytes per sphere).
    pub gpu_bytes_per_particle_by_group: Vec<(String, f64)>,
    /// Seconds per step of each stage, from CPU timers around one submission per stage
    /// (GPU) or none (CPU). They include a submit and wait per stage, which a batched run
    /// does not pay, so they give the shares of the stages, not the batched rate.
    pub stage_seconds_per_step: Vec<(String, f64)>,
    /// How the stage times were taken.
    pub stage_timer: &'static str,
}

/// Builds the specimen and measures it.
pub fn run(
    particles: u32,
    steps: u64,
    gpu: bool,
    adapter: Option<&str>,
    model: &str,
    mut log: impl FnMut(&str),
) -> Result<BenchReport, String> {
    if steps == 0 {
        return Err("--steps: 0 steps measure nothing; give at least 1".to_owned());
    }
    let sim = specimen(particles, model).map_err(|e| e.to_string())?;
    let n = sim.particles.len();
    log(&format!(
        "specimen: {n} spheres of {} mm, dense lattice in a shear box, lower half at {} m/s, dt {:.3e} s",
        wgdem_core::bench::DIAMETER * 1e3,
        wgdem_core::bench::SHEAR_SPEED,
        sim.dt
    ));
    let dt = sim.dt;
    let rate = |wall: f64| n as f64 * steps as f64 / wall;
    let report = |backend,
                  adapter,
                  wall: f64,
                  after: &Simulation,
                  bytes: Vec<(String, f64)>,
                  stages,
                  timer| BenchReport {
        backend,
        adapter,
        model: model.to_owned(),
        particles: n,
        steps,
        dt_s: dt,
        wall_seconds: wall,
        particle_steps_per_second: rate(wall),
        contacts_per_particle: contacts_per_particle(after),
        gpu_bytes_per_particle: bytes.iter().map(|(_, b)| b).sum(),
        gpu_bytes_per_particle_by_group: bytes,
        stage_seconds_per_step: stages,
        stage_timer: timer,
    };
    if !gpu {
        let mut cpu = sim;
        cpu.run(WARM_UP);
        let t0 = Instant::now();
        cpu.run(steps);
        let wall = t0.elapsed().as_secs_f64();
        return Ok(report(
            "cpu",
            "CPU reference (f64, one thread)".to_owned(),
            wall,
            &cpu,
            Vec::new(),
            Vec::new(),
            "none",
        ));
    }
    let ctx = GpuContext::new(adapter).map_err(|e| e.to_string())?;
    log(&format!("adapter: {}", ctx.describe()));
    let mut engine = GpuEngine::new(&ctx.device, &ctx.queue, &sim, GpuOptions::default())
        .map_err(|e| e.to_string())?;
    engine.run(WARM_UP).map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    engine.run(steps).map_err(|e| e.to_string())?;
    let wall = t0.elapsed().as_secs_f64();
    // Stage shares over a tenth of the timed steps (at least 5).
    let profiled = (steps / 10).max(5);
    let stages = engine.profile_stages(profiled).map_err(|e| e.to_string())?;
    let mut after = sim.clone();
    engine.read_into(&mut after).map_err(|e| e.to_string())?;
    Ok(report(
        "gpu",
        ctx.describe(),
        wall,
        &after,
        engine
            .memory_breakdown()
            .into_iter()
            .map(|(name, bytes)| (name.to_owned(), bytes as f64 / n as f64))
            .collect(),
        STAGES
            .iter()
            .zip(stages)
            .map(|(name, s)| ((*name).to_owned(), s / profiled as f64))
            .collect(),
        "cpu timers around one submission per stage",
    ))
}

fn contacts_per_particle(sim: &Simulation) -> f64 {
    (2 * sim.stats.contacts + sim.stats.wall_contacts) as f64 / sim.particles.len() as f64
}

/// The report as aligned text lines.
pub fn print(r: &BenchReport) {
    println!("backend                     {}", r.backend);
    println!("adapter                     {}", r.adapter);
    println!("model                       {}", r.model);
    println!("particles                   {}", r.particles);
    println!(
        "steps                       {} (dt {:.3e} s)",
        r.steps, r.dt_s
    );
    println!("wall_seconds                {:.3}", r.wall_seconds);
    println!(
        "particle_steps_per_second   {:.3e}",
        r.particle_steps_per_second
    );
    println!("contacts_per_particle       {:.2}", r.contacts_per_particle);
    if r.backend == "gpu" {
        println!(
            "gpu_bytes_per_particle      {:.0}",
            r.gpu_bytes_per_particle
        );
        for (name, b) in &r.gpu_bytes_per_particle_by_group {
            println!("  {name:<34} {b:>7.0}");
        }
        let total: f64 = r.stage_seconds_per_step.iter().map(|(_, s)| s).sum();
        println!("stage times per step ({}):", r.stage_timer);
        for (name, s) in &r.stage_seconds_per_step {
            println!(
                "  {name:<14} {:>10.3} ms  {:>5.1} %",
                s * 1e3,
                100.0 * s / total.max(f64::MIN_POSITIVE)
            );
        }
    }
}
