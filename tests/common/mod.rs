//! Helpers shared by the physics tests.
#![allow(dead_code)]

use wgdem_core::scene::{Scene, SceneConfig, build_scene};

pub mod skip;

/// Scene fixtures shared by the tests (`tests/fixtures/NAME.toml`).
const FIXTURES: &[(&str, &str)] = &[("material_m", include_str!("../fixtures/material_m.toml"))];

/// `toml` with every line `# fixture: NAME` replaced by the fixture `NAME`.
pub fn with_fixtures(toml: &str) -> String {
    toml.lines()
        .map(|line| match line.trim().strip_prefix("# fixture: ") {
            Some(name) => FIXTURES
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("no test fixture {name}"))
                .1
                .to_owned(),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Builds a scene from inline TOML (with its fixtures), panicking with the library's message
/// on error.
pub fn scene(toml: &str) -> Scene {
    let toml = with_fixtures(toml);
    let config = SceneConfig::parse(&toml, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    build_scene(config, "test.toml").unwrap_or_else(|e| panic!("{e}"))
}

/// The engine a check runs on (see [`both_backends!`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum On {
    /// The f64 CPU reference.
    Cpu,
    /// The GPU engine.
    Gpu,
}

/// Declares the CPU test `$cpu` and its GPU twin `$gpu`, running `$check(On::Cpu)` and
/// `$check(On::Gpu)` (which returns early where GPU tests are skipped).
#[allow(unused_macros)]
macro_rules! both_backends {
    ($cpu:ident, $gpu:ident, $check:ident) => {
        #[test]
        fn $cpu() {
            $check(On::Cpu);
        }
        #[test]
        fn $gpu() {
            $check(On::Gpu);
        }
    };
}

/// A frictionless, undamped (restitution 1) scene of explicit spheres in `[cell]` `cell`.
pub fn periodic_scene(law: &str, safety: f64, cell: &str, spheres: &str) -> String {
    elastic_scene(law, safety, spheres) + &format!("        [cell]\n        {cell}\n")
}

/// A `[[walls]]` plane of material "m" named `name` at height `z` (m), its normal `normal_z` times
/// z's unit vector, moving along z at `velocity_z` (m/s).
pub fn plane(name: &str, z: f64, normal_z: f64, velocity_z: f64) -> String {
    format!(
        "
        [[walls]]
        kind = \"plane\"
        name = \"{name}\"
        material = \"m\"
        point = [0.0, 0.0, {z}]
        normal = [0.0, 0.0, {normal_z}]
        velocity = [0.0, 0.0, {velocity_z}]
"
    )
}

/// A sphere on a floor in a periodic cell: of radius 2 mm at x = 15 mm of a 2 cm cube from the
/// origin, resting under gravity on a plane at z = 0 (μ = 0.5, restitution 0.2, Hertz with true
/// history), the cell's `L` zero until a test sets it: the spheres' velocities are fluctuations
/// about the affine field, which a wall does not follow. Settled for `settle` steps.
pub fn sphere_on_a_floor_in_a_cell(settle: u64) -> wgdem_core::cpu::Simulation {
    let cell = "edges = [[0.02, 0.0, 0.0], [0.0, 0.02, 0.0], [0.0, 0.0, 0.02]]";
    let toml = periodic_scene(
        "hertz",
        0.2,
        cell,
        "{ position = [0.015, 0.01, 0.002], radius = 0.002 }",
    )
    .replace("friction = 0.0", "friction = 0.5")
    .replace("restitution = 1.0", "restitution = 0.2")
    .replace("gravity = [0.0, 0.0, 0.0]", "gravity = [0.0, 0.0, -9.81]")
        + &plane("floor", 0.0, 1.0, 0.0);
    let mut sim = scene(&toml).simulation;
    assert!(
        sim.gravity.z < 0.0 && sim.walls.len() == 1,
        "the scene's edits"
    );
    sim.run(settle);
    sim
}

/// A frictionless, undamped (restitution 1) scene of explicit spheres `spheres` without
/// gravity, with the `law` spring–dashpot and true history, at `safety` of the critical step.
pub fn elastic_scene(law: &str, safety: f64, spheres: &str) -> String {
    format!(
        r#"
        [simulation]
        duration = 1.0
        output_interval = 1.0
        safety_factor = {safety}
        gravity = [0.0, 0.0, 0.0]
        [contact]
        law = "{law}"
        history = "true"
        [[materials]]
        name = "m"
        density = 2500.0
        friction = 0.0
        young_modulus = 1e8
        poisson_ratio = 0.25
        restitution = 1.0
        [[particles]]
        kind = "explicit"
        material = "m"
        spheres = [{spheres}]
"#
    )
}

/// `n` spheres of radius 2–3 mm on a jittered 3 mm-spaced grid of 1 cm cells, moving at up to
/// 0.5 m/s in random directions; positions and radii rounded to multiples of 2⁻¹⁶ m so that a
/// shift by a dyadic cell vector is exact.
pub fn gas(seed: u64, side: usize) -> String {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let q = |x: f64| (x * 65536.0).round() / 65536.0;
    let mut spheres = String::new();
    for k in 0..side * side * side {
        let g = glam::DVec3::new(
            (k % side) as f64,
            (k / side % side) as f64,
            (k / side / side) as f64,
        );
        let x = (g + glam::DVec3::splat(0.5)) * 0.01
            + glam::DVec3::new(rng.random(), rng.random(), rng.random()) * 0.002
            - glam::DVec3::splat(0.001);
        let v =
            glam::DVec3::new(rng.random(), rng.random(), rng.random()) - glam::DVec3::splat(0.5);
        let r = 0.002 + 0.001 * rng.random::<f64>();
        spheres.push_str(&format!(
            "{{ position = [{}, {}, {}], radius = {}, velocity = [{}, {}, {}] }},\n",
            q(x.x),
            q(x.y),
            q(x.z),
            q(r),
            v.x,
            v.y,
            v.z
        ));
    }
    spheres
}

/// 64 spheres of radius 2–2.8 mm on a 6 mm lattice (a 24 mm cube of them), the `spheres` of a
/// scene.
pub fn gas64() -> String {
    let mut spheres = String::new();
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    for k in 0..64 {
        let g = glam::DVec3::new((k % 4) as f64, (k / 4 % 4) as f64, (k / 16) as f64);
        let x = (g + glam::DVec3::splat(0.5)) * 0.006;
        let r = 0.002 + 0.0008 * rng.random::<f64>();
        spheres.push_str(&format!(
            "{{ position = [{}, {}, {}], radius = {r} }},\n",
            x.x, x.y, x.z
        ));
    }
    spheres
}

/// Pairs touching through a face of the cell but not directly.
pub fn touching_across(sim: &wgdem_core::cpu::Simulation) -> usize {
    let (p, cell) = (&sim.particles, sim.cell().expect("a periodic cell"));
    let mut across = 0;
    for i in 0..p.len() {
        for j in i + 1..p.len() {
            let reach = p.radius[i] + p.radius[j];
            let d = p.position[j] - p.position[i];
            if cell.nearest_image(d).length() < reach && d.length() >= reach {
                across += 1;
            }
        }
    }
    across
}

/// The lattice of `compressed_lattice`: sphere radius (m, dyadic), spheres along each edge,
/// and the compression rate along x (1/s).
pub const LATTICE_RADIUS: f64 = 0.0009765625;
pub const LATTICE_SIDE: usize = 4;
pub const LATTICE_RATE: f64 = 2.0;

/// A simple cubic lattice of `LATTICE_SIDE`³ touching spheres of `LATTICE_RADIUS` (linear
/// springs `k_n = k_t = 1e5 N/m`, no damping, μ = 0) filling a periodic cube compressed along x
/// at `LATTICE_RATE`: the radius and spacing are dyadic, so the pairs along y and z touch with
/// an overlap of exactly 0.
pub fn compressed_lattice() -> String {
    let (r, n) = (LATTICE_RADIUS, LATTICE_SIDE);
    let a0 = 2.0 * r;
    let mut spheres = String::new();
    for k in 0..n * n * n {
        let g = [k % n, k / n % n, k / n / n].map(|c| (c as f64 + 0.5) * a0);
        spheres.push_str(&format!("{{ position = {g:?}, radius = {r} }},\n"));
    }
    let side = a0 * n as f64;
    let cell = format!(
        "edges = [[{side}, 0.0, 0.0], [0.0, {side}, 0.0], [0.0, 0.0, {side}]]\n        velocity_gradient = [[-{LATTICE_RATE}, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]"
    );
    periodic_scene("hooke", 0.2, &cell, &spheres).replace(
        "young_modulus = 1e8\n        poisson_ratio = 0.25\n        restitution = 1.0",
        "kn = 1e5\n        kt = 1e5\n        gamma_n = 0.0\n        gamma_t = 0.0",
    )
}

/// Asserts that every sphere of `sim` lies inside its periodic cell (`0 ≤ s < 1`).
pub fn assert_inside_cell(sim: &wgdem_core::cpu::Simulation) {
    let cell = sim.cell().expect("a periodic cell");
    for (i, &x) in sim.particles.position.iter().enumerate() {
        let s = cell.fractional(x);
        assert!(
            s.cmpge(glam::DVec3::ZERO).all() && s.cmplt(glam::DVec3::ONE).all(),
            "sphere {i} outside the cell at {s}"
        );
    }
}

/// Relative difference |a − b| / |b|.
pub fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

/// A GPU device for a GPU test. Each test makes its own: tests run in parallel, and lavapipe
/// runs one device's submissions one after another, so a device shared by the tests of a
/// binary made the GPU test binaries 1.3 to 1.7 times slower on two cores. A machine without a
/// Vulkan driver fails these tests with the engine's own message (CI installs lavapipe); set
/// `WGDEM_SKIP_GPU_TESTS=1` to skip them explicitly instead (reported by name, and refused
/// under `WGDEM_STRICT_TESTS=1`: see `skip.rs`).
pub fn gpu() -> Option<wgdem_gpu::GpuContext> {
    if skip::gpu_tests_skipped() {
        return None;
    }
    let ctx = wgdem_gpu::GpuContext::new(None).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("GPU adapter: {}", ctx.describe());
    Some(ctx)
}

/// Whether the adapter a GPU test would take is a software one, without creating a device:
/// for tests whose devices the engine's constructors create (`GpuBackend::auto`, `new`);
/// `None` where GPU tests are skipped, as [`gpu`]. When these tests made a device only to
/// drop it at once (four test threads at a time), none of them finished within 270 s on an
/// NVIDIA H200 (driver 580.159.04), where every other GPU test binary passed; the cause was
/// not established there (gfx-rs/wgpu#8365 reports hangs on NVIDIA's Linux driver when
/// devices are dropped concurrently). Asking for the adapter alone avoids that pattern.
pub fn gpu_is_software() -> Option<bool> {
    if skip::gpu_tests_skipped() {
        return None;
    }
    let info = wgdem_gpu::context::adapter_info(None).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("GPU adapter: {}", wgdem_gpu::context::describe(&info));
    Some(wgdem_gpu::context::is_software(&info))
}

/// A runner backend on the GPU engine for `sim` with `options`, on `ctx`'s device.
pub fn gpu_backend(
    ctx: &wgdem_gpu::GpuContext,
    sim: &wgdem_core::cpu::Simulation,
    options: wgdem_gpu::GpuOptions,
) -> wgdem_gpu::GpuBackend {
    let engine = wgdem_gpu::GpuEngine::new(&ctx.device, &ctx.queue, sim, options)
        .unwrap_or_else(|e| panic!("{e}"));
    wgdem_gpu::GpuBackend {
        engine,
        adapter: ctx.describe(),
    }
}

/// Runs `sim` for `steps` on the GPU and returns the simulation with the GPU's state.
pub fn run_gpu(
    ctx: &wgdem_gpu::GpuContext,
    sim: &wgdem_core::cpu::Simulation,
    steps: u64,
    options: wgdem_gpu::GpuOptions,
) -> (wgdem_core::cpu::Simulation, wgdem_gpu::GpuEngine) {
    let mut engine = wgdem_gpu::GpuEngine::new(&ctx.device, &ctx.queue, sim, options)
        .unwrap_or_else(|e| panic!("{e}"));
    engine.run(steps).unwrap_or_else(|e| panic!("{e}"));
    let mut out = sim.clone();
    engine.read_into(&mut out).unwrap_or_else(|e| panic!("{e}"));
    (out, engine)
}

/// The text of the configuration file `path` with `sets` (`KEY=VALUE`) applied as `--set`
/// applies them, panicking with the library's message on error.
pub fn with_sets(path: &std::path::Path, sets: &[&str]) -> String {
    use wgdem_core::overrides::{Override, apply};
    let text = std::fs::read_to_string(path).expect("the configuration file");
    let sets: Vec<Override> = sets
        .iter()
        .map(|s| Override::parse(s).unwrap_or_else(|e| panic!("{s}: {e}")))
        .collect();
    apply(&text, &path.to_string_lossy(), &sets).unwrap_or_else(|e| panic!("{e}"))
}

/// A bundled direct shear preset, `assets/shear/NAME`.
pub fn shear_preset(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/shear")
        .join(name)
}

/// Loads a bundled direct shear preset, panicking with the library's message on error.
pub fn load_shear(name: &str) -> wgdem_core::shear::ShearSetup {
    wgdem_core::shear::ShearSetup::load(&shear_preset(name)).unwrap_or_else(|e| panic!("{e}"))
}

/// The quick quartz preset sheared only 0.75 mm, with checkpoints every 20 rows.
pub fn short_shear() -> String {
    std::fs::read_to_string(shear_preset("fleischmann_quick_true.toml"))
        .expect("preset")
        .replace("displacement = 3e-3", "displacement = 7.5e-4")
        + "\n[output]\ncheckpoint_rows = 20\ncheckpoint_seconds = 0\nvtk_snapshots = 2\n"
}

/// TOML of an open-topped box of plane walls named floor, xmin, xmax, ymin, ymax, from the
/// origin to `(len, len)`, of `material`.
pub fn open_box_walls(material: &str, len: f64) -> String {
    wgdem_core::bench::plane_box_walls(len, None, material)
}

/// Spheres of 2–3 mm (material "m": glass-like, E = 1e7 Pa, μ 0.5) placed at random in
/// `[0, max]` above a floor plane of material "floor" (the same constants), falling under
/// gravity. `contact` is the body of the `[contact]` table (law, history, pairs).
pub fn random_spheres_on_a_floor(
    count: u32,
    max: [f64; 3],
    seed: u64,
    contact: &str,
) -> wgdem_core::cpu::Simulation {
    let material = |name: &str| {
        format!(
            r#"
        [[materials]]
        name = "{name}"
        density = 2500.0
        friction = 0.5
        young_modulus = 1e7
        poisson_ratio = 0.3
        restitution = 0.5"#
        )
    };
    scene(&format!(
        r#"
        [simulation]
        duration = 1.0
        output_interval = 1.0
        seed = {seed}
        [contact]
        {contact}
        {}
        {}
        [[particles]]
        kind = "random"
        material = "m"
        count = {count}
        region = {{ min = [0.0, 0.0, 0.0], max = [{}, {}, {}] }}
        size = {{ distribution = "uniform", min_diameter = 0.002, max_diameter = 0.003 }}
        [[walls]]
        kind = "plane"
        name = "floor"
        material = "floor"
        point = [0.0, 0.0, 0.0]
        normal = [0.0, 0.0, 1.0]
        "#,
        material("m"),
        material("floor"),
        max[0],
        max[1],
        max[2]
    ))
    .simulation
}

/// A simulation advanced on either engine, with its state (and, on the GPU, its forces) read
/// back after every call, for checks that follow a run step by step.
pub struct Stepper {
    /// The state after the last call.
    pub sim: wgdem_core::cpu::Simulation,
    gpu: Option<(wgdem_gpu::GpuContext, wgdem_gpu::GpuEngine)>,
}

impl Stepper {
    /// `sim` on `on`; `None` where GPU tests are skipped.
    pub fn new(sim: &wgdem_core::cpu::Simulation, on: On) -> Option<Self> {
        let gpu = match on {
            On::Cpu => None,
            On::Gpu => {
                let ctx = gpu()?;
                let engine =
                    wgdem_gpu::GpuEngine::new(&ctx.device, &ctx.queue, sim, Default::default())
                        .unwrap_or_else(|e| panic!("{e}"));
                Some((ctx, engine))
            }
        };
        Some(Self {
            sim: sim.clone(),
            gpu,
        })
    }

    /// Advances `n` steps and reads the state back.
    pub fn run(&mut self, n: u64) {
        match &mut self.gpu {
            None => self.sim.run(n),
            Some((_, engine)) => {
                engine.run(n).unwrap_or_else(|e| panic!("{e}"));
                engine
                    .read_into(&mut self.sim)
                    .and_then(|()| engine.read_forces_into(&mut self.sim))
                    .unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }
}

/// Asserts that two runs of one scene ended in the same bits: every particle's position,
/// velocity and spin, the contact counts, the first wall's force and the contact work.
pub fn assert_same_bits(
    what: &str,
    a: &wgdem_core::cpu::Simulation,
    b: &wgdem_core::cpu::Simulation,
) {
    let n = a.particles.len();
    let differ = (0..n)
        .filter(|&i| {
            a.particles.position[i] != b.particles.position[i]
                || a.particles.velocity[i] != b.particles.velocity[i]
                || a.particles.angular_velocity[i] != b.particles.angular_velocity[i]
        })
        .count();
    let worst = (0..n)
        .map(|i| (a.particles.position[i] - b.particles.position[i]).length())
        .fold(0.0, f64::max);
    assert_eq!(
        differ, 0,
        "{what}: {differ} of {n} particles differ (positions by up to {worst:e} m)"
    );
    assert_eq!(a.stats, b.stats, "{what}: contact counts");
    assert_eq!(a.walls[0].force, b.walls[0].force, "{what}: floor force");
    assert_eq!(
        (a.work.elastic.to_bits(), a.work.dissipated.to_bits()),
        (b.work.elastic.to_bits(), b.work.dissipated.to_bits()),
        "{what}: contact work"
    );
}

/// Every file of a run directory (relative path → bytes), `summary.json` and the checkpoint
/// excepted (timings differ).
pub fn outputs(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path
                .strip_prefix(dir)
                .expect("inside")
                .display()
                .to_string();
            if name != "summary.json" && name != "checkpoint.bin" {
                files.insert(name, std::fs::read(&path).expect("read"));
            }
        }
    }
    files
}
