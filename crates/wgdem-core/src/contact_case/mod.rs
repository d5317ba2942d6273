//! `wgdem contact`: one contact driven through prescribed relative motions, for checking a
//! contact model against its paper.
//!
//! A case (`assets/contact/*.toml`) has two bodies: body 1 (A) is a sphere or a plane, body 2
//! (B) a sphere. Stages move them: body 2 translates and spins at constant rates, the pair can
//! turn as a rigid body about the contact point, or body 2 is released (`free = true`) and moves
//! under the contact force with Cundall's local damping until it rests. Between stages the
//! friction, the hill damping constant and the moisture state can change, as in the test
//! problems of Potyondy's memo.
//!
//! Kinematics follow PFC's cycle (memo Section 1.3): each step first moves the bodies, then
//! evaluates the contact at the new positions with the relative velocity of the contact points
//! (Eq. 3–4) and the displacement increment `Δδ = δ̇ Δt` (Eq. 6). A rigid rotation of the pair
//! therefore gives no relative movement at all; only the twirl term rotates the force.
//!
//! Output: `contact.csv` with one row per step, forces on body 2 (N): `normal_force_N` is the
//! normal component of the total contact force, positive when it pushes the bodies apart
//! (Potyondy writes compression negative); then the tangential force components, the elastic
//! energy stored in the contact, the dissipated work, and — beyond the required columns — the
//! work done on the contact by the relative motion (trapezoid rule over each step), the normal
//! surface force and moisture force of the hill model, the overlap and the stage.

use std::path::Path;

use glam::{DQuat, DVec3};
use serde::{Deserialize, Serialize};

use crate::contact::hill::{HillParams, HillState, HillStep, hill_step, make_dry, make_wet};
use crate::contact::jager::{JagerParams, JagerState, JagerStep, jager_step};
use crate::contact::kuhn::{KuhnParams, KuhnState, KuhnStep, kuhn_step};
use crate::cpu::local_damped;
use crate::error::{Error, Result};
use crate::output::atomic_write;
use crate::scene::parse_toml;

mod evaluator;
mod parse;

pub use evaluator::{CaseEvaluator, CaseParams, CpuEvaluator, StepKinematics, StepResult};

/// A contact case file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseConfig {
    /// What the case checks (free text).
    #[serde(default)]
    pub description: String,
    /// Time step (s).
    pub dt: f64,
    /// The contact model and its constants.
    pub contact: ContactSpec,
    /// Body 1 (A) and body 2 (B).
    pub bodies: Vec<BodySpec>,
    /// The motions, in order.
    pub stages: Vec<StageSpec>,
}

/// Contact models a case can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseModel {
    /// Fleischmann et al.'s spring–dashpot with the Hertzian factor `f = √(R̄ δ)` (Eq. 1),
    /// the engine's default law.
    Hertz,
    /// Fleischmann et al.'s spring–dashpot with `f = 1` (Eq. 1).
    Hooke,
    /// Kuhn, Suzuki & Daouadji's refined linear-frictional contact.
    Linear,
    /// Potyondy's hill model.
    Hill,
    /// Jäger's history-stack contact (Cattaneo–Mindlin–Deresiewicz).
    Jager,
}

