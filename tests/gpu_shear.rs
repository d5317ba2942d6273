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
    let mut run = ShearRun::create(setup, dir, false, Box::new(wgdem_io::ShearFiles))
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
/// specimen but a packing is chaotic: trajectories part after a few thousand steps, so the two
/// runs are two realisations of the same test, not the same numbers. Their peak stress
/// ratios must agree as realisations do: within 23 %, the spread measured on the CPU between
/// seeds 1–4 of this preset (peaks 2.194, 2.372, 2.237, 2.694; largest difference 22.8 % of
/// the smaller; docs/shear.md, "Verification").
#[test]
#[ignore = "long tier: a quick shear preset on both engines, about 2.5 minutes on lavapipe"]
fn gpu_and_cpu_agree_on_the_peak_stress_ratio() {
    let Some(ctx) = common::gpu() else { return };
    let name = "fleischmann_quick_true.toml";
    let (gpu_dir, cpu_dir) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let cpu = std::thread::scope(|s| {
        let h = s.spawn(|| {
            let mut run = ShearRun::create(
                common::load_shear(name),
                cpu_dir.path(),
                false,
                Box::new(wgdem_io::ShearFiles),
            )
            .expect("create");
            run.run(&mut CpuBackend, None, |_| {})
                .expect("cpu")
                .expect("done")
        });
        let gpu = run_gpu(&ctx, common::load_shear(name), gpu_dir.path());
        (h.join().expect("cpu run"), gpu)
    });
    let (cpu, gpu) = cpu;
    eprintln!(
        "peak τ/σ: CPU {:.4}, GPU {:.4}; residual {:.4} / {:.4}; σ error {:.2} % / {:.2} %",
        cpu.peak_stress_ratio,
        gpu.peak_stress_ratio,
        cpu.residual_stress_ratio,
        gpu.residual_stress_ratio,
        100.0 * cpu.normal_stress_error_max_fraction,
        100.0 * gpu.normal_stress_error_max_fraction
    );
    assert!(gpu.normal_stress_error_max_fraction <= 0.02);
    let d = common::rel(gpu.peak_stress_ratio, cpu.peak_stress_ratio);
    assert!(
        d <= 0.23,
        "GPU and CPU peaks differ by {:.1} % (bound: the 22.8 % spread between seeds)",
        100.0 * d
    );
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
    let mut run = ShearRun::create(first, stopped.path(), false, Box::new(wgdem_io::ShearFiles))
        .expect("create");
    assert!(
        run.run(&mut b, Some(rows - shear_rows / 2), |_| {})
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
        Box::new(wgdem_io::ShearFiles),
    )
    .expect("resume");
    run.run(&mut b, None, |_| {})
        .expect("second part")
        .expect("done");
    let csv2 = std::fs::read_to_string(stopped.path().join("shear.csv")).expect("csv");
    assert!(csv == csv2, "shear.csv differs after resuming on the GPU");
}
