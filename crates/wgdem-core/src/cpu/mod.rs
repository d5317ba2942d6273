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

use glam::{DMat3, DQuat, DVec3};
use serde::{Deserialize, Serialize};

use crate::broadphase::{pairs_within, periodic_pairs_within};
use crate::cell::PeriodicCell;
use crate::contact::hill::{HillState, Moisture};
use crate::contact::model::{ContactKind, Kinematics, PairModel, SlotHistory, evaluate};
use crate::contact::{ContactLaw, ContactModel, ContactParams, RelativeMotion};
use crate::material::{PairParams, effective};
use crate::particles::Particles;
use crate::wall::Wall;

mod contact_forces;
mod integrate;
mod moisture;
mod neighbours;
mod periodic;
mod speed_bound;
mod time_step;

pub use integrate::local_damped;
pub(crate) use speed_bound::norm;
pub use speed_bound::{SPEED_MARGIN, default_max_speed};
pub use time_step::critical_time_step;

/// The time of step `step`, `step × dt` (s) rounded to 12 significant digits: what every
/// output's `time_s` column prints, so that a time can be matched exactly (an accumulated sum
/// of `dt` drifts in the last digits, and even the product of a step count and a `dt` that
/// divides the output interval lies an ulp off the interval's multiple: 3 × 0.1 is
/// 0.30000000000000004). Twelve digits keep consecutive steps apart up to 10¹¹ steps (the
/// step ceiling is 10¹²: beyond 10¹¹ steps neighbouring times may print alike; the `step`
/// column beside it is exact).
pub fn step_time(step: u64, dt: f64) -> f64 {
    let t = step as f64 * dt;
    if t == 0.0 || !t.is_finite() {
        return t;
    }
    format!("{t:.11e}").parse().unwrap_or(t)
}

impl Simulation {
    /// Sphere `i`'s id in its packing file, −1 where it has none ([`Simulation::source_id`]).
    pub fn source_id_of(&self, i: usize) -> i64 {
        self.source_id.get(i).copied().unwrap_or(-1)
    }
}

/// The stored histories of the contacts of a state.
#[derive(Debug, Clone, Default)]
pub struct ContactHistories {
    /// Particle pairs by stable ids `(i, j)`, `i < j`.
    pub pairs: HashMap<(u32, u32), SlotHistory>,
    /// Particle–wall contacts by `(wall, particle)`.
    pub walls: HashMap<(u32, u32), SlotHistory>,
    /// Contacts whose history the backend cannot hand over (their tangential force is
    /// written as NaN rather than guessed): none of the engines' now (the GPU engine decodes
    /// its Jäger stacks too); kept so that a backend that cannot is refused by the probes.
    pub unreadable: usize,
}

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
    /// Speed (m/s) above which a sphere counts as blown up ([`crate::guard`]); default
    /// [`default_max_speed`].
    pub max_speed: f64,
    /// Cundall's local (non-viscous) damping factor α in [0, 1): each force and torque
    /// component is reduced by `α |F| sign(v)` (PFC's local damping).
    pub local_damping: f64,
    /// Loads and constraints (`[[loads]]`), referred to by [`Simulation::drive_of`].
    pub drives: Vec<crate::loads::Drive>,
    /// Per particle (stable id), the index of its drive in [`Simulation::drives`], if any.
    pub drive_of: Vec<Option<u32>>,
    /// Per wall, a velocity schedule that overrides its velocity at every step, if any.
    pub wall_schedules: Vec<Option<crate::loads::Schedule>>,
    /// Each sphere's id in the packing file it was read from (a LAMMPS atom id), −1 for a
    /// sphere the scene generated; empty where the scene read no file. Part of the scene,
    /// not of the state: outputs carry it as `source_id`.
    pub source_id: Vec<i64>,
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
    /// The periodic cell, with what it carries (see [`Simulation::set_cell`]).
    periodic: Option<Periodic>,
    /// Wall-clock seconds spent computing contact forces (after the neighbour list is
    /// current) since [`Simulation::time_forces`] started the clock; `None` while not timed.
    /// Not part of the state: timing changes no result.
    force_seconds: Option<f64>,
}

