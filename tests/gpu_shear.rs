//! Direct shear on the GPU backend: agreement with the f64 CPU reference on a quick preset, and
//! bitwise resume from a checkpoint on the same device.

mod common;

use std::path::Path;

use wgdem_core::runner::CpuBackend;
use wgdem_core::shear::{ShearRun, ShearSetup, ShearSummary};
use wgdem_gpu::{GpuBackend, GpuContext, GpuOptions};

fn backend(ctx: &GpuContext, setup: &ShearSetup) -> GpuBackend {
    let options = GpuOptions {
        batch_steps: setup.config.simulation.control_interval_steps as u32,
        ..GpuOptions::default()
    };
    common::gpu_backend(ctx, &setup.scene.simulation, options)
}

fn run_gpu(ctx: &GpuContext, setup: ShearSetup, dir: &Path) -> ShearSummary {
    let mut b = backend(ctx, &setup);
    let mut run = ShearRun::create(setup, dir, false, Box::new(wgdem_io::TestFiles))
        .unwrap_or_else(|e| panic!("{e}"));
    let summary = run
        .run(&mut b, None, |_| {})
        .unwrap_or_else(|e| panic!("{e}"))
        .expect("ran to the end");
    // The summary reports the memory the engine holds at the end, per sphere.
    let n = summary.n_particles as f64;
    assert_eq!(
        summary.gpu_bytes_per_particle,
        Some(b.engine.memory_bytes() as f64 / n)
    );
    summary
}

/// The GPU (f32 forces, double-single positions) and the CPU (f64) start from the same
/// specimen, but a packing is chaotic: their rows part as soon as the rain meets the floor
/// (kinetic energy 1e-5 apart at step 6 500, 2e-3 at 8 500) and, started from one saved
/// specimen, within the first consolidation row (the lid's impact: 2e-3 in void ratio after
/// 500 steps), so no row can be compared tightly. Each run is a realisation of the test, and
/// the check compares realisations: seeds 1–3 on both engines.
///
/// - The means over the three seeds against the spread between CPU seeds (seeds 1–5: peaks
///   2.202, 2.396, 2.248, 2.715, 2.557; standard deviations 0.0089 of the void ratio after
///   consolidation, 0.21 of the peak ratio): a
///   difference of means beyond three standard errors of a difference of two means of three,
///   `3 s √(2/3)`, i.e. 0.022 in void ratio (3.5 %) or 0.52 in peak ratio (21 %), is a bias of
///   the GPU engine rather than chance. That is the power of three seeds: a bias smaller than
///   that passes. Measured on lavapipe over seeds 1–5: void ratio 0.606 (GPU) against 0.618
///   (CPU), peak 2.34 against 2.42, both within 1.8 standard errors.
/// - The servo holds the normal stress within 2 % on the GPU, as on the CPU (tests/shear.rs).
///
/// Seed by seed the peaks are not compared: two realisations differ by s √2 (12 % of the peak)
/// at one standard deviation, and seed 3 gave 2.248 on the CPU against 2.775 on the GPU
/// (23.5 %, more than the largest difference between the five CPU seeds, 22.8 %, which the
/// check of one seed used as its bound).
#[test]
#[ignore = "long tier: a quick shear preset on both engines at three seeds, about 2.5 minutes on lavapipe"]
fn gpu_and_cpu_runs_are_realisations_of_the_same_test() {
    let Some(ctx) = common::gpu() else { return };
    let name = "fleischmann_quick_true.toml";
    let text = std::fs::read_to_string(common::shear_preset(name)).expect("preset");
    let setup = |seed: u64| {
        let seeded = text.replace("seed = 1\n", &format!("seed = {seed}\n"));
        assert!(seed == 1 || seeded != text, "the preset's seed line moved");
        ShearSetup::parse(&seeded, name).unwrap_or_else(|e| panic!("{e}"))
    };
    const SEEDS: [u64; 3] = [1, 2, 3];
    let (cpu, gpu): (Vec<ShearSummary>, Vec<ShearSummary>) = std::thread::scope(|s| {
        let cpu = s.spawn(|| {
            SEEDS
                .iter()
                .map(|&seed| {
                    let dir = tempfile::tempdir().expect("dir");
                    let mut run = ShearRun::create(
                        setup(seed),
                        dir.path(),
                        false,
                        Box::new(wgdem_io::TestFiles),
                    )
                    .expect("create");
                    run.run(&mut CpuBackend, None, |_| {})
                        .expect("cpu")
                        .expect("done")
                })
                .collect()
        });
        let gpu = SEEDS
            .iter()
            .map(|&seed| {
                let dir = tempfile::tempdir().expect("dir");
                run_gpu(&ctx, setup(seed), dir.path())
            })
            .collect();
        (cpu.join().expect("cpu runs"), gpu)
    });
    let mean = |v: &[ShearSummary], f: fn(&ShearSummary) -> f64| {
        v.iter().map(f).sum::<f64>() / v.len() as f64
    };
    for (seed, (c, g)) in SEEDS.iter().zip(cpu.iter().zip(&gpu)) {
        eprintln!(
            "seed {seed}: peak τ/σ CPU {:.4}, GPU {:.4}; e after consolidation {:.4} / {:.4}; σ error {:.2} % / {:.2} %",
            c.peak_stress_ratio,
            g.peak_stress_ratio,
            c.initial_void_ratio,
            g.initial_void_ratio,
            100.0 * c.normal_stress_error_max_fraction,
            100.0 * g.normal_stress_error_max_fraction
        );
        assert!(g.normal_stress_error_max_fraction <= 0.02, "seed {seed}");
    }
    let standard_errors = 3.0 * (2.0 / SEEDS.len() as f64).sqrt();
    for (what, f, spread) in [
        (
            "void ratio after consolidation",
            (|s: &ShearSummary| s.initial_void_ratio) as fn(&ShearSummary) -> f64,
            0.0089,
        ),
        (
            "peak stress ratio",
            |s: &ShearSummary| s.peak_stress_ratio,
            0.21,
        ),
    ] {
        let (c, g) = (mean(&cpu, f), mean(&gpu, f));
        eprintln!("{what}: mean CPU {c:.4}, GPU {g:.4}");
        assert!(
            (g - c).abs() <= standard_errors * spread,
            "{what}: the GPU's mean {g} against the CPU's {c}, more than {:.3} apart",
            standard_errors * spread
        );
    }
}

