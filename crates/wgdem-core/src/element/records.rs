//! What a periodic-cell test records: its stages, the rows of `cell.csv`, the driver state a
//! checkpoint keeps, and the summary.

use glam::{DMat3, DQuat, DVec3};
use serde::{Deserialize, Serialize};

use crate::provenance::Provenance;
use crate::snapshot::Series;

/// Stage of a periodic-cell test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stage {
    /// The gas compressed isotropically to the confining stress, then held there.
    Compaction,
    /// The loading path.
    Loading,
    /// Finished.
    Done,
}

impl Stage {
    /// Name in `cell.csv`.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Compaction => "compaction",
            Stage::Loading => "loading",
            Stage::Done => "done",
        }
    }
}

/// One row of `cell.csv` (SI units, as the column names say; stresses and strains
/// compression positive; tensors as their six components of the symmetric part).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Steps taken since the start of the test.
    pub step: u64,
    /// Simulated time, `step × dt` (s).
    pub time_s: f64,
    /// Stage name.
    pub stage: String,
    /// `−∫ D dt` since the start of the stage (`D` the symmetric part of `L`): the
    /// logarithmic strain where the axes stay the principal ones.
    pub strain_xx: f64,
    /// As `strain_xx`.
    pub strain_yy: f64,
    /// As `strain_xx`.
    pub strain_zz: f64,
    /// As `strain_xx` (a tensor component: half the engineering shear strain).
    pub strain_yz: f64,
    /// As `strain_yz`.
    pub strain_xz: f64,
    /// As `strain_yz`.
    pub strain_xy: f64,
    /// `−ln(V / V₀)`, `V₀` the cell's volume at the start of the stage.
    pub volumetric_strain: f64,
    /// The path's strain since the start of loading: axial `strain_xx`, or simple shear's
    /// `γ = ∫ L_xz dt`; 0 during compaction.
    pub loading_strain: f64,
    /// Love–Weber stress (symmetric part).
    #[serde(rename = "stress_xx_Pa")]
    pub stress_xx_pa: f64,
    /// As `stress_xx_Pa`.
    #[serde(rename = "stress_yy_Pa")]
    pub stress_yy_pa: f64,
    /// As `stress_xx_Pa`.
    #[serde(rename = "stress_zz_Pa")]
    pub stress_zz_pa: f64,
    /// As `stress_xx_Pa`.
    #[serde(rename = "stress_yz_Pa")]
    pub stress_yz_pa: f64,
    /// As `stress_xx_Pa`.
    #[serde(rename = "stress_xz_Pa")]
    pub stress_xz_pa: f64,
    /// As `stress_xx_Pa`.
    #[serde(rename = "stress_xy_Pa")]
    pub stress_xy_pa: f64,
    /// Mean stress `tr σ / 3`.
    #[serde(rename = "p_Pa")]
    pub p_pa: f64,
    /// `√(3 J₂)`.
    #[serde(rename = "q_Pa")]
    pub q_pa: f64,
    /// The path's stress ratio: `q/p`, or `τ / σ_zz` in simple shear (`τ = −σ_xz`).
    pub stress_ratio: f64,
    /// The path's mobilised friction angle (docs/cell.md).
    pub friction_angle_deg: f64,
    /// `V / V_solids − 1`.
    pub void_ratio: f64,
    /// `2 N_c / N_p` over touching pairs.
    pub coordination_number: f64,
    /// Touching pairs, each counted once (Kuhn & Jäger count "about 8600 contacts").
    pub contacts: u64,
    /// Fraction of the last step's contacts at the Coulomb limit.
    pub sliding_fraction: f64,
    /// Octahedral anisotropy Ψ of the contact-normal fabric (He et al. Eq. 32–34).
    pub fabric_anisotropy: f64,
    /// Work the contacts have dissipated since the start (Kuhn's accounting; NaN for laws
    /// without it).
    #[serde(rename = "contact_dissipated_work_J")]
    pub contact_dissipated_work_j: f64,
    /// Mean length (points) of the Jäger contacts' equivalent load histories (Kuhn & Jäger
    /// Table 1's "average length of equivalent history"); NaN without Jäger contacts.
    pub history_points_mean: f64,
    /// The longest of them (0 without Jäger contacts); a history that reaches the pair's
    /// `capacity` has been shortened by forced merges.
    pub history_points_max: u64,
    /// Translational plus rotational kinetic energy of the fluctuations.
    #[serde(rename = "kinetic_energy_J")]
    pub kinetic_energy_j: f64,
    /// The cell's volume.
    #[serde(rename = "cell_volume_m3")]
    pub cell_volume_m3: f64,
    /// The spheres' mean net force over the mean contact force
    /// ([`crate::analysis::unbalanced_force_ratio`]); what `compaction.max_unbalanced` bounds.
    pub unbalanced_force_ratio: f64,
}

