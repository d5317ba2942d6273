//! Forces of one step: gravity, every touching pair through its contact model with its
//! history, and the particle–wall contacts. GPU twin: `shaders/contact_forces.wgsl` (and
//! `wall_reduce.wgsl` for the wall sums).

use super::periodic::outer;
use super::*;

impl Simulation {
    /// Forces and torques on particles and walls for the current state, updating history.
    pub fn compute_forces(&mut self) {
        self.update_neighbours();
        let clock = self.force_seconds.is_some().then(std::time::Instant::now);
        let dt = self.dt;
        let model = self.model;
        let p = &mut self.particles;
        let n = p.len();
        let (pv, pw) = (
            &mut self.predicted_velocity,
            &mut self.predicted_angular_velocity,
        );
        pv.clear();
        pw.clear();
        for i in 0..n {
            let mut a = p.force[i] / p.mass[i];
            let mut alpha = p.torque[i] / p.inertia[i];
            // A driven particle's prescribed and locked components are already its velocity
            // at t_n.
            if let Some(Some(d)) = self.drive_of.get(i) {
                let drive = &self.drives[*d as usize];
                a = drive.predicted_acceleration(a);
                alpha = drive.predicted_angular_acceleration(alpha);
            }
            pv.push(p.velocity[i] + a * (0.5 * dt));
            pw.push(if p.spin_fixed[i] {
                p.angular_velocity[i]
            } else {
                p.angular_velocity[i] + alpha * (0.5 * dt)
            });
            p.force[i] = self.gravity * p.mass[i];
            p.torque[i] = DVec3::ZERO;
        }
        let mut stats = StepStats::default();
        let mut elastic = 0.0;
        let mut dissipated = self.work.dissipated;
        // In a periodic cell: the nearest image, the affine field's velocity difference `L d`
        // across a pair's branch vector `d`, and Love–Weber's sum (`Simulation::stress`).
        let cell = self.periodic.as_ref().map(|c| c.cell);
        let mut contact_sum = DMat3::ZERO;

        // Particle–particle contacts.
        for slot in &mut self.neighbours {
            let (i, j) = (slot.i as usize, slot.j as usize);
            let mut d = p.position[j] - p.position[i];
            let mut affine = None;
            if let Some(c) = &cell {
                d = c.nearest_image(d);
                affine = Some(c.velocity_gradient() * d);
            }
            let dist = d.length();
            let overlap = p.radius[i] + p.radius[j] - dist;
            if overlap <= 0.0 && !slot.history.is_wet() {
                // Not touching: a later contact starts afresh.
                if !slot.history.is_blank() {
                    slot.history = SlotHistory::fresh(&slot.params);
                }
                continue;
            }
            // Coincident centres have no normal; any unit vector keeps them apart.
            let normal = if dist > 0.0 { d / dist } else { DVec3::Z };
            let r_i = normal * (p.radius[i] - 0.5 * overlap);
            let r_j = -normal * (p.radius[j] - 0.5 * overlap);
            // Fleischmann Eq. 2: motion of j relative to i at the contact point (in a deforming
            // cell, plus the affine field's difference; nothing is added without a cell, so
            // such scenes keep their bits).
            let mut velocity = (pv[j] + pw[j].cross(r_j)) - (pv[i] + pw[i].cross(r_i));
            let mut moved = (p.velocity[j] + p.angular_velocity[j].cross(r_j))
                - (p.velocity[i] + p.angular_velocity[i].cross(r_i));
            if let Some(a) = affine {
                velocity += a;
                moved += a;
            }
            let kinematics = Kinematics {
                overlap,
                normal,
                motion: RelativeMotion {
                    velocity,
                    displacement: moved * dt,
                },
                twirl: 0.5 * (p.angular_velocity[i] + p.angular_velocity[j]).dot(normal) * dt,
                spin: pw[j] - pw[i],
                rotation: (p.angular_velocity[j] - p.angular_velocity[i]) * dt,
            };
            let Some(out) = evaluate(model, &slot.params, &mut slot.history, &kinematics) else {
                continue;
            };
            p.force[i] -= out.force;
            p.force[j] += out.force;
            p.torque[i] += r_i.cross(-out.force) - out.torque;
            p.torque[j] += r_j.cross(out.force) + out.torque;
            if cell.is_some() {
                contact_sum += outer(out.force, d);
            }
            stats.sliding += usize::from(out.sliding);
            stats.contacts += usize::from(overlap > 0.0);
            elastic += out.elastic;
            dissipated += out.dissipated;
        }

        // Particle–wall contacts: the wall is body A, the particle body B.
        let new_wall_history = &mut self.next_wall_history;
        new_wall_history.clear();
        for (w, wall) in self.walls.iter_mut().enumerate() {
            wall.force = DVec3::ZERO;
            wall.torque = DVec3::ZERO;
            let reference = wall.reference_point();
            for i in 0..n {
                let Some(c) = wall.contact(p.position[i], p.radius[i]) else {
                    continue;
                };
                let r_p = -c.normal * (p.radius[i] - 0.5 * c.overlap);
                let mut velocity = pv[i] + pw[i].cross(r_p) - wall.velocity;
                let mut moved = p.velocity[i] + p.angular_velocity[i].cross(r_p) - wall.velocity;
                if let Some(c) = &cell {
                    // A wall does not deform with the cell: the sphere's affine velocity
                    // L (x − origin) moves it along the wall too.
                    let affine = c.velocity_gradient() * (p.position[i] - c.origin());
                    velocity += affine;
                    moved += affine;
                }
                let kinematics = Kinematics {
                    overlap: c.overlap,
                    normal: c.normal,
                    motion: RelativeMotion {
                        velocity,
                        displacement: moved * dt,
                    },
                    twirl: 0.5 * p.angular_velocity[i].dot(c.normal) * dt,
                    spin: pw[i],
                    rotation: p.angular_velocity[i] * dt,
                };
                let params = self.pair_params[wall.material * self.n_materials + p.material[i]]
                    .contact_kind((f64::INFINITY, p.radius[i]), (f64::INFINITY, p.mass[i]));
                let key = (w as u32, i as u32);
                let mut history = self
                    .wall_history
                    .remove(&key)
                    .unwrap_or_else(|| SlotHistory::fresh(&params));
                let Some(out) = evaluate(model, &params, &mut history, &kinematics) else {
                    continue;
                };
                p.force[i] += out.force;
                p.torque[i] += r_p.cross(out.force) + out.torque;
                wall.force -= out.force;
                wall.torque += (p.position[i] + r_p - reference).cross(-out.force) - out.torque;
                if cell.is_some() {
                    contact_sum += outer(out.force, -r_p);
                }
                stats.sliding += usize::from(out.sliding);
                elastic += out.elastic;
                dissipated += out.dissipated;
                if !history.is_blank() {
                    new_wall_history.insert(key, history);
                }
                stats.wall_contacts += 1;
            }
        }
        std::mem::swap(&mut self.wall_history, &mut self.next_wall_history);
        self.next_wall_history.clear();
        self.stats = stats;
        if let Some(c) = &mut self.periodic {
            c.contact_stress = contact_sum * (1.0 / c.cell.volume());
        }
        self.work = ContactWork {
            elastic,
            dissipated,
        };
        if let (Some(total), Some(t0)) = (&mut self.force_seconds, clock) {
            *total += t0.elapsed().as_secs_f64();
        }
    }
}