#[test]
#[ignore = "long tier: a GPU shear test stopped and resumed, about 3 minutes on lavapipe"]
fn a_gpu_run_stopped_mid_shear_resumes_to_the_same_bits() {
    let Some(ctx) = common::gpu() else { return };
    let text = common::short_shear();
    let setup = || ShearSetup::parse(&text, "short.toml").unwrap_or_else(|e| panic!("{e}"));
    let straight = tempfile::tempdir().expect("temp dir");
    run_gpu(&ctx, setup(), straight.path());
    let csv = std::fs::read_to_string(straight.path().join("shear.csv")).expect("csv");
    let rows = csv.lines().count() - 1;
    let shear_rows = csv.lines().filter(|l| l.contains(",shear,")).count();

    let stopped = tempfile::tempdir().expect("temp dir");
    let first = setup();
    let mut b = backend(&ctx, &first);
    let mut run = ShearRun::create(first, stopped.path(), false, Box::new(wgdem_io::TestFiles))
        .expect("create");
    let stop = rows - shear_rows / 2;
    assert!(
        run.run(&mut b, Some(stop), |_| {})
            .expect("first part")
            .is_none()
    );
    drop((run, b));
    let second = setup();
    let mut b = backend(&ctx, &second);
    let mut run = ShearRun::resume(
        second,
        stopped.path(),
        &mut b,
        Box::new(wgdem_io::TestFiles),
    )
    .expect("resume");
    // Where the resume starts: the last checkpoint before the stop (every 20 rows), not the
    // start, which would end with the same bytes.
    let resumed_at = run.state().rows.len();
    assert!(
        resumed_at <= stop && resumed_at + 20 > stop,
        "resumed at row {resumed_at}, not at the last checkpoint before row {stop}"
    );
    run.run(&mut b, None, |_| {})
        .expect("second part")
        .expect("done");
    let csv2 = std::fs::read_to_string(stopped.path().join("shear.csv")).expect("csv");
    assert!(csv == csv2, "shear.csv differs after resuming on the GPU");
}

