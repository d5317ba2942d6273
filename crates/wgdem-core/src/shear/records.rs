//! What a direct shear test records: its stages, the rows of `shear.csv`, the snapshots, the
//! driver state a checkpoint keeps, and the summary.

use glam::{DQuat, DVec3};
use serde::{Deserialize, Serialize};

use super::servo::Servo;
use crate::provenance::Provenance;
use crate::snapshot::Series;

/// Stage of a direct shear test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stage {
    /// Pluviation or radius expansion.
    Preparation,
    /// Servo-controlled normal stress, no shear.
    Consolidation,
    /// Lower box moving.
    Shear,
    /// Finished.
    Done,
}

impl Stage {
    /// Name in `shear.csv`.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Preparation => "preparation",
            Stage::Consolidation => "consolidation",
            Stage::Shear => "shear",
            Stage::Done => "done",
        }
    }
}

/// One row of `shear.csv` (SI units, as the column names say).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Steps taken since the start of the test.
    pub step: u64,
    /// Simulated time, `step × dt` (s).
    pub time_s: f64,
    /// Stage name.
    pub stage: String,
    /// Lower box displacement since the start of shear, `d_h`.
    pub shear_displacement_m: f64,
    /// `d_h / L` (He et al. Eq. 22).
    pub shear_strain: f64,
    /// Force along x the specimen exerts on the upper box and the top plate.
    #[serde(rename = "shear_force_N")]
    pub shear_force_n: f64,
    /// Force along z the specimen exerts on the top plate.
    #[serde(rename = "normal_force_N")]
    pub normal_force_n: f64,
    /// Shear force over the nominal area `L × W`.
    #[serde(rename = "shear_stress_Pa")]
    pub shear_stress_pa: f64,
    /// Normal force over `L × W`.
    #[serde(rename = "normal_stress_Pa")]
    pub normal_stress_pa: f64,
    /// `F / N` (He et al. Eq. 23 takes its arctangent).
    pub stress_ratio: f64,
    /// Rise of the top plate since the start of shear.
    pub vertical_displacement_m: f64,
    /// `atan(Δd_v / Δd_h)` over the last rows of shear (positive: dilation).
    pub dilation_angle_deg: f64,
    /// `V_voids / V_solids` between the bottom and the top plate (or the highest sphere).
    pub void_ratio: f64,
    /// `2 N_c / N_p` (He et al. Eq. 27).
    pub coordination_number: f64,
    /// Octahedral anisotropy Ψ of the contact-normal fabric (He et al. Eq. 32–34).
    pub fabric_anisotropy: f64,
    /// `γ̇ d √(ρ / σ)` with `γ̇` the shear speed over ten mean diameters.
    pub inertial_number: f64,
    /// Translational plus rotational kinetic energy.
    #[serde(rename = "kinetic_energy_J")]
    pub kinetic_energy_j: f64,
}

/// Everything the driver keeps between output intervals (saved in checkpoints).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriverState {
    /// Current stage.
    pub stage: Stage,
    /// Time the stage began (s).
    pub stage_start: f64,
    /// The friction was switched to the shear values.
    pub friction_switched: bool,
    /// Radius increments done (expansion).
    pub expansions: u32,
    /// Time of the last radius increment (s).
    pub last_expansion: f64,
    /// Consecutive rows that met the consolidation criteria.
    pub settled_rows: u32,
    /// Servo state.
    pub servo: Servo,
    /// Lower-box x and top-plate z at the start of shear (m).
    pub shear_origin: Option<(f64, f64)>,
    /// Positions and orientations the VTK displacement and rotation are measured from
    /// (start of the run, then start of shear).
    pub reference: (Vec<DVec3>, Vec<DQuat>),
    /// The series so far.
    pub rows: Vec<Row>,
    /// ParaView snapshots written (`vtk/shear.pvd`).
    pub series: Series,
    /// Void ratio at the end of preparation.
    pub preparation_void_ratio: Option<f64>,
    /// Consolidation ended on its time limit rather than on its criteria.
    pub consolidation_timed_out: bool,
    /// Wall-clock seconds of stepping so far, over all sessions.
    pub wall_seconds: f64,
    /// Steps at the start of shear.
    pub shear_start_steps: u64,
}

