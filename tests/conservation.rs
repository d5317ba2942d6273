//! Undamped, frictionless collisions conserve energy and momentum.

mod common;

use common::scene;
use glam::DVec3;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Sixteen spheres of random size fly towards a common centre, collide (several at once),
/// and fly apart. With restitution 1 (no dashpots) and μ = 0 the contact forces are
/// conservative, so kinetic energy after all contacts have ended must equal the initial one,
/// and momentum is conserved by the equal-and-opposite pair forces (Newton's third law).
///
/// Tolerance 1e-6 relative (issue requirement). The semi-implicit Euler scheme is symplectic:
/// its energy error is bounded and O(Δt²) for a smooth force; the Hertz force is C¹ at first
/// touch, the linear one only C⁰, so the linear law needs a finer step for the same bound.
/// Measured on this seed: at the default safety factor 0.2 the error is 1.0e-4 (Hertz) and
/// 2.4e-4 (Hooke), all of it from the discretised first touch; at the factors used here
/// (0.05 and 0.02) it is 1.6e-7 and 2.0e-7. Momentum is exact up to f64 rounding (≈ 1e-16),
/// bounded at 1e-12.
#[test]
fn undamped_collisions_conserve_energy_and_momentum() {
    for (law, safety) in [("hertz", 0.05), ("hooke", 0.02)] {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut spheres = String::new();
        for _ in 0..16 {
            let dir = DVec3::new(
                rng.random::<f64>() - 0.5,
                rng.random::<f64>() - 0.5,
                rng.random::<f64>() - 0.5,
            )
            .normalize();
            let x = dir * 0.06;
            let v = -dir * (0.5 + rng.random::<f64>()) + DVec3::splat(0.05);
            let r = 0.002 + 0.002 * rng.random::<f64>();
            spheres.push_str(&format!(
                "{{ position = [{}, {}, {}], radius = {r}, velocity = [{}, {}, {}] }},\n",
                x.x, x.y, x.z, v.x, v.y, v.z
            ));
        }
        let mut s = scene(&common::elastic_scene(law, safety, &spheres));
        let sim = &mut s.simulation;
        let mut probe = sim.clone();
        probe.compute_forces();
        assert_eq!(probe.stats.contacts, 0, "{law}: spheres overlap at t = 0");
        let e0 = sim.particles.kinetic_energy();
        let p0 = sim.particles.momentum();
        let mut had_contacts = 0;
        let mut quiet = 0;
        while quiet < 1000 {
            sim.step();
            if sim.stats.contacts > 0 {
                had_contacts += 1;
                quiet = 0;
            } else if had_contacts > 0 {
                quiet += 1;
            }
            assert!(sim.steps < 5_000_000, "{law}: collisions never ended");
        }
        assert!(
            had_contacts > 100,
            "{law}: too few contact steps ({had_contacts})"
        );
        let e1 = sim.particles.kinetic_energy();
        let p1 = sim.particles.momentum();
        let de = (e1 - e0).abs() / e0;
        let dp = (p1 - p0).length() / p0.length();
        eprintln!("{law}: dE/E = {de:.2e}, dp/p = {dp:.2e}, {had_contacts} contact steps");
        assert!(de < 1e-6, "{law}: energy changed by {de:e}");
        // Momentum: the pair forces are equal and opposite in f64, so only the rounding of
        // each step's velocity updates moves it, ~1e-16 of it a step over a few thousand
        // steps (measured 1.6e-16 and 3.6e-16); 1e-12 holds that and fails a pair force that
        // differs between its two sides by anything f32 or a wrong mass would give (≥ 1e-8).
        assert!(dp < 1e-12, "{law}: momentum changed by {dp:e}");
    }
}
