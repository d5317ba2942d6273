//! Blow-up detection: a state no granular run reaches (a non-finite position or velocity, or a
//! sphere faster than `max_speed`) stops the run with one line instead of writing NaN or
//! infinite rows as results.
//!
//! Explicit DEM blows up when the time step is too large for a contact's stiffness, when
//! spheres start deeply overlapped (the penalty force throws them apart), or when a load is far
//! out of scale. The first sign is a sphere much faster than anything the scene drives: the
//! default bound is 100 × the largest of the spheres' initial speeds, the walls' and drives'
//! prescribed speeds and the free-fall speed √(g·L) over the scene's extent L (g at least
//! 9.81 m/s², so that a scene without gravity still gets a bound).

use glam::DVec3;

use crate::cpu::Simulation;
use crate::error::{Error, Result};

pub use crate::cpu::{SPEED_MARGIN, default_max_speed};

/// Host memory a sphere takes while a run steps (bytes): measured 3.1–3.3 kB per sphere for
/// 10⁵-sphere lattices on both backends (peak resident size, `/usr/bin/time -f %M`; lavapipe's
/// GPU buffers count as host memory), rounded up.
pub const BYTES_PER_SPHERE: u64 = 3500;

/// Largest gravity a scene may give (m/s²): 10⁵ g, far beyond a geotechnical centrifuge's
/// few hundred g; more is a unit mistake, and near f64's range it would overflow the speed
/// bound and the integration.
pub const MAX_GRAVITY: f64 = 1e6;

/// Largest initial or prescribed speed (m/s) of a sphere, wall or drive: 100 km/s, beyond any
/// granular flow or impact.
pub const MAX_INPUT_SPEED: f64 = 1e5;

/// Largest distance a wall or a prescribed particle may move in one time step, as a fraction
/// of the smallest sphere radius (the packing files' default `max_overlap`): further, it would
/// drive into spheres by more than a contact's usual overlap in one step.
pub const MAX_TRAVEL_PER_STEP: f64 = 0.1;

/// Farthest a sphere may sit from the origin, in smallest radii: beyond it the GPU's
/// double-single positions (about 2⁻⁴⁴ relative) resolve less than a millionth of a radius, and
/// far beyond it f64 merges neighbouring spheres (1 mm spheres: 100 km).
pub const MAX_DISTANCE_IN_RADII: f64 = 1e8;

/// Most steps a run may take: beyond this the time step is degenerate (a density or a
/// stiffness far out of scale), not a long run (10¹² steps take years at 10⁹ steps a day).
pub const MAX_STEPS: f64 = 1e12;

/// Physical memory of this machine (bytes); `None` where it cannot be told.
pub fn total_memory() -> Option<u64> {
    let mut sys = sysinfo::System::new();
    sys.refresh_memory();
    Some(sys.total_memory()).filter(|&m| m > 0)
}

/// Refuses `needed` bytes (for `what`, set by `field` of `file`) when they exceed this
/// machine's physical memory: the figure and the limit instead of an aborted allocation.
pub fn check_memory(file: &str, field: &str, needed: f64, what: &str) -> Result<()> {
    let Some(total) = total_memory() else {
        return Ok(());
    };
    if needed > total as f64 {
        return Err(Error::invalid(
            file,
            field,
            format!(
                "{what} need about {:.3e} bytes of memory, more than this machine's {:.3e}; ask for less",
                needed, total as f64
            ),
        ));
    }
    Ok(())
}

/// Refuses a step count above [`MAX_STEPS`] (or a time step that is not positive and
/// finite): `cause` says where the time step came from.
pub fn check_steps(file: &str, field: &str, duration: f64, dt: f64, cause: &str) -> Result<()> {
    let steps = duration / dt;
    if !(dt.is_finite() && dt > 0.0 && steps <= MAX_STEPS) {
        return Err(Error::invalid(
            file,
            field,
            format!(
                "the time step {dt:e} s gives {steps:.3e} steps for {duration} s, above the ceiling of {MAX_STEPS:e}; {cause}"
            ),
        ));
    }
    Ok(())
}

/// Whether a sphere's state is one no run reaches.
fn runaway(position: DVec3, velocity: DVec3, max_speed: f64) -> bool {
    // Written so that every extreme fails: a NaN compares false, and a speed whose length
    // overflows to infinity is above any finite bound (comparing squares instead would let
    // `inf <= inf` pass once the bound's square overflows too).
    let within = velocity.is_finite() && velocity.length() <= max_speed;
    !(position.is_finite() && within)
}

/// Checks `sim`'s spheres against its `max_speed`; `snapshot` is where the caller wrote (or
/// will write) the state for diagnosis, named in the message.
pub fn check(sim: &Simulation, snapshot: &str) -> Result<()> {
    if let Some(why) = sim.cell_failure() {
        return Err(Error::BlowUp(format!(
            "the periodic cell stopped by step {} (t = {:e} s): {why} (state in {snapshot})",
            sim.steps,
            crate::cpu::step_time(sim.steps, sim.dt),
        )));
    }
    let p = &sim.particles;
    let bad: Vec<usize> = (0..p.len())
        .filter(|&i| runaway(p.position[i], p.velocity[i], sim.max_speed))
        .collect();
    let Some(&first) = bad.first() else {
        return Ok(());
    };
    let (x, v) = (p.position[first], p.velocity[first]);
    Err(Error::BlowUp(format!(
        "the simulation blew up by step {} (t = {:e} s): {} sphere(s) have a non-finite state or move faster than max_speed = {:.3e} m/s; the first, sphere {first}, is at ({:e}, {:e}, {:e}) m moving at ({:e}, {:e}, {:e}) m/s (state in {snapshot}); lower the time step (simulation.safety_factor), look for spheres placed overlapping or loads far out of scale, or raise simulation.max_speed if such speeds are meant",
        sim.steps,
        crate::cpu::step_time(sim.steps, sim.dt),
        bad.len(),
        sim.max_speed,
        x.x,
        x.y,
        x.z,
        v.x,
        v.y,
        v.z,
    )))
}

