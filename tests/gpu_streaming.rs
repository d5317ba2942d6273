//! Wall forces stream back while the GPU runs, and the host steers walls between batches.

mod common;

use common::{gpu, rel, scene};
use glam::DVec3;
use wgdem_core::wall::WallShape;
use wgdem_gpu::{GpuEngine, GpuOptions};

/// One sphere of 5 mm resting on a floor, under a lid at height `lid` (m).
fn lid_scene(lid: f64) -> wgdem_core::scene::Scene {
    scene(&format!(
        r#"
        [simulation]
        duration = 1.0
        output_interval = 1.0
        dt = 1e-5
        [contact]
        law = "hertz"
        history = "true"
        # fixture: material_m
        [[particles]]
        kind = "explicit"
        material = "m"
        spheres = [{{ position = [0.0, 0.0, 0.004998], radius = 0.005 }}]
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
        point = [0.0, 0.0, {lid}]
        normal = [0.0, 0.0, -1.0]
        "#
    ))
}

/// Batches of 100 steps, two in flight. A sphere rests on the floor under a lid; when the
/// readout of the batch ending at step 200 arrives, the host sets the lid moving down at
/// 1 cm/s. The batch 200–300 was already submitted by then, so the lid starts moving at step
/// 300 (the streaming contract: a change applies from the next batch submitted), and after
/// 1 000 steps it has moved by 0.01 m/s × 700 Δt. Readouts arrive once per batch, in order,
/// and the streamed floor force equals the CPU reference's at the same step (same lid
/// schedule) within 1e-4: the sphere is still bouncing towards its Hertz rest overlap, a smooth
/// damped oscillation over which f32 rounding (≈ 1e-6 per step) cannot grow much.
#[test]
fn wall_forces_stream_and_wall_velocities_steer() {
    let Some(ctx) = gpu() else { return };
    let s = lid_scene(0.05);
    let options = GpuOptions {
        batch_steps: 100,
        ..GpuOptions::default()
    };
    let mut engine = GpuEngine::new(&ctx.device, &ctx.queue, &s.simulation, options)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut seen = Vec::new();
    let mut floor_force = Vec::new();
    engine
        .run_streaming(1000, |readout, control| {
            seen.push(readout.steps);
            floor_force.push(readout.walls[0].0.z);
            if readout.steps == 200 {
                control.set_velocity(1, DVec3::new(0.0, 0.0, -0.01));
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(seen, (1..=10).map(|k| k * 100).collect::<Vec<u64>>());

    let mut out = s.simulation.clone();
    engine.read_into(&mut out).unwrap_or_else(|e| panic!("{e}"));
    let WallShape::Plane { point, .. } = out.walls[1].shape else {
        panic!("lid is a plane")
    };
    let expected = 0.05 - 0.01 * 700.0 * 1e-5;
    eprintln!("lid at {:.9} m, expected {expected:.9} m", point.z);
    assert!((point.z - expected).abs() < 1e-9, "lid at {} m", point.z);

    let mut cpu = s.simulation.clone();
    cpu.run(300);
    cpu.walls[1].velocity = DVec3::new(0.0, 0.0, -0.01);
    cpu.run(700);
    let (streamed, reference) = (floor_force[9], cpu.walls[0].force.z);
    eprintln!("floor force {streamed:.6e} N streamed, {reference:.6e} N CPU");
    assert!(
        rel(streamed, reference) < 1e-4,
        "{streamed} N vs {reference} N"
    );
    assert_eq!(
        out.walls[0].force.z, streamed,
        "read_into reports the last readout"
    );
}

/// A table that overflows in a batch after the host has already steered the walls for the next
/// one. Batches of 100 steps, two in flight; one sphere rests on the floor under a lid 2.4 mm
/// above it. At the readout of step 100 the host sends the lid down at 1 m/s (from step 200),
/// at the readout of step 300 slows it to 0.1 m/s (from step 400). Starting with one wall
/// slot per particle, the lid comes within the skin (1 mm) at the rebuild of step 350 (it
/// moves half the skin every 50 steps), in the batch 300–400 and after the
/// batch 400–500 was submitted at the slower speed: the engine stops at that step, regrows the
/// wall slots, finishes 300–400 at 1 m/s and runs on at 0.1 m/s. Everything — readouts, lid,
/// sphere, wall forces — must be bitwise what a run with enough wall slots gives, and the lid
/// where the schedule puts it: 0.0124 − 200 Δt × 1 m/s − 600 Δt × 0.1 m/s, pressing on the
/// sphere.
#[test]
fn an_overflow_after_steering_finishes_its_batch_as_steered() {
    let Some(ctx) = gpu() else { return };
    let s = lid_scene(0.0124);
    let run = |wall_slots: u32| {
        let options = GpuOptions {
            batch_steps: 100,
            wall_slots,
            ..GpuOptions::default()
        };
        let mut engine = GpuEngine::new(&ctx.device, &ctx.queue, &s.simulation, options)
            .unwrap_or_else(|e| panic!("{e}"));
        let mut seen = Vec::new();
        engine
            .run_streaming(1000, |readout, control| {
                seen.push((readout.steps, readout.walls.clone()));
                match readout.steps {
                    100 => control.set_velocity(1, DVec3::new(0.0, 0.0, -1.0)),
                    300 => control.set_velocity(1, DVec3::new(0.0, 0.0, -0.1)),
                    _ => {}
                }
            })
            .unwrap_or_else(|e| panic!("{e}"));
        let mut out = s.simulation.clone();
        engine.read_into(&mut out).unwrap_or_else(|e| panic!("{e}"));
        (out, seen, engine.regrowths)
    };
    let (small, small_seen, regrowths) = run(1);
    let (ample, ample_seen, ample_regrowths) = run(2);
    let WallShape::Plane { point, .. } = small.walls[1].shape else {
        panic!("lid is a plane")
    };
    let expected = 0.0124 - 200.0 * 1e-5 * 1.0 - 600.0 * 1e-5 * 0.1;
    eprintln!(
        "regrowths {regrowths} (ample: {ample_regrowths}); lid at {:.9} m, expected {expected:.9} m; lid force {:.4e} N",
        point.z, small.walls[1].force.z
    );
    assert!(regrowths > 0, "the wall table never overflowed");
    assert_eq!(ample_regrowths, 0);
    assert!((point.z - expected).abs() < 1e-9, "lid at {} m", point.z);
    assert!(
        small.walls[1].force.z > 0.0,
        "the lid should press on the sphere at the end"
    );
    assert_eq!(
        small_seen.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        (1..=10).map(|k| k * 100).collect::<Vec<u64>>()
    );
    assert!(small_seen == ample_seen, "streamed readouts differ");
    assert_eq!(small.particles.position, ample.particles.position);
    assert_eq!(small.particles.velocity, ample.particles.velocity);
    assert_eq!(small.walls, ample.walls);
}
