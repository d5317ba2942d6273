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
        fastest = fastest.max(norm(p.velocity[i]));
    }
    for w in &sim.walls {
        fastest = fastest.max(norm(w.velocity));
    }
    let schedules = sim
        .wall_schedules
        .iter()
        .flatten()
        .chain(sim.drives.iter().filter_map(|d| d.velocity.as_ref()));
    for s in schedules {
        for v in &s.values {
            fastest = fastest.max(norm(*v));
        }
    }
    let extent = if !p.is_empty() { norm(hi - lo) } else { 0.0 };
    let g = norm(sim.gravity).max(9.81);
    // √g·√L rather than √(g·L): the product of two large factors would overflow.
    let bound = SPEED_MARGIN * fastest.max(g.sqrt() * extent.sqrt());
    if bound.is_finite() && bound > 0.0 {
        bound
    } else {
        f64::MAX
    }
}

/// `|x|` without overflow for components up to f64's range (glam's `length` squares them,
/// which overflows from 1.3e154); NaN or infinite where a component is.
pub(crate) fn norm(x: DVec3) -> f64 {
    let scale = x.abs().max_element();
    if scale > 0.0 && x.is_finite() {
        scale * (x / scale).length()
    } else {
        x.length()
    }
}
