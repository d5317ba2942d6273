//! CPU reference throughput on a dense packing: particle-steps per second.
//!
//! `cargo bench --bench cpu_step` measures a simple-cubic packing of monodisperse spheres
//! (d = 5 mm, 0.5 % overlap, so every sphere has six contacts from the first step) held in a
//! box whose walls overlap the outer spheres by as much, under gravity, Hertz with true
//! history, for each size in `WGDEM_BENCH_SIZES`
//! (comma-separated particle counts, default `2000,20000`; CI smoke runs use a small one).
//! Prints one line per size; the figure is steps × particles / wall-clock seconds.

use std::time::Instant;

use wgdem_core::scene::{SceneConfig, build_scene};

fn scene(n_side: u32, layers: u32) -> String {
    let d = 0.005;
    let spacing = d * 0.995;
    let (len, height) = (n_side as f64 * spacing, layers as f64 * spacing);
    let mut walls = String::new();
    for (name, point, normal) in [
        ("floor", [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        ("lid", [0.0, 0.0, height], [0.0, 0.0, -1.0]),
        ("xmin", [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
        ("xmax", [len, 0.0, 0.0], [-1.0, 0.0, 0.0]),
        ("ymin", [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ("ymax", [0.0, len, 0.0], [0.0, -1.0, 0.0]),
    ] {
        walls.push_str(&format!(
            "[[walls]]\nkind = \"plane\"\nname = \"{name}\"\nmaterial = \"quartz\"\npoint = {point:?}\nnormal = {normal:?}\n"
        ));
    }
    format!(
        r#"
        [simulation]
        duration = 1.0
        output_interval = 1.0
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
        [[particles]]
        kind = "lattice"
        material = "quartz"
        radius = {r}
        origin = [{h}, {h}, {h}]
        spacing = {spacing}
        counts = [{n_side}, {n_side}, {layers}]
        {walls}
        "#,
        r = d / 2.0,
        h = spacing / 2.0,
    )
}

fn main() {
    let sizes = std::env::var("WGDEM_BENCH_SIZES").unwrap_or_else(|_| "2000,20000".to_owned());
    let steps: u64 = std::env::var("WGDEM_BENCH_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    for size in sizes
        .split(',')
        .filter_map(|s| s.trim().parse::<u32>().ok())
    {
        // A roughly cubic block: side² × layers ≈ size.
        let side = (size as f64).cbrt().round().max(1.0) as u32;
        let layers = (size / (side * side)).max(1);
        let config = SceneConfig::parse(&scene(side, layers), "bench").expect("valid bench scene");
        let mut sim = build_scene(config, "bench")
            .expect("valid bench scene")
            .simulation;
        let n = sim.particles.len();
        sim.run(10); // warm-up: neighbour list, history maps
        let t0 = Instant::now();
        sim.run(steps);
        let secs = t0.elapsed().as_secs_f64();
        println!(
            "cpu_step particles={n} steps={steps} contacts_per_particle={:.2} particle_steps_per_second={:.3e}",
            2.0 * sim.stats.contacts as f64 / n as f64,
            n as f64 * steps as f64 / secs
        );
    }
}
