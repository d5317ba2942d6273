//! Fleischmann et al. (2015), Section 3, at the scale of one contact: only true history can
//! hold a static friction force when nothing moves.

mod common;

use common::{rel, scene};
use wgdem_core::cpu::Simulation;

const THETA_DEG: f64 = 20.0; // below arctan(0.5) = 26.6°
const G: f64 = 9.81;

/// A sphere (r = 5 mm, E = 1e7 Pa, μ = 0.5) resting on a plane tilted by 20°, modelled as a
/// horizontal plane with tilted gravity. Its spin is fixed (PFC's `ball fix spin`): a free sphere
/// rolls down any incline whatever its friction, so only a non-rolling body tests whether the
/// contact can hold a static tangential force.
fn tilted(history: &str) -> Simulation {
    let t = THETA_DEG.to_radians();
    scene(&format!(
        r#"
        [simulation]
        duration = 1.0
        output_interval = 1.0
        gravity = [{gx}, 0.0, {gz}]
        [contact]
        law = "hertz"
        history = "{history}"
        [[materials]]
        name = "m"
        density = 2500.0
        friction = 0.5
        young_modulus = 1e7
        poisson_ratio = 0.3
        restitution = 0.5
        [[particles]]
        kind = "explicit"
        material = "m"
        spheres = [{{ position = [0.0, 0.0, 0.005], radius = 0.005, fix_spin = true }}]
        [[walls]]
        kind = "plane"
        name = "slope"
        material = "m"
        point = [0.0, 0.0, 0.0]
        normal = [0.0, 0.0, 1.0]
        "#,
        gx = G * t.sin(),
        gz = -G * t.cos(),
    ))
    .simulation
}

/// True history: after the first 10 000 steps of settling, the sphere does not move for the
/// remaining 90 000 steps of the 100 000. The tangential spring carries m g sin θ at a
/// deflection of about 1e-6 m; "does not move" is bounded by 1e-12 m, a millionth of that,
/// which f64 round-off of the force balance stays far below.
#[test]
fn true_history_holds_a_sphere_on_a_slope() {
    let mut sim = tilted("true");
    sim.run(10_000);
    let x0 = sim.particles.position[0];
    sim.run(90_000);
    let moved = (sim.particles.position[0] - x0).length();
    assert_eq!(sim.stats.wall_contacts, 1);
    assert_eq!(sim.stats.sliding, 0, "the contact slides");
    assert!(moved < 1e-12, "moved {moved:e} m in 90 000 steps");
}

/// Pseudo and no history: the tangential force is proportional to the sliding velocity
/// (Eq. 5 gives F_t = −f (k_t Δt + γ_t m̄) v_t), so the sphere creeps downhill at the terminal
/// speed v = m g sin θ / (f (k_t Δt + γ_t m̄)), f = √(R̄ δ) with δ from the Hertz balance of
/// m g cos θ (for no history k_t drops out). The creep speed measured over the last 90 000
/// steps must match that closed form within 1 %, and be non-zero, unlike true history.
#[test]
fn pseudo_and_no_history_creep_downhill_at_the_predicted_speed() {
    let t = THETA_DEG.to_radians();
    for history in ["pseudo", "none"] {
        let mut sim = tilted(history);
        sim.run(10_000);
        let (x0, t0) = (sim.particles.position[0].x, sim.time);
        sim.run(90_000);
        let speed = (sim.particles.position[0].x - x0) / (sim.time - t0);

        let m = sim.particles.mass[0];
        let r = sim.particles.radius[0];
        let params = sim.pair(0, 0).contact_params(m, r);
        let delta = (m * G * t.cos() / (params.kn * r.sqrt())).powf(2.0 / 3.0);
        let f = (r * delta).sqrt();
        let kt_dt = if history == "pseudo" {
            params.kt * sim.dt
        } else {
            0.0
        };
        let predicted = m * G * t.sin() / (f * (kt_dt + params.gamma_t * m));
        eprintln!("{history}: creep {speed:.4e} m/s, predicted {predicted:.4e} m/s");
        assert!(speed > 0.0, "{history}: no creep");
        assert!(
            rel(speed, predicted) < 0.01,
            "{history}: creep {speed:e} m/s, predicted {predicted:e} m/s"
        );
    }
}
