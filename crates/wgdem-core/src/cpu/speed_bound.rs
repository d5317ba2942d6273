//! The speed above which a sphere counts as blown up ([`crate::guard`] checks the state
//! against it): 100 × the largest of the spheres' initial speeds, the walls' and drives'
//! prescribed speeds and the free-fall speed √(g·L) over the scene's extent L (g at least
//! 9.81 m/s², so that a scene without gravity still gets a bound).

use glam::DVec3;

use super::Simulation;

/// The factor between the largest expected speed and the default bound.
pub const SPEED_MARGIN: f64 = 100.0;

/// The default `max_speed` (m/s) of `sim` (see the module's documentation).
pub fn default_max_speed(sim: &Simulation) -> f64 {
    let p = &sim.particles;
    let mut lo = DVec3::splat(f64::INFINITY);
    let mut hi = DVec3::splat(f64::NEG_INFINITY);
    let mut fastest: f64 = 0.0;
    for i in 0..p.len() {
        lo = lo.min(p.position[i] - DVec3::splat(p.radius[i]));
        hi = hi.max(p.position[i] + DVec3::splat(p.radius[i]));
        fastest = fastest.max(p.velocity[i].length());
    }
    for w in &sim.walls {
        fastest = fastest.max(w.velocity.length());
    }
    let schedules = sim
        .wall_schedules
        .iter()
        .flatten()
        .chain(sim.drives.iter().filter_map(|d| d.velocity.as_ref()));
    for s in schedules {
        for v in &s.values {
            fastest = fastest.max(v.length());
        }
    }
    let extent = if !p.is_empty() {
        (hi - lo).length()
    } else {
        0.0
    };
    let g = sim.gravity.length().max(9.81);
    let bound = SPEED_MARGIN * fastest.max((g * extent).sqrt());
    if bound.is_finite() && bound > 0.0 {
        bound
    } else {
        f64::MAX
    }
}
