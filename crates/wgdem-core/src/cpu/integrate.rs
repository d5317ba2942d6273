//! Semi-implicit (symplectic) Euler with Cundall's local damping; the walls move. GPU twin:
//! `shaders/integrate.wgsl`.

use super::*;

impl Simulation {
    /// Semi-implicit Euler update of particles and walls. A driven particle (`[[loads]]`) has
    /// its applied force and torque at the step's start `t_n = n Δt` added to the step's
    /// (and so to `force`, which the next step's predictor and the outputs see), its
    /// prescribed velocities taken instead of integrated ones, and its locked components held
    /// at zero; a wall with a velocity schedule moves at the schedule's velocity at `t_n`.
    pub(super) fn integrate(&mut self) {
        let dt = self.dt;
        let alpha = self.local_damping;
        let t = self.steps as f64 * dt;
        // In a periodic cell: the affine map of the step, `exp(L Δt)`, and the fixed corner.
        let affine = self
            .periodic
            .as_ref()
            .map(|c| (c.cell.step_map(dt) - DMat3::IDENTITY, c.cell.origin()));
        let p = &mut self.particles;
        for i in 0..p.len() {
            let drive = self
                .drive_of
                .get(i)
                .copied()
                .flatten()
                .map(|d| &self.drives[d as usize]);
            if let Some(d) = drive {
                p.force[i] += d.force.as_ref().map_or(DVec3::ZERO, |s| s.at(t));
                p.torque[i] += d.torque.as_ref().map_or(DVec3::ZERO, |s| s.at(t));
            }
            let force = local_damped(p.force[i], p.velocity[i], alpha);
            let torque = local_damped(p.torque[i], p.angular_velocity[i], alpha);
            let inertia = if p.spin_fixed[i] {
                f64::INFINITY
            } else {
                p.inertia[i]
            };
            match drive {
                None => {
                    p.velocity[i] += force / p.mass[i] * dt;
                    if !p.spin_fixed[i] {
                        p.angular_velocity[i] += torque / p.inertia[i] * dt;
                    }
                }
                Some(d) => {
                    p.velocity[i] = d.velocity(t, p.velocity[i], force, p.mass[i], dt);
                    p.angular_velocity[i] =
                        d.angular_velocity(t, p.angular_velocity[i], torque, inertia, dt);
                }
            }
            // In a periodic cell the velocity is the fluctuation about the affine field, and the
            // centre is mapped with the cell.
            let moved = match &affine {
                Some((map, origin)) => *map * (p.position[i] - *origin) + p.velocity[i] * dt,
                None => p.velocity[i] * dt,
            };
            p.position[i] += moved;
            let spin = DQuat::from_scaled_axis(p.angular_velocity[i] * dt);
            p.orientation[i] = (spin * p.orientation[i]).normalize();
        }
        for (w, wall) in self.walls.iter_mut().enumerate() {
            if let Some(Some(s)) = self.wall_schedules.get(w) {
                wall.velocity = s.at(t);
            }
            wall.advance(dt);
        }
        self.advance_cell(dt);
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