/// A periodic cell's part of the state ([`crate::cell`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Periodic {
    /// The cell now.
    pub cell: PeriodicCell,
    /// Its edges at the last neighbour build (`H` as columns, m).
    pub built: DMat3,
    /// Per particle, the whole-cell shifts `k` its wraps took off since the scene started
    /// (its unwrapped position is `x + H k`).
    pub images: Vec<[i64; 3]>,
    /// `(1/V) Σ f ⊗ l` over the last step's contacts (Pa), with the cell's volume `V` when they
    /// were evaluated (before the step moved the cell): a pair's force on its second sphere
    /// and the branch vector from the first to the second; a wall's force on a sphere and the
    /// vector from the contact point to the sphere's centre.
    pub contact_stress: DMat3,
    /// Why the cell stopped (too narrow for the neighbour reach, or flat), once it has.
    pub failure: Option<String>,
}

impl Simulation {
    /// Builds a simulation; `pair_params[a * n_materials + b]` mixes materials a and b.
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
        let mut sim = Self {
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
            drives: Vec::new(),
            drive_of: Vec::new(),
            wall_schedules: Vec::new(),
            source_id: Vec::new(),
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
            max_speed: f64::MAX,
            periodic: None,
            force_seconds: None,
        };
        sim.max_speed = default_max_speed(&sim);
        sim
    }

    /// Sets the neighbour-list skin to its default for the current radii (a fraction of the
    /// smallest diameter), after particles were resized or replaced. Forces the next step to
    /// rebuild.
    pub fn set_default_skin(&mut self) {
        let r_min = self
            .particles
            .radius
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        self.set_neighbour_skin(DEFAULT_SKIN_FRACTION * 2.0 * r_min);
    }

    /// Sets the neighbour-list skin (m); 0 rebuilds the list every step. Forces the next step
    /// to rebuild.
    pub fn set_neighbour_skin(&mut self, skin: f64) {
        self.skin = skin.max(0.0);
        self.built_at.clear();
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

    /// Starts (or restarts from zero) the clock of [`Simulation::force_seconds`].
    pub fn time_forces(&mut self) {
        self.force_seconds = Some(0.0);
    }

    /// Wall-clock seconds spent computing contact forces since [`Simulation::time_forces`],
    /// the neighbour list's upkeep excluded (what a profiler of the force routine counts);
    /// `None` if the clock was not started.
    pub fn force_seconds(&self) -> Option<f64> {
        self.force_seconds
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
            periodic: self.periodic.clone(),
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
        self.periodic = state.periodic;
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

    /// The contact constants of particles `a` and `b` (`a` is body A).
    pub fn pair_kind(&self, a: usize, b: usize) -> ContactKind {
        self.slot_params(a, b)
    }

    /// The contact constants of wall `w` (body A) against particle `i`.
    pub fn wall_kind(&self, w: usize, i: usize) -> ContactKind {
        let p = &self.particles;
        self.pair_params[self.walls[w].material * self.n_materials + p.material[i]]
            .contact_kind((f64::INFINITY, p.radius[i]), (f64::INFINITY, p.mass[i]))
    }

    /// The contact histories this reference keeps (its neighbour slots and wall contacts),
    /// for snapshots (`snapshot::contacts`).
    pub fn contact_histories(&self) -> ContactHistories {
        ContactHistories {
            pairs: self
                .neighbours
                .iter()
                .filter(|s| !s.history.is_blank())
                .map(|s| ((s.i, s.j), s.history.clone()))
                .collect(),
            walls: self.wall_history.clone(),
            unreadable: 0,
        }
    }

    /// Takes over `histories` from an engine that took the steps elsewhere (the GPU engine's
    /// [`crate::runner::Backend::contact_histories`]), so that this reference continues from
    /// its contacts: the next step rebuilds the neighbour list, each pair carrying the history
    /// given for its stable ids, as a rebuild carries its own.
    pub fn adopt_histories(&mut self, histories: ContactHistories) {
        self.neighbours = histories
            .pairs
            .into_iter()
            .map(|((i, j), history)| PairSlot {
                i,
                j,
                params: self.slot_params(i as usize, j as usize),
                history,
            })
            .collect();
        self.wall_history = histories.walls;
        self.built_at.clear();
    }

    /// Whether some material pair uses Jäger's history-stack contact.
    pub fn uses_jager(&self) -> bool {
        self.pair_params
            .iter()
            .any(|p| matches!(p.model(), PairModel::Jager { .. }))
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
    /// The periodic cell's state, where the scene has one.
    pub periodic: Option<Periodic>,
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
