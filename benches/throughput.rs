//! Particle-steps per second of both backends, in one run so the ratios are comparable.
//!
//! `cargo bench --bench throughput` runs, for each size in `WGDEM_BENCH_SIZES` (default
//! `2000,100000`) and each backend in `WGDEM_BENCH_BACKENDS` (default `cpu,gpu`), two scenes
//! with Hertz contacts and true history:
//! - `pour`: spheres (d = 2.5–3.5 mm) inserted at random (solid fraction ≈ 0.2) in a box,
//!   falling; the first steps of the pour, with few contacts;
//! - `dense`: a simple-cubic packing (d = 5 mm, 0.5 % overlap) confined by six walls, about six
//!   contacts per sphere from the first step, like a consolidated specimen.
//!
//! Each measurement runs `WGDEM_BENCH_STEPS` steps (default 200) after 20 warm-up steps (GPU
//! pipelines, neighbour lists; the GPU engine then reorders the particles by cell, as a long
//! run does, and takes 20 more). Output: one line per measurement; GPU lines add the engine's
//! memory per particle (state, tables, scratch, batch backups) and how many buffers the
//! contact-history table is split into. Where the device has 64-bit integers the GPU runs
//! twice: with the per-step kernels' 64-bit storage words (`words=64`, the default) and with
//! 32-bit words (`words=32`).

mod common;

use std::time::Instant;

use wgdem_core::cpu::Simulation;
use wgdem_core::scene::{SceneConfig, build_scene};
use wgdem_gpu::{GpuEngine, GpuOptions};

const MATERIAL: &str = r#"
[contact]
law = "hertz"
history = "true"
[[materials]]
name = "quartz"
density = 2500.0
friction = 0.5
young_modulus = 8e6
poisson_ratio = 0.3
restitution = 0.5
"#;

fn build(text: &str) -> Simulation {
    let config = SceneConfig::parse(text, "bench").expect("valid bench scene");
    build_scene(config, "bench")
        .expect("valid bench scene")
        .simulation
}

fn pour(n: u32) -> Simulation {
    // Mean sphere volume 1.47e-8 m³ at solid fraction 0.2, in a box twice as tall as wide.
    let volume = n as f64 * 1.47e-8 / 0.2;
    let len = (volume / 2.0).cbrt();
    build(&format!(
        "[simulation]\nduration = 1.0\noutput_interval = 1.0\nseed = 1\n{MATERIAL}\n[[particles]]\nkind = \"random\"\nmaterial = \"quartz\"\ncount = {n}\nregion = {{ min = [0.0, 0.0, 0.0], max = [{len}, {len}, {h}] }}\nsize = {{ distribution = \"uniform\", min_diameter = 0.0025, max_diameter = 0.0035 }}\nmax_attempts = 100000\n{}",
        common::walls(len, 2.0 * len, "quartz"),
        h = 2.0 * len
    ))
}

fn dense(n: u32) -> Simulation {
    let (side, layers, spacing) = common::lattice(n);
    let d = 0.005;
    let (len, height) = (side as f64 * spacing, layers as f64 * spacing);
    build(&format!(
        "[simulation]\nduration = 1.0\noutput_interval = 1.0\n{MATERIAL}\n[[particles]]\nkind = \"lattice\"\nmaterial = \"quartz\"\nradius = {r}\norigin = [{h}, {h}, {h}]\nspacing = {spacing}\ncounts = [{side}, {side}, {layers}]\n{}",
        common::walls(len, height, "quartz"),
        r = d / 2.0,
        h = spacing / 2.0
    ))
}

fn main() {
    let common::Settings {
        sizes,
        cpu: on_cpu,
        gpu,
        steps,
    } = common::settings("2000,100000");
    for n in sizes {
        for (scene_name, make) in [("pour", pour as fn(u32) -> Simulation), ("dense", dense)] {
            let sim = make(n);
            let particles = sim.particles.len() as f64;
            if on_cpu {
                let mut cpu = sim.clone();
                cpu.run(20);
                let t0 = Instant::now();
                cpu.run(steps);
                let rate = particles * steps as f64 / t0.elapsed().as_secs_f64();
                println!(
                    "scene={scene_name} backend=cpu particles={particles} steps={steps} contacts_per_particle={:.2} particle_steps_per_s={rate:.3e}",
                    2.0 * cpu.stats.contacts as f64 / particles
                );
            }
            let Some(ctx) = &gpu else { continue };
            // 64-bit storage words where the device has them, then 32-bit words for the ratio.
            let int64 = ctx.device.features().contains(wgpu::Features::SHADER_INT64);
            for words64 in [true, false].into_iter().filter(|&w| int64 || !w) {
                let options = GpuOptions {
                    words64,
                    ..GpuOptions::default()
                };
                let mut engine =
                    GpuEngine::new(&ctx.device, &ctx.queue, &sim, options).expect("GPU engine");
                // Lists built, then the particles reordered by cell as in a long run (see
                // `wgdem bench`).
                engine.run(20).expect("GPU run");
                engine.reorder_next_batch();
                engine.run(20).expect("GPU run");
                let t0 = Instant::now();
                engine.run(steps).expect("GPU run");
                let rate = particles * steps as f64 / t0.elapsed().as_secs_f64();
                let mut out = sim.clone();
                engine.read_into(&mut out).expect("GPU read");
                println!(
                    "scene={scene_name} backend=gpu words={} particles={particles} steps={steps} contacts_per_particle={:.2} particle_steps_per_s={rate:.3e} gpu_bytes_per_particle={:.0} slot_chunks={}",
                    if engine.words64() { 64 } else { 32 },
                    2.0 * out.stats.contacts as f64 / particles,
                    engine.memory_bytes() as f64 / particles,
                    engine.slot_chunks()
                );
            }
        }
    }
}