/// A shear row on the GPU engine measures the particles on the device (`row_reduce.wgsl`,
/// `Backend::advance_for_row`) and reads back only the sums; the host's measures of the same
/// state (read back after) must agree: the same touching pairs, and the kinetic energy, the
/// highest top and Σ n ⊗ n within f32's rounding. The sums are f32 trees over 1 000 terms or
/// fewer, each term exact to a few units in the last place (2⁻²⁴ ≈ 6·10⁻⁸), so 10⁻⁵ of each
/// quantity bounds them with a margin of over ten; the top is one f32 value, z + r of a few
/// centimetres, exact to 10⁻⁸ m. The bench lattice overlaps by 0.5 % of a diameter, far from
/// the margin where f32 and f64 could disagree on whether a pair touches, and its lower half
/// moves, so the energy is not zero.
#[test]
fn a_gpu_row_sums_what_the_host_measures_of_the_same_state() {
    let Some(ctx) = common::gpu() else { return };
    // Each path that keeps the lists: one workgroup (where the adapter takes it, as lavapipe
    // does at this size), the general path, and pairs evaluated once (B sides listed after
    // the A sides).
    for (single_workgroup, pairs_once) in [
        (None, None),
        (Some(false), Some(false)),
        (Some(false), Some(true)),
    ] {
        let options = GpuOptions {
            single_workgroup,
            pairs_once,
            ..GpuOptions::default()
        };
        row_sums_match_the_host(&ctx, options);
    }
}

fn row_sums_match_the_host(ctx: &GpuContext, options: GpuOptions) {
    let mut sim = wgdem_core::bench::specimen(1000, "hertz").unwrap_or_else(|e| panic!("{e}"));
    let mut b = common::gpu_backend(ctx, &sim, options);
    assert_eq!(b.engine.pairs_once(), options.pairs_once == Some(true));
    if options.single_workgroup == Some(false) {
        assert!(!b.engine.single_workgroup());
    }
    use wgdem_core::runner::Backend;
    let sums = b
        .advance_for_row(&mut sim, 200, 50, &mut |_| Vec::new())
        .unwrap_or_else(|e| panic!("{e}"))
        .expect("the GPU engine sums a row itself");
    assert_eq!(sim.steps, 200, "the row's steps are counted");
    b.sync_particles(&mut sim).unwrap_or_else(|e| panic!("{e}"));
    let p = &sim.particles;
    let contacts = wgdem_core::analysis::touching(p);
    assert!(contacts.len() > 2000, "a dense lattice: {}", contacts.len());
    assert_eq!(
        sums.pairs,
        contacts.len() as u64,
        "touching pairs, {options:?}"
    );
    let close = |what: &str, gpu: f64, host: f64, scale: f64| {
        assert!(
            (gpu - host).abs() <= 1e-5 * scale,
            "{what}: device {gpu:e}, host {host:e}"
        );
    };
    let kinetic = p.kinetic_energy();
    assert!(kinetic > 0.0);
    close("kinetic energy", sums.kinetic_energy, kinetic, kinetic);
    let top = (0..p.len())
        .map(|i| p.position[i].z + p.radius[i])
        .fold(f64::MIN, f64::max);
    assert!(
        (sums.top - top).abs() <= 1e-8,
        "top: {} against {top}",
        sums.top
    );
    let phi = wgdem_core::analysis::fabric_tensor(&contacts);
    let device = sums.fabric();
    for c in 0..3 {
        for r in 0..3 {
            close("fabric", device.col(c)[r], phi.col(c)[r], 1.0);
        }
    }
    close(
        "fabric anisotropy",
        wgdem_core::analysis::fabric_anisotropy(&device),
        wgdem_core::analysis::fabric_anisotropy(&phi),
        1.0,
    );
}