/// `[contact]` of a case.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactSpec {
    /// `hertz`, `hooke`, `linear`, `hill` or `jager`.
    pub model: CaseModel,
    /// Hertz and Hooke: how the tangential displacement is kept, `true` (Eq. 3–4, default),
    /// `pseudo` (Eq. 5) or `none`.
    pub history: Option<crate::contact::HistoryMode>,
    /// Friction coefficient μ.
    pub friction: f64,
    /// Linear: PFC's effective modulus `E*` (Pa); `k_n = π r² E*/L` with `r = min(R₁, R₂)` and
    /// `L = R₁ + R₂` (`R₂` against a plane).
    pub effective_modulus: Option<f64>,
    /// Linear: `κ* = k_n/k_t` (default 1).
    pub stiffness_ratio: Option<f64>,
    /// Linear: normal stiffness given directly (N/m), instead of `effective_modulus`. Hertz
    /// and Hooke: Eq. 1's `k_n` (N/m² for Hertz, N/m for Hooke).
    pub kn: Option<f64>,
    /// Linear: tangential stiffness given directly (N/m). Hertz and Hooke: Eq. 1's `k_t`.
    pub kt: Option<f64>,
    /// Hertz and Hooke: Eq. 1's normal damping `γ_n` (1/(m·s) for Hertz, 1/s for Hooke;
    /// default 0; needs both bodies' `density`).
    pub gamma_n: Option<f64>,
    /// Hertz and Hooke: Eq. 1's tangential damping `γ_t` (default 0).
    pub gamma_t: Option<f64>,
    /// Linear: apply Kuhn's Eq. 23 twirl (default true).
    pub twirl: Option<bool>,
    /// Hill: damping constant `α_h` in [0, 1] (default 0).
    pub damping_constant: Option<f64>,
    /// Hill: suction ψ (Pa, default 0).
    pub suction: Option<f64>,
    /// Jäger: `|Δp_max|` for merging similar elastic segments, in [0, 2f] (default 0: exact).
    pub dp_max: Option<f64>,
    /// Jäger: most history points per contact (default 32, at least 3).
    pub capacity: Option<usize>,
}

/// Shape of a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyKind {
    /// A sphere of `radius` centred at `position`.
    #[default]
    Sphere,
    /// A fixed plane through `position` with unit `normal` (body 1 only, linear model only).
    Plane,
}

/// One `[[bodies]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// Sphere (default) or plane.
    #[serde(default)]
    pub kind: BodyKind,
    /// Sphere radius (m).
    pub radius: Option<f64>,
    /// Centre, or a point of the plane (m).
    pub position: [f64; 3],
    /// Plane normal, towards body 2.
    pub normal: Option<[f64; 3]>,
    /// Density (kg/m³); needed by the hill model and free stages.
    pub density: Option<f64>,
    /// Young's modulus (Pa), hill and Jäger models.
    pub young_modulus: Option<f64>,
    /// Poisson's ratio, hill and Jäger models.
    pub poisson_ratio: Option<f64>,
}

/// Moisture actions of the hill model (memo Table 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MoistureAction {
    /// `make_wet` with the stage's `moisture_gap`.
    Wet,
    /// `make_dry`.
    Dry,
}

/// One `[[stages]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageSpec {
    /// Label in the output.
    pub name: String,
    /// Steps in the stage (≥ 1).
    pub steps: u64,
    /// Translation of body 2 over the stage (m), at constant velocity.
    #[serde(default)]
    pub translate: [f64; 3],
    /// Rotation vector of body 2 about its centre over the stage (rad).
    #[serde(default)]
    pub rotate: [f64; 3],
    /// Rotation vector of the whole pair about the contact point over the stage (rad).
    #[serde(default)]
    pub rigid_rotation: [f64; 3],
    /// Release body 2: it moves under the contact force instead of the prescribed motion.
    #[serde(default)]
    pub free: bool,
    /// Local damping factor of a free stage (PFC's α; the memo uses 0.7).
    #[serde(default = "default_local_damping")]
    pub local_damping: f64,
    /// New friction coefficient from this stage on.
    pub friction: Option<f64>,
    /// New hill damping constant from this stage on.
    pub damping_constant: Option<f64>,
    /// Moisture action at the start of the stage (hill).
    pub moisture: Option<MoistureAction>,
    /// Moisture gap `g_m` of a `wet` action (m).
    #[serde(default)]
    pub moisture_gap: f64,
}

fn default_local_damping() -> f64 {
    0.7
}