/// Whether `sim` holds a runaway sphere (the cheap test before [`check`]).
pub fn blew_up(sim: &Simulation) -> bool {
    let p = &sim.particles;
    sim.cell_failure().is_some()
        || (0..p.len()).any(|i| runaway(p.position[i], p.velocity[i], sim.max_speed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::{ContactLaw, ContactModel, HistoryMode};
    use crate::particles::Particles;

    fn two_spheres() -> Simulation {
        let material = crate::material::Material {
            name: "glass".to_owned(),
            density: Some(2500.0),
            friction: 0.5,
            stiffness: crate::material::Stiffness::Elastic {
                young_modulus: 1e7,
                poisson_ratio: 0.3,
                restitution: 0.5,
            },
        };
        let mut p = Particles::default();
        p.push(DVec3::ZERO, 0.01, 2500.0, 0);
        p.push(DVec3::new(0.1, 0.0, 0.0), 0.01, 2500.0, 0);
        let model = ContactModel {
            law: ContactLaw::Hertz,
            history: HistoryMode::True,
        };
        let params = crate::material::PairParams::new(
            ContactLaw::Hertz,
            crate::contact::Damping::Viscoelastic,
            &material,
            &material,
            1.0,
        )
        .into_iter()
        .collect();
        Simulation::new(
            p,
            Vec::new(),
            model,
            params,
            DVec3::new(0.0, 0.0, -9.81),
            1e-5,
        )
    }

    /// Extent 0.12 m under 9.81 m/s²: √(g·L) = 1.085 m/s, so the bound is 108.5 m/s.
    #[test]
    fn the_default_bound_is_a_hundred_times_the_free_fall_speed() {
        let sim = two_spheres();
        let l = (0.12f64 * 0.12 + 0.02 * 0.02 + 0.02 * 0.02).sqrt();
        let expected = 100.0 * (9.81 * l).sqrt();
        assert!(
            (sim.max_speed - expected).abs() < 1e-12 * expected,
            "{}",
            sim.max_speed
        );
    }

    #[test]
    fn nan_infinite_and_fast_spheres_are_caught() {
        let mut sim = two_spheres();
        assert!(check(&sim, "x").is_ok());
        sim.particles.velocity[1] = DVec3::new(0.0, 2.0 * sim.max_speed, 0.0);
        let e = check(&sim, "x").map_err(|e| e.to_string());
        assert!(
            e.as_ref()
                .is_err_and(|e| e.contains("1 sphere(s)") && e.contains("sphere 1,")),
            "{e:?}"
        );
        sim.particles.velocity[1] = DVec3::ZERO;
        sim.particles.position[0].z = f64::NAN;
        assert!(blew_up(&sim));
        sim.particles.position[0].z = 0.0;
        sim.particles.velocity[0].x = f64::INFINITY;
        assert!(blew_up(&sim));
        sim.particles.velocity[0].x = f64::NAN;
        assert!(blew_up(&sim));
    }

    /// The guard at f64's limits: with the largest bound there is (`simulation.max_speed =
    /// f64::MAX`, or a default bound that overflowed), an infinite speed, and a finite one
    /// whose length overflows, still count as runaways; before, `|v|² <= bound²` compared
    /// `inf <= inf` and let them pass.
    #[test]
    fn the_guard_holds_with_the_largest_bound() {
        let mut sim = two_spheres();
        sim.max_speed = f64::MAX;
        assert!(check(&sim, "x").is_ok());
        sim.particles.velocity[1] = DVec3::new(0.0, 0.0, f64::INFINITY);
        assert!(blew_up(&sim));
        sim.particles.velocity[1] = DVec3::new(1e300, 1e300, 0.0);
        assert!(sim.particles.velocity[1].is_finite());
        assert!(
            blew_up(&sim),
            "a speed of 1.4e300 m/s passed a finite bound"
        );
        // A speed whose square overflows (above 1.3e154 m/s) is a runaway whatever the bound;
        // below that, the largest bound holds.
        sim.particles.velocity[1] = DVec3::new(0.0, 0.0, -1e300);
        assert!(blew_up(&sim));
        sim.particles.velocity[1] = DVec3::new(0.0, 0.0, -1e150);
        assert!(!blew_up(&sim), "1e150 m/s is within f64::MAX");
        sim.particles.velocity[1] = DVec3::ZERO;
        sim.particles.position[1] = DVec3::new(0.0, 0.0, -f64::MAX);
        assert!(!blew_up(&sim));
        sim.particles.position[1].z = f64::NEG_INFINITY;
        assert!(blew_up(&sim));
    }

    /// The default bound stays finite for inputs near f64's range: the lengths of the speeds,
    /// the extent and gravity are taken without squaring (`|v|² ` overflows from 1.3e154 m/s).
    #[test]
    fn the_default_bound_is_finite_at_the_extremes() {
        let mut sim = two_spheres();
        sim.particles.velocity[0] = DVec3::new(1e200, 1e200, 0.0);
        sim.particles.position[1] = DVec3::new(1e200, 0.0, 0.0);
        sim.gravity = DVec3::new(0.0, 0.0, -1e200);
        let bound = default_max_speed(&sim);
        assert!(bound.is_finite() && bound < f64::MAX, "{bound}");
        assert!(
            (bound / (100.0 * 2f64.sqrt() * 1e200) - 1.0).abs() < 1e-12,
            "{bound}"
        );
    }
}
