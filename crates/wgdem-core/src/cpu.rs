//! The CPU reference stepper, in f64. The GPU engine must reproduce it.
//!
//! One step, in order:
//! 1. clear forces; add gravity;
//! 2. neighbour list (pairs closer than a skin, from the spatial hash in `broadphase`), rebuilt
//!    only when some particle has moved more than half the skin since the last build (so no
//!    pair can have closed the skin in between: the contact set is exact); then for every
//!    touching pair the contact law
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
//! Pair history lives in the neighbour list itself, one [`PairSlot`] per candidate pair with
//! its contact parameters (evaluated once per rebuild) and its tangential displacement, like the
//! GPU's contact table. A slot whose spheres stop touching is reset to zero (the contact broke);
//! at a rebuild each new slot takes the history of the old slot with the same stable ids
//! `(i, j)`, `i < j`, so history survives rebuilds, and a new contact starts from zero.
//! Wall history lives in a map keyed by `(wall, particle)`, rebuilt every step from the
//! contacts that still touch.

use std::collections::HashMap;

use glam::{DQuat, DVec3};
use serde::{Deserialize, Serialize};

use crate::broadphase::pairs_within;
use crate::contact::{
    ContactLaw, ContactModel, ContactParams, HistoryMode, RelativeMotion, contact_force,
};
use crate::material::{PairParams, effective};
use crate::particles::Particles;
use crate::wall::Wall;

/// A candidate pair of the neighbour list with its contact parameters and history.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairSlot {
    /// Smaller stable id.
    pub i: u32,
    /// Larger stable id.
    pub j: u32,
    /// Contact parameters of the pair (fixed per pair: masses and radii do not change).
    pub params: ContactParams,
    /// Tangential displacement `u_t` (zero while the spheres do not touch).
    pub tangential: DVec3,
}