/// One row of `contact.csv`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseRow {
    /// Step number from the start of the case.
    pub step: u64,
    /// Time of the step, `step × dt` (s).
    pub time_s: f64,
    /// Normal component of the force on body 2 (N), positive when repulsive.
    #[serde(rename = "normal_force_N")]
    pub normal_force: f64,
    /// Tangential force on body 2, x (N).
    #[serde(rename = "tangential_force_x_N")]
    pub tangential_force_x: f64,
    /// Tangential force on body 2, y (N).
    #[serde(rename = "tangential_force_y_N")]
    pub tangential_force_y: f64,
    /// Tangential force on body 2, z (N).
    #[serde(rename = "tangential_force_z_N")]
    pub tangential_force_z: f64,
    /// Elastic energy stored in the contact (J).
    #[serde(rename = "elastic_work_J")]
    pub elastic_work: f64,
    /// Work dissipated in the contact so far (J).
    #[serde(rename = "dissipated_work_J")]
    pub dissipated_work: f64,
    /// Work done on the contact by the relative motion so far (J).
    #[serde(rename = "contact_work_J")]
    pub contact_work: f64,
    /// Hill: normal surface force (N), compressive positive; linear: the normal force.
    #[serde(rename = "surface_normal_force_N")]
    pub surface_normal_force: f64,
    /// Hill: moisture force (N), tension positive.
    #[serde(rename = "moisture_force_N")]
    pub moisture_force: f64,
    /// Overlap (m), negative for a gap.
    #[serde(rename = "overlap_m")]
    pub overlap: f64,
    /// Jäger: points in the equivalent load history (0 for the other models).
    pub history_points: usize,
    /// Stage name.
    pub stage: String,
}

#[derive(Debug, Clone, Copy)]
struct Body {
    plane: bool,
    radius: f64,
    position: DVec3,
    normal: DVec3,
    mass: f64,
    inertia: f64,
    velocity: DVec3,
    spin: DVec3,
}

/// A case ready to run.
#[derive(Debug, Clone)]
pub struct ContactCase {
    config: CaseConfig,
    bodies: [Body; 2],
    model: CaseParams,
    /// Hill: the pair's effective moduli `(E_e, G_e)`.
    moduli: (f64, f64),
}

impl ContactCase {
    /// The model being driven.
    pub fn model(&self) -> CaseModel {
        self.config.contact.model
    }

    /// The time step (s).
    pub fn dt(&self) -> f64 {
        self.config.dt
    }

    /// Contact geometry at the current positions: (overlap, normal A→B, contact point).
    pub(super) fn geometry(&self) -> (f64, DVec3, DVec3) {
        let [a, b] = &self.bodies;
        if a.plane {
            let dn = (b.position - a.position).dot(a.normal);
            let overlap = b.radius - dn;
            (
                overlap,
                a.normal,
                b.position - a.normal * (b.radius - 0.5 * overlap),
            )
        } else {
            let d = b.position - a.position;
            let dist = d.length();
            let n = if dist > 0.0 { d / dist } else { DVec3::Z };
            let overlap = a.radius + b.radius - dist;
            (overlap, n, a.position + n * (a.radius - 0.5 * overlap))
        }
    }

    /// Runs every stage on the CPU reference; returns one row per step.
    pub fn run(&mut self) -> Vec<CaseRow> {
        let mut cpu = CpuEvaluator::default();
        match self.run_with(&mut cpu) {
            Ok(rows) => rows,
            Err(e) => unreachable!("the CPU evaluator does not fail: {e}"),
        }
    }

    /// The constants of the model as the case starts.
    pub fn initial_params(&self) -> CaseParams {
        self.model
    }

