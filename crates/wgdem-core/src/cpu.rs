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
use crate::contact::hill::{HillState, Moisture};
use crate::contact::model::{ContactKind, Kinematics, SlotHistory, evaluate};
use crate::contact::{ContactLaw, ContactModel, ContactParams, RelativeMotion};
use crate::material::{PairParams, effective};
use crate::particles::Particles;
use crate::wall::Wall;

/// A candidate pair of the neighbour list with its contact parameters and history.
#[derive(Debug, Clone, PartialEq)]
pub struct PairSlot {
    /// Smaller stable id.
    pub i: u32,
    /// Larger stable id.
    pub j: u32,
    /// Contact constants of the pair's model (fixed per pair: masses and radii do not change).
    pub params: ContactKind,
    /// What the contact carries between steps (blank while the spheres do not touch, unless a
    /// liquid bridge holds them).
    pub history: SlotHistory,
}

/// Work accounted by the contacts of the linear and hill models (Kuhn Fig. 1 lines 51–53;
/// hill: spring energy, dashpot and slip work).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ContactWork {
    /// Elastic energy stored in the touching contacts after the last step (J).
    pub elastic: f64,
    /// Work dissipated in contacts since the start (J), including contacts since broken.
    pub dissipated: f64,
}

/// A moisture event of the hill model (Potyondy memo, Table 6), applied at `time`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MoistureEvent {
    /// Simulated time at which it applies (s).
    pub time: f64,
    /// `make_wet` (true) or `make_dry` (false).
    pub wet: bool,
    /// Moisture gap `g_m` of `make_wet` (m).
    pub gap: f64,
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
    /// Work of the linear and hill contacts (the CPU engine accounts it; see [`ContactWork`]).
    pub work: ContactWork,
    /// Cundall's local (non-viscous) damping factor α in [0, 1): each force and torque
    /// component is reduced by `α |F| sign(v)` (PFC's local damping).
    pub local_damping: f64,
    n_materials: usize,
    pair_params: Vec<PairParams>,
    wall_history: HashMap<(u32, u32), SlotHistory>,
    /// The wall history being built this step (swapped with `wall_history`, kept allocated).
    next_wall_history: HashMap<(u32, u32), SlotHistory>,
    /// Extra neighbour-list reach for contacts that act across a gap (liquid bridges) (m).
    interaction_range: f64,
    /// Moisture events, by time, and how many have been applied.
    moisture_events: Vec<MoistureEvent>,
    events_applied: usize,
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
        let range = bridge_range(&pair_params, &particles.radius);
        Self {
            particles,
            walls,
            model,
            gravity,
            dt,
            time: 0.0,
            steps: 0,
            stats: StepStats::default(),
            work: ContactWork::default(),
            local_damping: 0.0,
            n_materials,
            interaction_range: range,
            pair_params,
            wall_history: HashMap::new(),
            next_wall_history: HashMap::new(),
            moisture_events: Vec::new(),
            events_applied: 0,
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
        let mut carried: HashMap<(u32, u32), SlotHistory> = std::mem::take(&mut self.neighbours)
            .into_iter()
            .filter(|s| !s.history.is_blank())
            .map(|s| ((s.i, s.j), s.history))
            .collect();
        let margin = self.skin + self.interaction_range;
        self.neighbours = pairs_within(&p.position, &p.radius, margin)
            .into_iter()
            .map(|(i, j)| {
                let params = self.slot_params(i as usize, j as usize);
                let history = carried
                    .remove(&(i, j))
                    .unwrap_or_else(|| SlotHistory::fresh(&params));
                PairSlot {
                    i,
                    j,
                    params,
                    history,
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
        self.interaction_range = bridge_range(&pair_params, &self.particles.radius);
        self.pair_params = pair_params;
        self.refresh_slot_params();
    }

    fn slot_params(&self, a: usize, b: usize) -> ContactKind {
        let p = &self.particles;
        self.pair_params[p.material[a] * self.n_materials + p.material[b]]
            .contact_kind((p.radius[a], p.radius[b]), (p.mass[a], p.mass[b]))
    }

    fn refresh_slot_params(&mut self) {
        for k in 0..self.neighbours.len() {
            let (a, b) = (self.neighbours[k].i as usize, self.neighbours[k].j as usize);
            self.neighbours[k].params = self.slot_params(a, b);
        }
    }

    /// The moisture events in time order, and how many of them the run has applied.
    pub fn moisture_events(&self) -> (&[MoistureEvent], usize) {
        (&self.moisture_events, self.events_applied)
    }

    /// Records that the first `n` moisture events have been applied (by another backend that
    /// advanced this state).
    pub fn set_moisture_events_applied(&mut self, n: usize) {
        self.events_applied = n.min(self.moisture_events.len());
    }

    /// Sets the moisture events of hill contacts (applied in time order as the run passes them).
    pub fn set_moisture_events(&mut self, mut events: Vec<MoistureEvent>) {
        events.sort_by(|a, b| a.time.total_cmp(&b.time));
        self.moisture_events = events;
        self.events_applied = 0;
    }

    /// `make_wet(gap)` on every hill contact of the neighbour list whose gap is at most `gap`
    /// (new contacts are created for such pairs), or `make_dry` (memo Table 6).
    pub fn apply_moisture(&mut self, wet: bool, gap: f64) {
        self.update_neighbours();
        let p = &self.particles;
        for slot in &mut self.neighbours {
            if !matches!(slot.params, ContactKind::Hill(_)) {
                continue;
            }
            let (i, j) = (slot.i as usize, slot.j as usize);
            let g = p.position[i].distance(p.position[j]) - p.radius[i] - p.radius[j];
            let state = match &mut slot.history {
                SlotHistory::Hill(s) => s,
                other => {
                    *other = SlotHistory::Hill(HillState::default());
                    match other {
                        SlotHistory::Hill(s) => s,
                        _ => continue,
                    }
                }
            };
            if !wet {
                state.moisture = Moisture::Dry;
            } else if g <= gap {
                state.moisture = Moisture::Wet;
            }
        }
    }

    /// Number of neighbour-list pairs and the lengths of their Jäger histories (for reports).
    pub fn history_lengths(&self) -> Vec<usize> {
        self.neighbours
            .iter()
            .filter(|s| matches!(s.params, ContactKind::Jager(_)) && !s.history.is_blank())
            .map(|s| s.history.history_points())
            .collect()
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
        let mut wall_history: Vec<((u32, u32), SlotHistory)> = self
            .wall_history
            .iter()
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        wall_history.sort_by_key(|e| e.0);
        SimState {
            particles: self.particles.clone(),
            walls: self.walls.clone(),
            time: self.time,
            steps: self.steps,
            stats: self.stats,
            work: self.work,
            slots: self
                .neighbours
                .iter()
                .map(|s| (s.i, s.j, s.history.clone()))
                .collect(),
            events_applied: self.events_applied,
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
        self.work = state.work;
        let zero = ContactKind::Spring(ContactParams::default());
        self.neighbours = state
            .slots
            .into_iter()
            .map(|(i, j, history)| PairSlot {
                i,
                j,
                params: zero,
                history,
            })
            .collect();
        self.refresh_slot_params();
        self.events_applied = state.events_applied;
        self.wall_history = state.wall_history.into_iter().collect();
        self.built_at = state.built_at;
        self.skin = state.skin;
        self.neighbour_builds = state.neighbour_builds;
    }

    /// True when some material pair uses a model that accounts its contacts' work.
    pub fn accounts_work(&self) -> bool {
        self.pair_params.iter().any(|p| p.model().accounts_work())
    }

    /// True when the scene has moisture events.
    pub fn has_moisture_events(&self) -> bool {
        !self.moisture_events.is_empty()
    }

    /// Extra neighbour-list reach for liquid bridges (m), see [`bridge_range`].
    pub fn interaction_range(&self) -> f64 {
        self.interaction_range
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
        while let Some(e) = self.moisture_events.get(self.events_applied).copied() {
            if e.time > self.time {
                break;
            }
            self.apply_moisture(e.wet, e.gap);
            self.events_applied += 1;
        }
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
        let mut elastic = 0.0;
        let mut dissipated = self.work.dissipated;

        // Particle–particle contacts.
        for slot in &mut self.neighbours {
            let (i, j) = (slot.i as usize, slot.j as usize);
            let d = p.position[j] - p.position[i];
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
            // Fleischmann Eq. 2: motion of j relative to i at the contact point.
            let kinematics = Kinematics {
                overlap,
                normal,
                motion: RelativeMotion {
                    velocity: (pv[j] + pw[j].cross(r_j)) - (pv[i] + pw[i].cross(r_i)),
                    displacement: ((p.velocity[j] + p.angular_velocity[j].cross(r_j))
                        - (p.velocity[i] + p.angular_velocity[i].cross(r_i)))
                        * dt,
                },
                twirl: 0.5 * (p.angular_velocity[i] + p.angular_velocity[j]).dot(normal) * dt,
            };
            let Some(out) = evaluate(model, &slot.params, &mut slot.history, &kinematics) else {
                continue;
            };
            p.force[i] -= out.force;
            p.force[j] += out.force;
            p.torque[i] += r_i.cross(-out.force);
            p.torque[j] += r_j.cross(out.force);
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
                let kinematics = Kinematics {
                    overlap: c.overlap,
                    normal: c.normal,
                    motion: RelativeMotion {
                        velocity: pv[i] + pw[i].cross(r_p) - wall.velocity,
                        displacement: (p.velocity[i] + p.angular_velocity[i].cross(r_p)
                            - wall.velocity)
                            * dt,
                    },
                    twirl: 0.5 * p.angular_velocity[i].dot(c.normal) * dt,
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
                p.torque[i] += r_p.cross(out.force);
                wall.force -= out.force;
                wall.torque += (p.position[i] + r_p - reference).cross(-out.force);
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
        self.work = ContactWork {
            elastic,
            dissipated,
        };
    }

    /// Semi-implicit Euler update of particles and walls.
    fn integrate(&mut self) {
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
    /// Contact work.
    #[serde(default)]
    pub work: ContactWork,
    /// Neighbour list: stable ids and contact history.
    pub slots: Vec<(u32, u32, SlotHistory)>,
    /// Wall contact history by (wall, particle), sorted.
    pub wall_history: Vec<((u32, u32), SlotHistory)>,
    /// Moisture events applied so far.
    #[serde(default)]
    pub events_applied: usize,
    /// Positions at the last neighbour build.
    pub built_at: Vec<DVec3>,
    /// Neighbour-list skin (m).
    pub skin: f64,
    /// Neighbour-list builds so far.
    pub neighbour_builds: u64,
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

/// How far beyond touching the neighbour list must reach for liquid bridges: `2 s_cr ≤ 2 R_max`
/// when some pair is a hill contact with suction (memo Eq. 12), else 0.
fn bridge_range(pairs: &[PairParams], radius: &[f64]) -> f64 {
    if pairs.iter().any(|p| p.model().acts_across_gaps()) {
        2.0 * radius.iter().copied().fold(0.0, f64::max)
    } else {
        0.0
    }
}

/// Default neighbour-list skin as a fraction of the smallest diameter.
pub const DEFAULT_SKIN_FRACTION: f64 = 0.1;

/// Overlap, as a fraction of R̄, at which a Hertzian contact's stiffness is evaluated for the
/// time-step estimate (1 %: larger overlaps break the small-strain assumption of Hertz theory).
pub const REFERENCE_OVERLAP_FRACTION: f64 = 0.01;

/// Critical time step estimate `Δt_crit = min √(m̄ / k)` over the stiffest contact the scene can
/// form (O'Sullivan & Bray 2004, the bound Fleischmann et al. cite after Eq. 6).
///
/// `smallest` lists, per particle material, the smallest particle `(material, radius, mass)`
/// of that material; `wall_materials` the materials of the walls. For each possible contact the
/// normal stiffness and the tangential stiffness of its model are used, the latter with the 3.5
/// factor of a solid sphere's combined translational and rotational compliance
/// (`1/m + R²/I = 3.5/m`):
/// - spring, Hooke: `k_n`, `k_t`; Hertz: the tangents `3/2 k_n √(R̄ δ)` and `k_t √(R̄ δ)` at
///   `δ = 1 % R̄`;
/// - linear: `k_n`, `k_t`;
/// - hill: Potyondy Section 1.9 (Eq. 19–21) at `δ = 1 % R_e`;
/// - Jäger: the Hertz tangent `dF_n/dδ` at `δ = 1 % R̄` for both (the Mindlin tangential
///   stiffness is never larger, Kuhn & Jäger Section 4.2).
pub fn critical_time_step(
    law: ContactLaw,
    smallest: &[(usize, f64, f64)],
    wall_materials: &[usize],
    pair: impl Fn(usize, usize) -> PairParams,
) -> f64 {
    let mut dt = f64::INFINITY;
    let mut consider = |radii: (f64, f64), masses: (f64, f64), params: PairParams| {
        let m_eff = if masses.0.is_infinite() {
            masses.1
        } else {
            effective(masses.0, masses.1)
        };
        let r_eff = if radii.0.is_infinite() {
            radii.1
        } else {
            effective(radii.0, radii.1)
        };
        let delta = REFERENCE_OVERLAP_FRACTION * r_eff;
        let (kn, kt) = match params.contact_kind(radii, masses) {
            ContactKind::Spring(c) => match law {
                ContactLaw::Hooke => (c.kn, c.kt),
                ContactLaw::Hertz => {
                    let f = (r_eff * delta).sqrt();
                    (1.5 * c.kn * f, c.kt * f)
                }
            },
            ContactKind::Linear(k) => (k.kn, k.kt),
            ContactKind::Hill(h) => crate::contact::hill::hill_stiffness(&h, delta),
            ContactKind::Jager(j) => {
                // F = Ē √R ζ^{3/2} with δ = 2ζ: dF/dδ = 3/4 Ē √R ζ^{1/2}.
                let k = 0.75 * j.e_bar * (j.radius * 0.5 * delta).sqrt();
                (k, k)
            }
        };
        let k = kn.max(3.5 * kt);
        if k > 0.0 {
            dt = dt.min((m_eff / k).sqrt());
        }
    };
    for &(a, ra, ma) in smallest {
        for &(b, rb, mb) in smallest {
            consider((ra, rb), (ma, mb), pair(a, b));
        }
        for &w in wall_materials {
            consider((f64::INFINITY, ra), (f64::INFINITY, ma), pair(w, a));
        }
    }
    dt
}
