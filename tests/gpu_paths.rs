//! The ways the GPU engine records steps, each against the general path with every step full
//! (`GpuOptions { lean_steps: false, single_workgroup: Some(false) }`): lean steps (the general
//! path's default: every `LEAN_EVERY`-th step full, the others without the rebuild's passes)
//! and the single-workgroup path (`integrate.steps`: many steps in one dispatch of one
//! workgroup, with a general step only where the lists are rebuilt). Their per-particle
//! arithmetic is the full steps', in the same order, so every run here must end in the same
//! bits, including the wall forces and contact counts read back after each batch (which the
//! servo steers by): a tolerance would hide a step taken twice or skipped, a stale force or a
//! wall moved at the wrong time.

mod common;

use common::{assert_same_bits, gpu, random_spheres_on_a_floor, scene};
use wgdem_core::cpu::Simulation;
use wgdem_gpu::{GpuContext, GpuEngine, GpuOptions, WallReadout};

/// How a run records its steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    /// The reference: the general path, every step full.
    Full,
    /// The general path's lean steps.
    Lean,
    /// The single-workgroup path.
    Single,
}

fn options(path: Path) -> GpuOptions {
    GpuOptions {
        single_workgroup: Some(path == Path::Single),
        lean_steps: path != Path::Full,
        ..GpuOptions::default()
    }
}