    /// Runs every stage with `evaluator` evaluating the contact; returns one row per step.
    pub fn run_with(&mut self, evaluator: &mut dyn CaseEvaluator) -> Result<Vec<CaseRow>> {
        let dt = self.config.dt;
        let mut rows = Vec::new();
        let mut step_no = 0;
        let mut work = 0.0;
        let mut last_force = DVec3::ZERO;
        let mut params = self.initial_params();
        let stages = self.config.stages.clone();
        for (index, stage) in stages.iter().enumerate() {
            params = self.stage_params(params, stage);
            let (overlap_now, ..) = self.geometry();
            let action = stage
                .moisture
                .map(|a| (a, -overlap_now, stage.moisture_gap));
            evaluator.configure(&params, action)?;
            let span = stage.steps as f64 * dt;
            let own_v = DVec3::from_array(stage.translate) / span;
            let own_w = DVec3::from_array(stage.rotate) / span;
            let rigid_w = DVec3::from_array(stage.rigid_rotation) / span;
            // A free stage starts body 2 from rest.
            let (v2, w2) = if stage.free {
                (DVec3::ZERO, DVec3::ZERO)
            } else {
                (own_v, own_w)
            };
            self.bodies[1].velocity = v2;
            self.bodies[1].spin = w2;
            self.bodies[0].velocity = DVec3::ZERO;
            self.bodies[0].spin = DVec3::ZERO;
            // Prescribed stages are evaluated as one batch; a free stage step by step, since
            // each step's motion depends on the last force.
            let batch = if stage.free { 1 } else { stage.steps };
            let mut done = 0;
            while done < stage.steps {
                let count = batch.min(stage.steps - done);
                let mut kin = Vec::with_capacity(count as usize);
                let mut arms = Vec::with_capacity(count as usize);
                for n in 0..count {
                    let (k, arm) = self.advance(rigid_w, dt);
                    let finite = k.overlap.is_finite()
                        && k.normal.is_finite()
                        && k.velocity.is_finite()
                        && k.displacement.is_finite()
                        && k.twirl.is_finite();
                    if !finite {
                        return Err(Error::BlowUp(format!(
                            "stage \"{}\" (stages[{index}]) moves the bodies out of what a computer holds at step {} (overlap {:e} m, relative velocity {} m/s); keep its translate, rotate and rigid_rotation at the scale of the bodies",
                            stage.name,
                            step_no + n + 1,
                            k.overlap,
                            k.velocity
                        )));
                    }
                    kin.push(k);
                    arms.push(arm);
                }
                let results = evaluator.evaluate(&kin)?;
                for ((k, arm), out) in kin.iter().zip(&arms).zip(&results) {
                    // Work on the contact: the force on B opposes B's motion into it.
                    work -= 0.5 * (last_force + out.force).dot(k.displacement);
                    last_force = out.force;
                    if stage.free {
                        self.release(out.force, *arm, stage.local_damping, dt);
                    }
                    step_no += 1;
                    let fn_total = out.force.dot(k.normal);
                    let ft = out.force - k.normal * fn_total;
                    rows.push(CaseRow {
                        step: step_no,
                        time_s: crate::output::step_time(step_no, dt),
                        normal_force: fn_total,
                        tangential_force_x: ft.x,
                        tangential_force_y: ft.y,
                        tangential_force_z: ft.z,
                        elastic_work: out.elastic,
                        dissipated_work: out.dissipated,
                        contact_work: work,
                        surface_normal_force: out.surface,
                        moisture_force: out.moisture,
                        overlap: k.overlap,
                        history_points: out.history,
                        stage: stage.name.clone(),
                    });
                }
                done += count;
            }
        }
        Ok(rows)
    }

    /// Moves the bodies one step and returns the contact's kinematics at the new positions
    /// (PFC's cycle) and body 2's lever arm to the contact point.
    pub(super) fn advance(&mut self, rigid_w: DVec3, dt: f64) -> (StepKinematics, DVec3) {
        // The rigid turn about the contact point, then body 2's own motion.
        let (_, _, pivot) = self.geometry();
        let turn = DQuat::from_scaled_axis(rigid_w * dt);
        for body in &mut self.bodies {
            body.position = pivot + turn * (body.position - pivot);
            body.normal = turn * body.normal;
        }
        self.bodies[1].position += self.bodies[1].velocity * dt;
        let (overlap, n, c) = self.geometry();
        let [a, b] = self.bodies;
        let va = rigid_w.cross(a.position - pivot) + rigid_w.cross(c - a.position);
        let vb = b.velocity
            + rigid_w.cross(b.position - pivot)
            + (b.spin + rigid_w).cross(c - b.position);
        let velocity = vb - va;
        (
            StepKinematics {
                overlap,
                normal: n,
                velocity,
                displacement: velocity * dt,
                twirl: 0.5 * (rigid_w + rigid_w + b.spin).dot(n) * dt,
            },
            c - b.position,
        )
    }

    /// Body 2 of a free stage moves under `force` with Cundall's local damping.
    pub(super) fn release(&mut self, force: DVec3, arm: DVec3, local_damping: f64, dt: f64) {
        let body = &mut self.bodies[1];
        let torque = arm.cross(force);
        body.velocity += local_damped(force, body.velocity, local_damping) / body.mass * dt;
        body.spin += local_damped(torque, body.spin, local_damping) / body.inertia * dt;
    }

