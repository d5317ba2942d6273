//! The blow-up guard on both engines (`wgdem_core::guard`, `integrate.wgsl`): three spheres in
//! free fall, the third thrown down at 0.04 m/s, with `max_speed = 0.05` m/s. In free fall
//! v(t) = v₀ + g t, so the third passes the bound at t = 0.01 / 9.81 = 1.02 ms and the others
//! at 5.10 ms. After 3 ms only the third has run away: the CPU's check and the GPU's counter
//! (in `integrate`, read at the batch's end) both name it; a bound of 1 m/s lets both run.

mod common;

use wgdem_core::scene::Scene;

fn falling(max_speed: f64) -> Scene {
    common::scene(&format!(
        r#"
[simulation]
duration = 0.003
output_interval = 0.001
dt = 1e-5
max_speed = {max_speed}

[contact]
law = "hertz"
history = "true"

# fixture: material_m

[[particles]]
kind = "explicit"
material = "m"
spheres = [
  {{ position = [0.0, 0.0, 0.0], radius = 0.002 }},
  {{ position = [0.01, 0.0, 0.0], radius = 0.002 }},
  {{ position = [0.02, 0.0, 0.0], radius = 0.002, velocity = [0.0, 0.0, -0.04] }},
]
"#
    ))
}

/// 300 steps of 10 µs: 3 ms.
const STEPS: u64 = 300;

#[test]
fn the_cpu_check_names_the_runaway_sphere() {
    let mut scene = falling(0.05);
    for _ in 0..STEPS {
        scene.simulation.step();
    }
    let e = wgdem_core::guard::check(&scene.simulation, "state.csv")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.contains("1 sphere(s)") && e.contains("the first, sphere 2,"),
        "{e}"
    );
    let mut calm = falling(1.0);
    for _ in 0..STEPS {
        calm.simulation.step();
    }
    assert!(wgdem_core::guard::check(&calm.simulation, "state.csv").is_ok());
}

#[test]
fn the_gpu_counts_the_runaway_sphere_as_it_steps() {
    let Some(ctx) = common::gpu() else { return };
    let scene = falling(0.05);
    let mut engine = wgdem_gpu::GpuEngine::new(
        &ctx.device,
        &ctx.queue,
        &scene.simulation,
        wgdem_gpu::GpuOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    match engine.run(STEPS) {
        Err(wgdem_gpu::GpuError::Runaway { count, first, .. }) => {
            assert_eq!(first, 2);
            // Sphere 2 is counted in each step that leaves it faster than the bound, from step
            // 102 (0.04 + 9.81 k Δt > 0.05 from k = 101.9; f32 speeds resolve 4e-9 m/s, the
            // crossing is 6e-6 m/s from a step's edge) to the end of the first batch, where
            // the host reads the count: 99 with the default 200 steps a batch. A step counted
            // twice, a sphere counted in a step it was not running away, or a count read
            // before the batch's end is off by at least one.
            let batch = u64::from(wgdem_gpu::GpuOptions::default().batch_steps);
            let expected = batch - 102 + 1;
            assert_eq!(count as u64, expected, "runaway sphere-steps counted");
        }
        other => panic!("expected a runaway, got {other:?}"),
    }
    // The state read back shows it to the host's check too.
    let mut sim = scene.simulation.clone();
    engine.read_into(&mut sim).unwrap_or_else(|e| panic!("{e}"));
    assert!(wgdem_core::guard::blew_up(&sim));

    let calm = falling(1.0);
    let (sim, _) = common::run_gpu(&ctx, &calm.simulation, STEPS, Default::default());
    assert!(!wgdem_core::guard::blew_up(&sim));
    // Free fall reached v₀ + g t on the third sphere: the guard left the calm run alone (1e-4
    // relative is loose for double-single velocities; it only has to tell a stopped sphere).
    let v = sim.particles.velocity[2].z;
    let expected = -0.04 - 9.81 * 0.003;
    assert!(common::rel(v, expected) < 1e-4, "{v} against {expected}");
}
