//! The CPU reference stepper, in f64. The GPU engine must reproduce it.
//!
//! One step, in order:
//! 1. clear forces; add gravity;
//! 2. broadphase (spatial hash, `broadphase`), then for every touching pair the contact law
//!    (`contact::contact_force`) with its stored tangential history, applied equal and opposite;
//! 3. particle–wall contacts, each with its own history;
//!    The dashpots see the velocity predicted at `t_n`, `v_{n−1/2} + F_{n−1}/m Δt/2` (the
//!    force array still holds the previous step's force when this step starts), the
//!    tangential spring the displacement of the last step, `v_{n−1/2} Δt` (see
//!    `contact::RelativeMotion`);
//! 4. integrate with semi-implicit (symplectic) Euler: `v += F/m Δt`, `x += v Δt`,
//!    `ω += T/I Δt`, `q ← exp(ω Δt) q`; move the walls.
//!
//! Why semi-implicit Euler: it is symplectic (bounded energy error for elastic contacts), needs
//! one force evaluation per step and no stored half-step force, and is the central-difference
//! scheme of Cundall & Strack (1979) that PFC and Chrono use; positions and velocities are the
//! leapfrog pair `x_n`, `v_{n+1/2}`, second-order accurate in positions.
//!
//! History lives in maps keyed by stable ids, `(i, j)` with `i < j` for pairs and
//! `(wall, particle)` for walls. Each step builds the new maps from the contacts that still
//! touch: a new contact starts from zero, a broken one is dropped.

use std::collections::HashMap;

use glam::{DQuat, DVec3};

use crate::broadphase::pairs_within;
use crate::contact::{
    ContactLaw, ContactModel, ContactOutcome, HistoryMode, RelativeMotion, contact_force,
};
use crate::material::{PairParams, effective};
use crate::particles::Particles;
use crate::wall::Wall;

/// Counts from the last step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StepStats {
    /// Touching particle–particle pairs.
    pub contacts: usize,
    /// Touching particle–wall pairs.
    pub wall_contacts: usize,
    /// Contacts (of both kinds) at the Coulomb limit.
    pub sliding: usize,
}

/// A scene ready to step on the CPU.
#[derive(Debug, Clone)]
pub struct Simulation {
    /// Particle state; index = stable id.
    pub particles: Particles,
    /// Walls, in scene order.
    pub walls: Vec<Wall>,
    /// Contact law and history mode.
    pub model: ContactModel,
    /// Gravitational acceleration (m/s²).
    pub gravity: DVec3,
    /// Time step (s).
    pub dt: f64,
    /// Simulated time (s).
    pub time: f64,
    /// Steps taken.
    pub steps: u64,
    /// Counts from the last step.
    pub stats: StepStats,
    n_materials: usize,
    pair_params: Vec<PairParams>,
    pair_history: HashMap<(u32, u32), DVec3>,
    wall_history: HashMap<(u32, u32), DVec3>,
    /// Velocities predicted at t_n for the dashpots (scratch, reused every step).
    predicted_velocity: Vec<DVec3>,
    /// Angular velocities predicted at t_n (scratch).
    predicted_angular_velocity: Vec<DVec3>,
}

impl Simulation {
    /// Builds a simulation; `pair_params[a * n_materials + b]` mixes materials a and b.
    pub fn new(
        particles: Particles,
        walls: Vec<Wall>,
        model: ContactModel,
        pair_params: Vec<PairParams>,
        gravity: DVec3,
        dt: f64,
    ) -> Self {
        let n_materials = (pair_params.len() as f64).sqrt().round() as usize;
        assert_eq!(
            n_materials * n_materials,
            pair_params.len(),
            "pair_params must be a square table"
        );
        Self {
            particles,
            walls,
            model,
            gravity,
            dt,
            time: 0.0,
            steps: 0,
            stats: StepStats::default(),
            n_materials,
            pair_params,
            pair_history: HashMap::new(),
            wall_history: HashMap::new(),
            predicted_velocity: Vec::new(),
            predicted_angular_velocity: Vec::new(),
        }
    }