    /// The model's constants from `stage` on.
    pub(super) fn stage_params(&self, params: CaseParams, stage: &StageSpec) -> CaseParams {
        let (r1, r2) = (self.bodies[0].radius, self.bodies[1].radius);
        let masses = (self.bodies[0].mass, self.bodies[1].mass);
        match params {
            CaseParams::Linear(p) => CaseParams::Linear(KuhnParams {
                friction: stage.friction.unwrap_or(p.friction),
                ..p
            }),
            CaseParams::SpringDashpot(model, p) => CaseParams::SpringDashpot(
                model,
                crate::contact::ContactParams {
                    friction: stage.friction.unwrap_or(p.friction),
                    ..p
                },
            ),
            CaseParams::Jager(p) => CaseParams::Jager(JagerParams {
                friction: stage.friction.unwrap_or(p.friction),
                ..p
            }),
            CaseParams::Hill(p) => CaseParams::Hill(HillParams::new(
                self.moduli.0,
                self.moduli.1,
                (r1, r2),
                masses,
                stage.damping_constant.unwrap_or(p.damping_constant),
                stage.friction.unwrap_or(p.friction),
                p.suction,
            )),
        }
    }
}

/// What `wgdem contact` reports in `summary.json` (keys in `docs/outputs.md`).
#[derive(Debug, Clone, Serialize)]
pub struct CaseSummary {
    /// Version, command line, input.
    #[serde(flatten)]
    pub provenance: crate::provenance::Provenance,
    /// `cpu` or `gpu`.
    pub backend: String,
    /// What evaluated the contact (`cpu`, or the GPU adapter).
    pub evaluator: String,
    /// The model driven.
    pub contact_model: CaseModel,
    /// Time step (s).
    pub dt_s: f64,
    /// Steps driven.
    pub steps: u64,
    /// The last row of each stage.
    pub stage_ends: Vec<CaseRow>,
}

/// Runs the case `text` (read from `file`) with `evaluator` on `backend` ("cpu" or "gpu"):
/// its rows and summary, also written to `out` (`contact.csv`, `summary.json`, `input.toml`)
/// when given, after taking the directory's lock (refused if it holds results, unless
/// `overwrite`).
pub fn run_case(
    text: &str,
    file: &str,
    evaluator: &mut dyn CaseEvaluator,
    backend: &str,
    out: Option<&Path>,
    overwrite: bool,
) -> Result<(CaseSummary, Vec<CaseRow>)> {
    let mut case = ContactCase::parse(text, file)?;
    let lock = out
        .map(|dir| crate::output::OutputLock::claim(dir, &ENTRIES, overwrite))
        .transpose()?;
    let rows = case.run_with(evaluator)?;
    let provenance = crate::provenance::Provenance::from_text(file, text, None);
    let summary = CaseSummary {
        provenance,
        backend: backend.to_owned(),
        evaluator: evaluator.name(),
        contact_model: case.model(),
        dt_s: case.dt(),
        steps: rows.last().map_or(0, |r| r.step),
        stage_ends: stage_ends(&rows).into_iter().cloned().collect(),
    };
    if let Some(dir) = out {
        write_csv(dir, &rows)?;
        summary.provenance.write_input(dir)?;
        crate::output::write_json(&dir.join("summary.json"), &summary)?;
    }
    drop(lock);
    Ok((summary, rows))
}

/// The last row of each stage, for reports.
pub fn stage_ends(rows: &[CaseRow]) -> Vec<&CaseRow> {
    let mut ends: Vec<&CaseRow> = Vec::new();
    for (k, row) in rows.iter().enumerate() {
        if rows.get(k + 1).is_none_or(|next| next.stage != row.stage) {
            ends.push(row);
        }
    }
    ends
}

/// What `wgdem contact` writes in its output directory (besides the lock).
pub const ENTRIES: [&str; 4] = [
    "contact.csv",
    "summary.json",
    "input.toml",
    crate::output::MANIFEST,
];

/// Writes `contact.csv` into `dir` (created if needed), atomically.
pub fn write_csv(dir: &Path, rows: &[CaseRow]) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let path = dir.join("contact.csv");
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in rows {
        w.serialize(row).map_err(|e| Error::Encode {
            path: path.clone(),
            message: e.to_string(),
        })?;
    }
    let bytes = w.into_inner().map_err(|e| Error::Encode {
        path: path.clone(),
        message: e.to_string(),
    })?;
    atomic_write(&path, &bytes)
}