/// Columns of `cell.csv`.
pub const HEADER: [&str; 32] = [
    "step",
    "time_s",
    "stage",
    "strain_xx",
    "strain_yy",
    "strain_zz",
    "strain_yz",
    "strain_xz",
    "strain_xy",
    "volumetric_strain",
    "loading_strain",
    "stress_xx_Pa",
    "stress_yy_Pa",
    "stress_zz_Pa",
    "stress_yz_Pa",
    "stress_xz_Pa",
    "stress_xy_Pa",
    "p_Pa",
    "q_Pa",
    "stress_ratio",
    "friction_angle_deg",
    "void_ratio",
    "coordination_number",
    "contacts",
    "sliding_fraction",
    "fabric_anisotropy",
    "contact_dissipated_work_J",
    "history_points_mean",
    "history_points_max",
    "kinetic_energy_J",
    "cell_volume_m3",
    "unbalanced_force_ratio",
];

/// Everything the driver keeps between output intervals (saved in checkpoints).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriverState {
    /// Current stage.
    pub stage: Stage,
    /// Time the stage began (s).
    pub stage_start: f64,
    /// The compaction has passed half its target from the gas (the servo's own rate now).
    pub gas_compressed: bool,
    /// The friction was switched to the materials' own.
    pub friction_switched: bool,
    /// Consecutive rows that met the compaction's criteria.
    pub settled_rows: u32,
    /// `−∫ D dt` since the start of the stage.
    pub strain: DMat3,
    /// `∫ L_xz dt` since the start of the stage.
    pub shear_strain: f64,
    /// The cell's volume at the start of the stage (m³).
    pub stage_volume: f64,
    /// Positions and orientations the VTK displacement and rotation are measured from
    /// (start of the test, then start of loading).
    pub reference: (Vec<DVec3>, Vec<DQuat>),
    /// The series so far.
    pub rows: Vec<Row>,
    /// ParaView snapshots written (`vtk/cell.pvd`).
    pub series: Series,
    /// The compaction ended on its time limit rather than on its criteria.
    pub compaction_timed_out: bool,
    /// Wall-clock seconds of stepping so far, over all sessions.
    pub wall_seconds: f64,
    /// Of them, the loading's.
    pub loading_wall_seconds: f64,
    /// Of those, the seconds the CPU reference spent computing contact forces
    /// ([`crate::cpu::Simulation::force_seconds`]).
    pub loading_force_seconds: f64,
    /// Steps at the start of loading.
    pub loading_start_steps: u64,
    /// What the probes found, once made.
    pub probes: Option<super::probes::ProbeSummary>,
    /// What the conventional algorithm's probes found (`probes.conventional`).
    pub probes_conventional: Option<super::probes::ProbeSummary>,
    /// What the rigid rotation found (`[rotation]`).
    pub rotation: Option<super::rotation::RotationSummary>,
    /// The same without the linear pairs' twirl (`rotation.without_twirl`).
    pub rotation_without_twirl: Option<super::rotation::RotationSummary>,
}