/// Runs `sim` for `steps` in batches of `batch` steps, steering wall 0 from each batch's
/// readout (`servo`, if given), and returns the final state, every readout and the engine.
fn run(
    ctx: &GpuContext,
    sim: &Simulation,
    options: GpuOptions,
    steps: u64,
    servo: Option<fn(&WallReadout) -> glam::DVec3>,
) -> (Simulation, Vec<WallReadout>, GpuEngine) {
    let mut engine =
        GpuEngine::new(&ctx.device, &ctx.queue, sim, options).unwrap_or_else(|e| panic!("{e}"));
    let mut readouts = Vec::new();
    engine
        .run_streaming(steps, |readout, walls| {
            readouts.push(readout.clone());
            if let Some(servo) = servo {
                walls.set_velocity(0, servo(readout));
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let mut out = sim.clone();
    engine.read_into(&mut out).unwrap_or_else(|e| panic!("{e}"));
    (out, readouts, engine)
}

/// `sim` on the reference path and on each other; asserts which path each took, the same
/// bits at the end and the same readouts, bit for bit, after every batch; returns the engines
/// of the lean steps and of the single workgroup, in that order.
fn compare(
    what: &str,
    sim: &Simulation,
    options: impl Fn(Path) -> GpuOptions,
    steps: u64,
    servo: Option<fn(&WallReadout) -> glam::DVec3>,
) -> Option<[GpuEngine; 2]> {
    let ctx = gpu()?;
    let (full, full_readouts, full_engine) = run(&ctx, sim, options(Path::Full), steps, servo);
    assert!(!full_engine.single_workgroup(), "{what}: general path");
    let mut engines = Vec::new();
    for path in [Path::Lean, Path::Single] {
        let what = format!("{what}, {path:?}");
        let (other, readouts, engine) = run(&ctx, sim, options(path), steps, servo);
        assert_eq!(
            engine.single_workgroup(),
            path == Path::Single,
            "{what}: the path taken"
        );
        eprintln!(
            "{what}: {steps} steps in {} batches, {} contacts, {} neighbour builds, {} batches finished after a rebuild, {} regrowths",
            readouts.len(),
            other.stats.contacts,
            engine.neighbour_builds().unwrap_or_default(),
            engine.short_batches,
            engine.regrowths
        );
        assert_same_bits(&what, &full, &other);
        assert_eq!(full.walls.len(), other.walls.len());
        for (a, b) in full.walls.iter().zip(&other.walls) {
            assert_eq!(a, b, "{what}: walls (position, velocity, force, torque)");
        }
        assert_eq!(full_readouts.len(), readouts.len(), "{what}: batches read");
        for (a, b) in full_readouts.iter().zip(&readouts) {
            assert_eq!(a, b, "{what}: readout at step {}", a.steps);
        }
        assert_eq!(
            full_engine.neighbour_builds().ok(),
            engine.neighbour_builds().ok(),
            "{what}: neighbour builds"
        );
        engines.push(engine);
    }
    engines.try_into().ok()
}

/// 600 spheres rain onto a floor for 60 ms: the lists are rebuilt every few steps while they
/// fall, more often than a batch has rounds (spare steps) for at first, so batches stop short
/// and are finished from a general (full) step; then they land and contacts form.
#[test]
fn a_pour_takes_the_full_steps_bits() {
    let sim = random_spheres_on_a_floor(
        600,
        [0.03, 0.03, 0.04],
        3,
        "law = \"hertz\"\nhistory = \"true\"",
    );
    let steps = (0.06 / sim.dt).ceil() as u64;
    let Some(engines) = compare("pour", &sim, options, steps, None) else {
        return;
    };
    for engine in engines {
        assert!(
            engine.short_batches > 0,
            "the pour's rebuilds never outran a batch's rounds or spare steps: the short-batch path went untested"
        );
    }
}

/// A lid on a scheduled velocity, a servo on the floor set from each batch's floor force (as
/// the shear test's), loads with force and velocity schedules and a locked sphere, batches of
/// 20 steps: the times at which schedules are evaluated, the host's velocities and every
/// readout must be the full steps'.
#[test]
fn a_steered_scene_with_loads_takes_the_full_steps_bits() {
    let sim = scene(
        r#"
        [simulation]
        duration = 1.0
        output_interval = 1.0
        seed = 11
        gravity = [0.0, 0.0, -9.81]
        [contact]
        law = "hertz"
        history = "true"
        # fixture: material_m
        [[particles]]
        kind = "random"
        material = "m"
        count = 300
        region = { min = [0.0, 0.0, 0.0], max = [0.02, 0.02, 0.02] }
        size = { distribution = "uniform", min_diameter = 0.002, max_diameter = 0.003 }
        [[loads]]
        particles = [0]
        force = { times = [0.0, 0.02], values = [[0.0, 0.0, 0.0], [1e-3, 0.0, -2e-3]] }
        [[loads]]
        particles = [1]
        velocity = { times = [0.0, 0.03], values = [[0.0, 0.0, 0.0], [0.05, 0.0, 0.0]] }
        lock = ["rz"]
        [[walls]]
        kind = "plane"
        name = "floor"
        material = "m"
        point = [0.0, 0.0, 0.0]
        normal = [0.0, 0.0, 1.0]
        [[walls]]
        kind = "plane"
        name = "lid"
        material = "m"
        point = [0.0, 0.0, 0.021]
        normal = [0.0, 0.0, -1.0]
        velocity_schedule = { times = [0.0, 0.04], values = [[0.0, 0.0, 0.0], [0.0, 0.0, -0.1]] }
        "#,
    )
    .simulation;
    let steps = (0.05 / sim.dt).ceil() as u64;
    let batches = |path| GpuOptions {
        batch_steps: 20,
        ..options(path)
    };
    // Pushes the floor up while it carries less than 2 mN, down otherwise.
    let servo: fn(&WallReadout) -> glam::DVec3 = |r| {
        let lift = 2e-3 - r.walls[0].0.z;
        glam::DVec3::new(0.0, 0.0, (1e-3 * lift / 2e-3).clamp(-1e-3, 1e-3))
    };
    compare("steered", &sim, batches, steps, Some(servo));
}

/// Neighbour and wall tables too small from the start: they overflow inside the batches'
/// general (full) steps and are regrown, and the batch is finished from the failed step, as
/// with full steps only.
#[test]
fn regrowth_inside_a_batch_takes_the_full_steps_bits() {
    let sim = random_spheres_on_a_floor(
        400,
        [0.02, 0.02, 0.03],
        5,
        "law = \"hertz\"\nhistory = \"true\"",
    );
    let steps = (0.05 / sim.dt).ceil() as u64;
    let small = |path| GpuOptions {
        slots: 1,
        wall_rows: 1,
        ..options(path)
    };
    let Some(engines) = compare("regrowth", &sim, small, steps, None) else {
        return;
    };
    for engine in engines {
        assert!(engine.regrowths > 0, "the tables never overflowed");
    }
}

/// Batches of 10 steps, shorter than `LEAN_EVERY` (a periodic cell's servo takes 10 steps at
/// a time), keep no spare steps: the pour's rebuilds stop some of them short, and a finishing
/// batch takes the steps lost, with the full steps' bits and readouts.
#[test]
fn short_batches_without_spare_steps_take_the_full_steps_bits() {
    let sim = random_spheres_on_a_floor(
        400,
        [0.02, 0.02, 0.03],
        7,
        "law = \"hertz\"\nhistory = \"true\"",
    );
    let steps = (0.03 / sim.dt).ceil() as u64;
    let short = |path| GpuOptions {
        batch_steps: 10,
        ..options(path)
    };
    let Some([lean, _]) = compare("short batches", &sim, short, steps, None) else {
        return;
    };
    assert!(lean.short_batches > 0, "no batch stopped short");
}

/// Reorders due every 150 steps, in batches of 200, while the pour's rebuilds stop batches
/// short: a batch finished from where it stopped must not reorder there (full steps, which
/// took those steps in one batch, reorder at the next batch's start), or the particles'
/// order, and with it the order of every force sum, would differ.
#[test]
fn reorders_inside_short_batches_take_the_full_steps_bits() {
    let sim = random_spheres_on_a_floor(
        600,
        [0.03, 0.03, 0.04],
        3,
        "law = \"hertz\"\nhistory = \"true\"",
    );
    let steps = (0.06 / sim.dt).ceil() as u64;
    let often = |path| GpuOptions {
        reorder_every: 150,
        ..options(path)
    };
    let Some(engines) = compare("reorders", &sim, often, steps, None) else {
        return;
    };
    for engine in engines {
        assert!(engine.short_batches > 0, "no batch stopped short");
    }
}
