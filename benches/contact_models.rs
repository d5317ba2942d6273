//! Cost of each contact model relative to Hertz with true history, on the same packing, in one
//! run so the ratios are comparable; and the Jäger model's history lengths and memory.
//!
//! `cargo bench --bench contact_models` builds, for each size in `WGDEM_BENCH_SIZES` (default
//! `8000`), a simple-cubic packing of 5 mm quartz spheres (0.5 % overlap, about six contacts per
//! sphere) confined by six steel walls, and runs `WGDEM_BENCH_STEPS` steps (default 200, after
//! 20 warm-up steps) with the sphere–sphere pairs on each model in turn:
//! - `hertz`: Fleischmann's Hertzian spring–dashpot with true history (the reference);
//! - `linear`: Kuhn, Suzuki & Daouadji's linear-frictional contact, PFC deformability E* = 8 MPa;
//! - `hill`: Potyondy's hill model (E, ν of quartz, α_h = 0.07, dry);
//! - `jager`: Jäger's contact with |Δp_max| = 0.1 μ and a capacity of 32 points.
//!
//! Walls stay on the spring model. `WGDEM_BENCH_BACKENDS` (default `cpu,gpu`) picks backends.
//! Output: one line per measurement with `particle_steps_per_s` and `relative_to_hertz`,
//! then the Jäger history-length distribution and memory per contact.

mod common;

use std::time::Instant;

use wgdem_core::contact::jager::{HistoryPoint, JagerState, gpu_bytes_per_contact};
use wgdem_core::cpu::Simulation;
use wgdem_core::scene::{SceneConfig, build_scene};
use wgdem_gpu::{GpuEngine, GpuOptions};

const MODELS: [(&str, &str); 4] = [
    ("hertz", ""),
    (
        "linear",
        "[[contact.pairs]]\nmaterials = [\"quartz\", \"quartz\"]\nmodel = \"linear\"\neffective_modulus = 8e6\n",
    ),
    (
        "hill",
        "[[contact.pairs]]\nmaterials = [\"quartz\", \"quartz\"]\nmodel = \"hill\"\ndamping_constant = 0.07\n",
    ),
    (
        "jager",
        "[[contact.pairs]]\nmaterials = [\"quartz\", \"quartz\"]\nmodel = \"jager\"\ndp_max = 0.05\ncapacity = 32\n",
    ),
];

fn dense(n: u32, pairs: &str) -> Simulation {
    let (side, layers, spacing) = common::lattice(n);
    let d = 0.005;
    let (len, height) = (side as f64 * spacing, layers as f64 * spacing);
    let walls = common::walls(len, height, "steel");
    let text = format!(
        "[simulation]\nduration = 1.0\noutput_interval = 1.0\ndt = 2e-6\n[contact]\nlaw = \"hertz\"\nhistory = \"true\"\n{pairs}\n\
         [[materials]]\nname = \"quartz\"\ndensity = 2500.0\nfriction = 0.5\nyoung_modulus = 8e6\npoisson_ratio = 0.3\nrestitution = 0.5\n\
         [[materials]]\nname = \"steel\"\nfriction = 0.3\nyoung_modulus = 2e11\npoisson_ratio = 0.3\nrestitution = 0.5\n\
         [[particles]]\nkind = \"lattice\"\nmaterial = \"quartz\"\nradius = {r}\norigin = [{h}, {h}, {h}]\nspacing = {spacing}\ncounts = [{side}, {side}, {layers}]\n{walls}",
        r = d / 2.0,
        h = spacing / 2.0
    );
    let config = SceneConfig::parse(&text, "bench").expect("valid bench scene");
    build_scene(config, "bench")
        .expect("valid bench scene")
        .simulation
}

fn main() {
    let common::Settings {
        sizes,
        cpu: on_cpu,
        gpu,
        steps,
    } = common::settings("8000");
    for n in sizes {
        let mut reference = [None, None];
        for (model, pairs) in MODELS {
            let sim = dense(n, pairs);
            let particles = sim.particles.len() as f64;
            if on_cpu {
                let mut cpu = sim.clone();
                cpu.run(20);
                let t0 = Instant::now();
                cpu.run(steps);
                let rate = particles * steps as f64 / t0.elapsed().as_secs_f64();
                let base = *reference[0].get_or_insert(rate);
                println!(
                    "model={model} backend=cpu particles={particles} steps={steps} contacts_per_particle={:.2} particle_steps_per_s={rate:.3e} relative_to_hertz={:.2}",
                    2.0 * cpu.stats.contacts as f64 / particles,
                    rate / base
                );
                if model == "jager" {
                    let point = size_of::<HistoryPoint>() as f64;
                    let state = (size_of::<JagerState>() + size_of::<usize>()) as f64;
                    let lengths = cpu.history_lengths();
                    let mut histogram = [0usize; 34];
                    for &l in &lengths {
                        histogram[l.min(33)] += 1;
                    }
                    let mean = lengths.iter().sum::<usize>() as f64 / lengths.len().max(1) as f64;
                    let shown: Vec<String> = histogram
                        .iter()
                        .enumerate()
                        .filter(|(_, c)| **c > 0)
                        .map(|(l, c)| format!("{l}:{c}"))
                        .collect();
                    println!(
                        "jager history points per contact after {} steps: mean {mean:.2}, max {}, distribution {}; memory per contact: CPU {:.0} B at the mean length ({} B per point + {} B of state and pointer), GPU history layout {} B at capacity 32",
                        steps + 20,
                        lengths.iter().max().unwrap_or(&0),
                        shown.join(" "),
                        point * mean + state,
                        point,
                        state,
                        gpu_bytes_per_contact(32)
                    );
                }
            }
            if let Some(ctx) = &gpu {
                match GpuEngine::new(&ctx.device, &ctx.queue, &sim, GpuOptions::default()) {
                    Ok(mut engine) => {
                        engine.run(20).expect("GPU run");
                        let t0 = Instant::now();
                        engine.run(steps).expect("GPU run");
                        let rate = particles * steps as f64 / t0.elapsed().as_secs_f64();
                        let base = *reference[1].get_or_insert(rate);
                        println!(
                            "model={model} backend=gpu particles={particles} steps={steps} particle_steps_per_s={rate:.3e} relative_to_hertz={:.2} gpu_bytes_per_particle={:.0} slot_bytes={} slots_per_particle={}",
                            rate / base,
                            engine.memory_bytes() as f64 / particles,
                            engine.slot_bytes(),
                            engine.slots()
                        );
                    }
                    Err(e) => println!("model={model} backend=gpu unsupported: {e}"),
                }
            }
        }
    }
}