/// Counts from the last step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    wall_history: HashMap<(u32, u32), DVec3>,
    /// The wall history being built this step (swapped with `wall_history`, kept allocated).
    next_wall_history: HashMap<(u32, u32), DVec3>,
    /// Velocities predicted at t_n for the dashpots (scratch, reused every step).
    predicted_velocity: Vec<DVec3>,
    /// Angular velocities predicted at t_n (scratch).
    predicted_angular_velocity: Vec<DVec3>,
    /// Candidate pairs closer than `skin` when the list was built, with their history.
    neighbours: Vec<PairSlot>,
    /// Positions at the last neighbour-list build.
    built_at: Vec<DVec3>,
    /// Neighbour-list skin (m).
    skin: f64,
    /// Neighbour-list builds so far.
    pub neighbour_builds: u64,
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
        let r_min = particles
            .radius
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
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
            wall_history: HashMap::new(),
            next_wall_history: HashMap::new(),
            predicted_velocity: Vec::new(),
            predicted_angular_velocity: Vec::new(),
            neighbours: Vec::new(),
            built_at: Vec::new(),
            skin: if r_min.is_finite() {
                DEFAULT_SKIN_FRACTION * 2.0 * r_min
            } else {
                0.0
            },
            neighbour_builds: 0,
        }
    }

    /// Sets the neighbour-list skin (m); 0 rebuilds the list every step. Forces the next step
    /// to rebuild.
    pub fn set_neighbour_skin(&mut self, skin: f64) {
        self.skin = skin.max(0.0);
        self.built_at.clear();
    }

    /// Rebuilds the neighbour list if some particle moved more than half the skin.
    fn update_neighbours(&mut self) {
        let p = &self.particles;
        let limit = 0.25 * self.skin * self.skin;
        let stale = self.built_at.len() != p.len()
            || p.position
                .iter()
                .zip(&self.built_at)
                .any(|(x, x0)| x.distance_squared(*x0) > limit);
        if !stale {
            return;
        }
        let carried: HashMap<(u32, u32), DVec3> = self
            .neighbours
            .iter()
            .filter(|s| s.tangential != DVec3::ZERO)
            .map(|s| ((s.i, s.j), s.tangential))
            .collect();
        self.neighbours = pairs_within(&p.position, &p.radius, self.skin)
            .into_iter()
            .map(|(i, j)| {
                let (a, b) = (i as usize, j as usize);
                PairSlot {
                    i,
                    j,
                    params: self.pair_params[p.material[a] * self.n_materials + p.material[b]]
                        .contact_params(
                            effective(p.mass[a], p.mass[b]),
                            effective(p.radius[a], p.radius[b]),
                        ),
                    tangential: carried.get(&(i, j)).copied().unwrap_or(DVec3::ZERO),
                }
            })
            .collect();
        self.built_at.clone_from(&p.position);
        self.neighbour_builds += 1;
    }

    /// Replaces the material-pair table (same size), e.g. to change friction between the
    /// stages of a test. Contact history is kept; the next step applies the new constants
    /// (a tangential spring beyond a lower Coulomb limit is rescaled by Eq. 6 then).
    pub fn set_pair_params(&mut self, pair_params: Vec<PairParams>) {
        assert_eq!(
            pair_params.len(),
            self.pair_params.len(),
            "the pair table keeps its size"
        );
        self.pair_params = pair_params;
        self.refresh_slot_params();
    }

    fn refresh_slot_params(&mut self) {
        let p = &self.particles;
        for s in &mut self.neighbours {
            let (a, b) = (s.i as usize, s.j as usize);
            s.params = self.pair_params[p.material[a] * self.n_materials + p.material[b]]
                .contact_params(
                    effective(p.mass[a], p.mass[b]),
                    effective(p.radius[a], p.radius[b]),
                );
        }
    }

    /// Forgets all contact history and forces a neighbour rebuild (after particles were
    /// resized or moved by hand).
    pub fn reset_history(&mut self) {
        self.neighbours.clear();
        self.wall_history.clear();
        self.built_at.clear();
    }

    /// The state that stepping changes, for checkpoints: with the same scene (materials,
    /// pair table) [`Simulation::restore`] continues bit for bit.
    pub fn state(&self) -> SimState {
        let mut wall_history: Vec<((u32, u32), DVec3)> =
            self.wall_history.iter().map(|(k, v)| (*k, *v)).collect();
        wall_history.sort_by_key(|e| e.0);
        SimState {
            particles: self.particles.clone(),
            walls: self.walls.clone(),
            time: self.time,
            steps: self.steps,
            stats: self.stats,
            slots: self
                .neighbours
                .iter()
                .map(|s| (s.i, s.j, s.tangential))
                .collect(),
            wall_history,
            built_at: self.built_at.clone(),
            skin: self.skin,
            neighbour_builds: self.neighbour_builds,
        }
    }

    /// Restores a [`Simulation::state`] (pair parameters come from the current table).
    pub fn restore(&mut self, state: SimState) {
        self.particles = state.particles;
        self.walls = state.walls;
        self.time = state.time;
        self.steps = state.steps;
        self.stats = state.stats;
        let zero = ContactParams::default();
        self.neighbours = state
            .slots
            .into_iter()
            .map(|(i, j, tangential)| PairSlot {
                i,
                j,
                params: zero,
                tangential,
            })
            .collect();
        self.refresh_slot_params();
        self.wall_history = state.wall_history.into_iter().collect();
        self.built_at = state.built_at;
        self.skin = state.skin;
        self.neighbour_builds = state.neighbour_builds;
    }

    /// Number of materials.
    pub fn n_materials(&self) -> usize {
        self.n_materials
    }

    /// Mixed parameters of materials `a` and `b`.
    pub fn pair(&self, a: usize, b: usize) -> &PairParams {
        &self.pair_params[a * self.n_materials + b]
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
        self.update_neighbours();
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
        for slot in &mut self.neighbours {
            let (i, j) = (slot.i as usize, slot.j as usize);
            let d = p.position[j] - p.position[i];
            let dist = d.length();
            let overlap = p.radius[i] + p.radius[j] - dist;
            if overlap <= 0.0 {
                slot.tangential = DVec3::ZERO; // not touching: a later contact starts afresh
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
            let out = contact_force(
                model,
                overlap,
                normal,
                motion,
                slot.tangential,
                &slot.params,
            );
            p.force[i] -= out.force;
            p.force[j] += out.force;
            p.torque[i] += r_i.cross(-out.force);
            p.torque[j] += r_j.cross(out.force);
            slot.tangential = out.tangential_displacement;
            stats.sliding += usize::from(out.sliding);
            stats.contacts += 1;
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
                stats.sliding += usize::from(out.sliding);
                if model.history == HistoryMode::True {
                    new_wall_history.insert(key, out.tangential_displacement);
                }
                stats.wall_contacts += 1;
            }
        }
        std::mem::swap(&mut self.wall_history, &mut self.next_wall_history);
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

/// What [`Simulation::state`] saves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimState {
    /// Particles, with the last step's forces (the dashpots' predictor needs them).
    pub particles: Particles,
    /// Walls.
    pub walls: Vec<Wall>,
    /// Simulated time (s).
    pub time: f64,
    /// Steps taken.
    pub steps: u64,
    /// Counts of the last step.
    pub stats: StepStats,
    /// Neighbour list: stable ids and tangential displacement.
    pub slots: Vec<(u32, u32, DVec3)>,
    /// Wall contact history by (wall, particle), sorted.
    pub wall_history: Vec<((u32, u32), DVec3)>,
    /// Positions at the last neighbour build.
    pub built_at: Vec<DVec3>,
    /// Neighbour-list skin (m).
    pub skin: f64,
    /// Neighbour-list builds so far.
    pub neighbour_builds: u64,
}

/// Default neighbour-list skin as a fraction of the smallest diameter.
pub const DEFAULT_SKIN_FRACTION: f64 = 0.1;

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