/// What a finished test reports (`summary.json`; keys in `docs/cell.md`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellSummary {
    /// Version, command line, input and seed.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// Number of particles.
    pub n_particles: usize,
    /// Backend that ran the steps.
    pub backend: String,
    /// Normal contact law (`[contact] law`).
    pub contact_law: String,
    /// Tangential history mode.
    pub history: String,
    /// `loading.path`.
    pub path: String,
    /// Confining stress (Pa).
    #[serde(rename = "mean_stress_target_Pa")]
    pub mean_stress_target_pa: f64,
    /// Void ratio at the start of loading.
    pub initial_void_ratio: f64,
    /// Contacts per sphere at the start of loading.
    pub initial_coordination_number: f64,
    /// Largest stress ratio (a running mean over three rows), `q/p` or `τ/σ`.
    pub peak_stress_ratio: f64,
    /// The friction angle of the same rows (deg).
    pub peak_friction_angle_deg: f64,
    /// Loading strain at the peak.
    pub strain_at_peak: f64,
    /// Stress ratio of the last row.
    pub final_stress_ratio: f64,
    /// Volumetric strain of the last row (compression positive).
    pub final_volumetric_strain: f64,
    /// Largest dilatancy rate `−dε_v / dε` (ε the loading strain), fitted over a tenth of the
    /// loading rows; positive: dilation.
    pub max_dilatancy_rate: f64,
    /// Mean |σ − σ*| / σ* of the held normal stresses over the loading rows after the first
    /// tenth of the strain reached (NaN with no such row).
    pub held_stress_error_mean_fraction: f64,
    /// The largest of the same.
    pub held_stress_error_max_fraction: f64,
    /// The fraction of the same rows in which a held stress was off its target by the
    /// servo's band (`servo.band` × p₀) or more: the servo moving it at `servo.max_rate`,
    /// which a specimen that dilates or contracts faster outruns (NaN with no such row).
    pub servo_at_rate_bound_fraction: f64,
    /// The strain probes' findings (`[probes]`), `null` without them.
    pub probes: Option<super::probes::ProbeSummary>,
    /// The same with the conventional linear-frictional algorithm (`probes.conventional`).
    pub probes_conventional: Option<super::probes::ProbeSummary>,
    /// The rigid rotation's stress before and after (`[rotation]`), `null` without one.
    pub rotation: Option<super::rotation::RotationSummary>,
    /// The same without the linear pairs' twirl (`rotation.without_twirl`).
    pub rotation_without_twirl: Option<super::rotation::RotationSummary>,
    /// The compaction ended on its time limit.
    pub compaction_timed_out: bool,
    /// Steps of the compaction (the friction switch's resettling included).
    pub compaction_steps: u64,
    /// Steps of the loading.
    pub loading_steps: u64,
    /// Steps taken.
    pub steps: u64,
    /// Time step (s).
    pub dt_s: f64,
    /// Wall-clock seconds of stepping (all sessions of a resumed run).
    pub wall_clock_s: f64,
    /// Particle-steps per wall-clock second.
    pub particle_steps_per_s: f64,
    /// Wall-clock seconds of the loading's steps (all sessions).
    pub loading_wall_clock_s: f64,
    /// Of them, the seconds spent computing contact forces (the neighbour list's upkeep,
    /// the integration and the servo excluded): Kuhn & Jäger's Table 1 compares both.
    pub loading_force_wall_clock_s: f64,
    /// The Jäger contacts' equivalent load histories during loading, `null` without them.
    pub jager_histories: Option<HistorySummary>,
}

/// The Jäger histories of a loading (Kuhn & Jäger, Section 5 and Table 1: the memory peaks
/// during inelastic loading before the peak stress; the table gives the average length
/// there).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistorySummary {
    /// Loading strain of the row whose contacts held the most history points in all
    /// (`contacts × history_points_mean`).
    pub strain_at_most_points: f64,
    /// Contacts in that row.
    pub contacts_at_most_points: u64,
    /// Their mean history length (points).
    pub mean_points_at_most_points: f64,
    /// The mean history length over the loading's rows.
    pub mean_points_over_loading: f64,
    /// The longest history of any row.
    pub longest_points: u64,
}

/// Progress after each row.
#[derive(Debug, Clone)]
pub struct CellProgress<'a> {
    /// Stage.
    pub stage: Stage,
    /// The row just written.
    pub row: &'a Row,
    /// Simulated time since the stage began (s).
    pub stage_time: f64,
    /// The compaction's time limit (s).
    pub compaction_max_time: f64,
    /// Consecutive compaction rows within tolerance, and how many end the stage.
    pub settled_rows: (u32, u32),
    /// The confining stress (Pa).
    pub mean_stress_target: f64,
    /// The loading strain the test ends at.
    pub target_strain: f64,
}
