//! Semi-implicit (symplectic) Euler with Cundall's local damping; the walls move. GPU twin:
//! `shaders/integrate.wgsl`.

use super::*;

impl Simulation {
    /// Semi-implicit Euler update of particles and walls.
    pub(super) fn integrate(&mut self) {
        let dt = self.dt;
        let alpha = self.local_damping;
        let p = &mut self.particles;
        for i in 0..p.len() {
            let force = local_damped(p.force[i], p.velocity[i], alpha);
            let torque = local_damped(p.torque[i], p.angular_velocity[i], alpha);
            p.velocity[i] += force / p.mass[i] * dt;
            p.position[i] += p.velocity[i] * dt;
            if !p.spin_fixed[i] {
                p.angular_velocity[i] += torque / p.inertia[i] * dt;
            }
            let spin = DQuat::from_scaled_axis(p.angular_velocity[i] * dt);
            p.orientation[i] = (spin * p.orientation[i]).normalize();
        }
        for wall in &mut self.walls {
            wall.advance(dt);
        }
        self.time += dt;
        self.steps += 1;
    }
}

/// Cundall's local damping (PFC's): `f` with each component reduced by `α |f| sign(v)`.
pub fn local_damped(f: DVec3, v: DVec3, alpha: f64) -> DVec3 {
    if alpha == 0.0 {
        return f;
    }
    f - DVec3::new(
        f.x.abs() * sign(v.x),
        f.y.abs() * sign(v.y),
        f.z.abs() * sign(v.z),
    ) * alpha
}

/// `-1`, `0` or `1` as the sign of `v` (0 for 0).
fn sign(v: f64) -> f64 {
    if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        0.0
    }
}
