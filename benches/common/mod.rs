//! Shared by the benches: settings from the environment, the GPU, the dense packing's box.

/// TOML of six plane walls of `material` enclosing `[0, len]² × [0, height]`.
pub fn walls(len: f64, height: f64, material: &str) -> String {
    wgdem_core::bench::plane_box_walls(len, Some(height), material)
}

/// `(side, layers, spacing)` of a simple-cubic lattice of about `n` spheres of 5 mm at 0.5 %
/// overlap.
pub fn lattice(n: u32) -> (u32, u32, f64) {
    let side = (n as f64).cbrt().round().max(1.0) as u32;
    let layers = (n / (side * side)).max(1);
    (side, layers, 0.005 * 0.995)
}

/// The bench settings: `WGDEM_BENCH_SIZES` (default `sizes`), `WGDEM_BENCH_BACKENDS`
/// (default `cpu,gpu`) and `WGDEM_BENCH_STEPS` (default 200), and the GPU when asked for and
/// present (printing which, or why not).
pub struct Settings {
    /// Particle counts.
    pub sizes: Vec<u32>,
    /// Measure the CPU reference.
    pub cpu: bool,
    /// The GPU, when measured.
    pub gpu: Option<wgdem_gpu::GpuContext>,
    /// Measured steps (after 20 warm-up steps).
    pub steps: u64,
}

/// Reads [`Settings`] from the environment.
pub fn settings(sizes: &str) -> Settings {
    let env =
        |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.to_owned());
    let backends = env("WGDEM_BENCH_BACKENDS", "cpu,gpu");
    let gpu = if backends.contains("gpu") {
        match wgdem_gpu::GpuContext::new(None) {
            Ok(ctx) => {
                println!("gpu adapter: {}", ctx.describe());
                Some(ctx)
            }
            Err(e) => {
                println!("gpu unavailable: {e}");
                None
            }
        }
    } else {
        None
    };
    Settings {
        sizes: env("WGDEM_BENCH_SIZES", sizes)
            .split(',')
            .filter_map(|s| s.trim().parse::<u32>().ok())
            .collect(),
        cpu: backends.contains("cpu"),
        gpu,
        steps: env("WGDEM_BENCH_STEPS", "200").parse().unwrap_or(200),
    }
}