    /// Mixed parameters of materials `a` and `b`.
    pub fn pair(&self, a: usize, b: usize) -> &PairParams {
        &self.pair_params[a * self.n_materials + b]
    }

    /// Stored tangential displacement of the pair `(i, j)`, if it is in contact.
    pub fn pair_history(&self, i: usize, j: usize) -> Option<DVec3> {
        let key = (i.min(j) as u32, i.max(j) as u32);
        self.pair_history.get(&key).copied()
    }

    /// Stored tangential displacement between wall `w` and particle `i`, if in contact.
    pub fn wall_history(&self, w: usize, i: usize) -> Option<DVec3> {
        self.wall_history.get(&(w as u32, i as u32)).copied()
    }

    /// Advances `n` steps.
    pub fn run(&mut self, n: u64) {
        for _ in 0..n {
            self.step();
        }
    }

    /// Advances one step (see the module docs for the order).
    pub fn step(&mut self) {
        self.compute_forces();
        self.integrate();
    }

    /// Forces and torques on particles and walls for the current state, updating history.
    pub fn compute_forces(&mut self) {
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
            pv.push(p.velocity[i] + p.force[i] / p.mass[i] * (0.5 * dt));
            pw.push(if p.spin_fixed[i] {
                p.angular_velocity[i]
            } else {
                p.angular_velocity[i] + p.torque[i] / p.inertia[i] * (0.5 * dt)
            });
            p.force[i] = self.gravity * p.mass[i];
            p.torque[i] = DVec3::ZERO;
        }
        let mut stats = StepStats::default();

        // Particle–particle contacts.
        let pairs = pairs_within(&p.position, &p.radius, 0.0);
        let mut new_pair_history = HashMap::with_capacity(pairs.len());
        for &(i, j) in &pairs {
            let (i, j) = (i as usize, j as usize);
            let d = p.position[j] - p.position[i];
            let dist = d.length();
            let overlap = p.radius[i] + p.radius[j] - dist;
            if overlap <= 0.0 {
                continue;
            }
            // Coincident centres have no normal; any unit vector keeps them apart.
            let normal = if dist > 0.0 { d / dist } else { DVec3::Z };
            let r_i = normal * (p.radius[i] - 0.5 * overlap);
            let r_j = -normal * (p.radius[j] - 0.5 * overlap);
            // Fleischmann Eq. 2: motion of j relative to i at the contact point.
            let motion = RelativeMotion {
                velocity: (pv[j] + pw[j].cross(r_j)) - (pv[i] + pw[i].cross(r_i)),
                displacement: ((p.velocity[j] + p.angular_velocity[j].cross(r_j))
                    - (p.velocity[i] + p.angular_velocity[i].cross(r_i)))
                    * dt,
            };
            let params = self.pair_params[p.material[i] * self.n_materials + p.material[j]]
                .contact_params(
                    effective(p.mass[i], p.mass[j]),
                    effective(p.radius[i], p.radius[j]),
                );
            let key = (i as u32, j as u32);
            let u_prev = self.pair_history.get(&key).copied().unwrap_or(DVec3::ZERO);
            let out = contact_force(model, overlap, normal, motion, u_prev, &params);
            p.force[i] -= out.force;
            p.force[j] += out.force;
            p.torque[i] += r_i.cross(-out.force);
            p.torque[j] += r_j.cross(out.force);
            record(&mut stats, &out, &mut new_pair_history, key, model.history);
            stats.contacts += 1;
        }
        self.pair_history = new_pair_history;