/// What a finished test reports (`summary.json`; keys in `docs/outputs.md`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShearSummary {
    /// Version, command line, input and seed.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// Number of particles.
    pub n_particles: usize,
    /// Backend that ran the steps.
    pub backend: String,
    /// GPU adapter, for the GPU backend.
    pub adapter: Option<String>,
    /// Device memory the GPU engine held at the end, per sphere (bytes); `null` on the CPU.
    pub gpu_bytes_per_particle: Option<f64>,
    /// Normal contact law of the specimen (`[contact] law`).
    pub contact_law: String,
    /// Tangential history mode.
    pub history: String,
    /// Void ratio at the end of preparation.
    pub preparation_void_ratio: f64,
    /// Void ratio at the start of shear (the last consolidation row's).
    pub initial_void_ratio: f64,
    /// Target normal stress (Pa).
    #[serde(rename = "normal_stress_target_Pa")]
    pub normal_stress_target_pa: f64,
    /// Largest |σ − σ_n| / σ_n over the shear rows.
    pub normal_stress_error_max_fraction: f64,
    /// Largest stress ratio, from a running mean over five rows.
    pub peak_stress_ratio: f64,
    /// `atan` of the peak stress ratio (deg).
    pub peak_friction_angle_deg: f64,
    /// Mean stress ratio over the last fifth of the shear displacement.
    pub residual_stress_ratio: f64,
    /// `atan` of the residual stress ratio (deg).
    pub residual_friction_angle_deg: f64,
    /// Largest dilation angle, `atan(d d_v / d d_h)` fitted over a tenth of the shear rows
    /// (negative when the specimen only contracts).
    pub max_dilation_angle_deg: f64,
    /// Rise of the top plate over the whole shear (m; negative: contraction).
    pub final_vertical_displacement_m: f64,
    /// Largest inertial number during shear.
    pub max_inertial_number: f64,
    /// Consolidation ended on its time limit.
    pub consolidation_timed_out: bool,
    /// Steps of the preparation (0 from a saved specimen).
    pub preparation_steps: u64,
    /// Steps of the consolidation, the friction switch's resettling included.
    pub consolidation_steps: u64,
    /// Steps of the shear.
    pub shear_steps: u64,
    /// Mean sphere speed `√(2 E_k / Σm)` at the end of preparation (m/s), the quantity
    /// `specimen.settle_speed` bounds; `null` from a saved specimen.
    pub preparation_mean_speed_m_per_s: Option<f64>,
    /// Whether the preparation ended settled (mean speed below `specimen.settle_speed`) rather
    /// than on `specimen.max_time`; `null` from a saved specimen.
    pub preparation_settled: Option<bool>,
    /// Steps taken.
    pub steps: u64,
    /// Time step (s).
    pub dt_s: f64,
    /// Wall-clock seconds of stepping (all sessions of a resumed run).
    pub wall_clock_s: f64,
    /// Particle-steps per wall-clock second.
    pub particle_steps_per_s: f64,
}

/// Progress after each row.
#[derive(Debug, Clone)]
pub struct ShearProgress<'a> {
    /// Stage.
    pub stage: Stage,
    /// The row just written.
    pub row: &'a Row,
    /// Target shear displacement (m).
    pub target_displacement: f64,
    /// Simulated time since the stage began (s).
    pub stage_time: f64,
    /// The stage's time limit (s): `specimen.max_time`, `consolidation.max_time`; `None` for
    /// the shear, which ends at its displacement.
    pub stage_max_time: Option<f64>,
    /// Consolidation: consecutive rows within tolerance, and how many end the stage.
    pub settled_rows: (u32, u32),
    /// Consolidation's target normal stress (Pa).
    pub normal_stress_target: f64,
}

/// Columns of `shear.csv`.
pub const HEADER: [&str; 17] = [
    "step",
    "time_s",
    "stage",
    "shear_displacement_m",
    "shear_strain",
    "shear_force_N",
    "normal_force_N",
    "shear_stress_Pa",
    "normal_stress_Pa",
    "stress_ratio",
    "vertical_displacement_m",
    "dilation_angle_deg",
    "void_ratio",
    "coordination_number",
    "fabric_anisotropy",
    "inertial_number",
    "kinetic_energy_J",
];
