//! Particles of different materials on the GPU: each pair takes its own material pair's
//! constants. The contact kernel loads the record of two particles of a particle's own
//! material once and looks up another only for a partner of another material; a mixed pair
//! that took the wrong record would get a contact stiffness 50 times too large on one side.

mod common;

use common::{gpu, run_gpu, scene};
use glam::DVec3;
use wgdem_core::scene::Scene;
use wgdem_gpu::GpuOptions;

const SPEED: f64 = 0.1; // m/s, each sphere towards the other

/// Two head-on collisions without gravity: a stiff and a soft sphere (spheres 0 and 1, the
/// pair's Young's moduli 1e8 and 1e6 Pa), and two stiff spheres (2 and 3) far from them.
fn collisions() -> Scene {
    let r = 0.005;
    let x = r + 1e-4; // 0.2 mm apart
    let sphere = |material: &str, px: f64, y: f64, vx: f64| {
        format!(
            r#"
            [[particles]]
            kind = "explicit"
            material = "{material}"
            spheres = [{{ position = [{px}, {y}, 0.0], radius = {r}, velocity = [{vx}, 0.0, 0.0] }}]
            "#
        )
    };
    scene(&format!(
        r#"
        [simulation]
        duration = 1.0
        output_interval = 1.0
        gravity = [0.0, 0.0, 0.0]
        [contact]
        law = "hertz"
        history = "true"
        [[materials]]
        name = "stiff"
        density = 2500.0
        friction = 0.5
        young_modulus = 1e8
        poisson_ratio = 0.3
        restitution = 0.5
        [[materials]]
        name = "soft"
        density = 2500.0
        friction = 0.5
        young_modulus = 1e6
        poisson_ratio = 0.3
        restitution = 0.5
        {}{}{}{}"#,
        sphere("stiff", -x, 0.0, SPEED),
        sphere("soft", x, 0.0, -SPEED),
        sphere("stiff", -x, 0.05, SPEED),
        sphere("stiff", x, 0.05, -SPEED),
    ))
}

/// Mid-collision, the GPU's velocities match the CPU reference's to 1e-4 of the impact
/// speed, and the mixed pair's momentum stays zero. f32 rounds each step's force to about
/// 1e-7 of itself, so a few hundred steps of contact leave velocity errors near 1e-5 of the
/// impact speed; the 1e-4 allows for that and is four orders of magnitude below what the
/// wrong record would give (the stiff side pushing 50 times harder than the soft side).
#[test]
fn gpu_mixed_pairs_take_their_own_pair_constants() {
    let Some(ctx) = gpu() else { return };
    let s = collisions();
    let mut cpu = s.simulation.clone();
    // Run the CPU reference until the soft collision has slowed its spheres to half speed:
    // well inside that contact; by then the stiff pair has collided and rebounded.
    let mut steps = 0u64;
    while cpu.particles.velocity[0].x > 0.5 * SPEED {
        cpu.step();
        steps += 1;
        assert!(steps < 1_000_000, "the soft pair never collided");
    }
    assert_eq!(cpu.stats.contacts, 1, "only the soft pair is in contact");
    let stiff_rebound = cpu.particles.velocity[2].x;
    assert!(
        stiff_rebound < 0.0,
        "the stiff pair has rebounded ({stiff_rebound} m/s)"
    );

    let (gpu_sim, _) = run_gpu(&ctx, &s.simulation, steps, GpuOptions::default());
    assert_eq!(gpu_sim.stats.contacts, 1);
    let p = &gpu_sim.particles;
    for i in 0..4 {
        let (g, c) = (p.velocity[i], cpu.particles.velocity[i]);
        let err = (g - c).length() / SPEED;
        eprintln!("sphere {i}: GPU {g:?}, CPU {c:?} m/s, error {err:.2e} of the impact speed");
        assert!(
            err < 1e-4,
            "sphere {i}: velocity off by {err:e} of the impact speed"
        );
    }
    let momentum: DVec3 = p.mass[0] * p.velocity[0] + p.mass[1] * p.velocity[1];
    let scale = p.mass[0] * SPEED;
    assert!(
        momentum.length() < 1e-5 * scale,
        "mixed pair's momentum {momentum:?} kg m/s (impact {scale:e})"
    );
}