        // Particle–wall contacts: the wall is body A, the particle body B.
        let mut new_wall_history = HashMap::new();
        for (w, wall) in self.walls.iter_mut().enumerate() {
            wall.force = DVec3::ZERO;
            wall.torque = DVec3::ZERO;
            let reference = wall.reference_point();
            for i in 0..n {
                let Some(c) = wall.contact(p.position[i], p.radius[i]) else {
                    continue;
                };
                let r_p = -c.normal * (p.radius[i] - 0.5 * c.overlap);
                let motion = RelativeMotion {
                    velocity: pv[i] + pw[i].cross(r_p) - wall.velocity,
                    displacement: (p.velocity[i] + p.angular_velocity[i].cross(r_p)
                        - wall.velocity)
                        * dt,
                };
                let params = self.pair_params[wall.material * self.n_materials + p.material[i]]
                    .contact_params(p.mass[i], p.radius[i]);
                let key = (w as u32, i as u32);
                let u_prev = self.wall_history.get(&key).copied().unwrap_or(DVec3::ZERO);
                let out = contact_force(model, c.overlap, c.normal, motion, u_prev, &params);
                p.force[i] += out.force;
                p.torque[i] += r_p.cross(out.force);
                wall.force -= out.force;
                wall.torque += (p.position[i] + r_p - reference).cross(-out.force);
                record(&mut stats, &out, &mut new_wall_history, key, model.history);
                stats.wall_contacts += 1;
            }
        }
        self.wall_history = new_wall_history;
        self.stats = stats;
    }

    /// Semi-implicit Euler update of particles and walls.
    fn integrate(&mut self) {
        let dt = self.dt;
        let p = &mut self.particles;
        for i in 0..p.len() {
            p.velocity[i] += p.force[i] / p.mass[i] * dt;
            p.position[i] += p.velocity[i] * dt;
            if !p.spin_fixed[i] {
                p.angular_velocity[i] += p.torque[i] / p.inertia[i] * dt;
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

fn record(
    stats: &mut StepStats,
    out: &ContactOutcome,
    history: &mut HashMap<(u32, u32), DVec3>,
    key: (u32, u32),
    mode: HistoryMode,
) {
    if out.sliding {
        stats.sliding += 1;
    }
    if mode == HistoryMode::True {
        history.insert(key, out.tangential_displacement);
    }
}

/// Overlap, as a fraction of R̄, at which a Hertzian contact's stiffness is evaluated for the
/// time-step estimate (1 %: larger overlaps break the small-strain assumption of Hertz theory).
pub const REFERENCE_OVERLAP_FRACTION: f64 = 0.01;

/// Critical time step estimate `Δt_crit = min √(m̄ / k)` over the stiffest contact the scene can
/// form (O'Sullivan & Bray 2004, the bound Fleischmann et al. cite after Eq. 6).
///
/// `partners` lists, per particle material, the smallest particle `(radius, mass)` of that
/// material; `wall_materials` the materials of the walls. For each possible contact the
/// normal stiffness `k_n` (Hooke) or the tangent `3/2 k_n √(R̄ δ)` at `δ = 1 % R̄` (Hertz) and
/// the tangential stiffness `k_t f` are used, the latter with the 3.5 factor of a solid sphere's
/// combined translational and rotational compliance (`1/m + R²/I = 3.5/m`).
pub fn critical_time_step(
    law: ContactLaw,
    smallest: &[(usize, f64, f64)],
    wall_materials: &[usize],
    pair: impl Fn(usize, usize) -> PairParams,
) -> f64 {
    let mut dt = f64::INFINITY;
    let mut consider = |m_eff: f64, r_eff: f64, params: PairParams| {
        let c = params.contact_params(m_eff, r_eff);
        let delta = REFERENCE_OVERLAP_FRACTION * r_eff;
        let (kn, kt) = match law {
            ContactLaw::Hooke => (c.kn, c.kt),
            ContactLaw::Hertz => {
                let f = (r_eff * delta).sqrt();
                (1.5 * c.kn * f, c.kt * f)
            }
        };
        let k = kn.max(3.5 * kt);
        if k > 0.0 {
            dt = dt.min((m_eff / k).sqrt());
        }
    };
    for &(a, ra, ma) in smallest {
        for &(b, rb, mb) in smallest {
            consider(effective(ma, mb), effective(ra, rb), pair(a, b));
        }
        for &w in wall_materials {
            consider(ma, ra, pair(w, a));
        }
    }
    dt
}
