//! The direct shear configuration file (TOML) and its build into a box, a specimen and a
//! scene. Reference with every key: `docs/shear.md`.

use glam::DVec3;
use serde::{Deserialize, Serialize};

use crate::contact::{ContactModel, RelativeMotion, contact_force};
use crate::error::Error;
use crate::material::PairParams;
use crate::provenance::Provenance;
use crate::scene::{ContactConfig, MaterialConfig, Scene, SizeDistribution};

/// A whole direct shear file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShearConfig {
    /// Time stepping and outputs.
    pub simulation: ShearSimulationConfig,
    /// Contact law and history mode.
    pub contact: ContactConfig,
    /// Materials, referred to by name from `[specimen]` and `[box]`.
    pub materials: Vec<MaterialConfig>,
    /// The shear box.
    #[serde(rename = "box")]
    pub shear_box: BoxConfig,
    /// The particles and how the specimen is prepared.
    pub specimen: SpecimenConfig,
    /// Servo-controlled normal stress.
    pub consolidation: ConsolidationConfig,
    /// The shear stage.
    pub shear: ShearStageConfig,
    /// VTK snapshots and checkpoints.
    #[serde(default)]
    pub output: ShearOutputConfig,
}

/// `[simulation]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShearSimulationConfig {
    /// Time step (s); default `safety_factor × Δt_crit`.
    pub dt: Option<f64>,
    /// Fraction of the critical time step allowed, in (0, 1].
    #[serde(default = "crate::scene::default_safety")]
    pub safety_factor: f64,
    /// Seed of the specimen's random sizes and positions.
    #[serde(default)]
    pub seed: u64,
    /// Gravitational acceleration (m/s²).
    #[serde(default = "crate::scene::default_gravity")]
    pub gravity: [f64; 3],
    /// Simulated time between rows of `shear.csv` (s).
    pub output_interval: f64,
    /// Steps between servo updates (and GPU submits).
    #[serde(default = "default_control_interval")]
    pub control_interval_steps: u64,
    /// Speed (m/s) above which a sphere counts as blown up and the test stops; default 100 ×
    /// the largest expected speed (see `guard::default_max_speed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_speed: Option<f64>,
}

/// `[box]`: the lower box (bottom and four sides) moves along +x at the shear speed; the
/// upper box (four sides) is fixed; the top plate is servo-controlled along z.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoxConfig {
    /// Inside length along the shear direction x (m).
    pub length: f64,
    /// Inside width along y (m).
    pub width: f64,
    /// Height of the lower box (m): the shear plane is at its top, plus half the gap.
    pub lower_height: f64,
    /// Height of the upper box's sides (m); raised to hold the poured specimen if needed.
    pub upper_height: f64,
    /// Opening between the halves (m); keep it below the smallest diameter.
    #[serde(default)]
    pub gap: f64,
    /// Material of the plates (its friction is the wall friction).
    pub material: String,
}

/// How the specimen is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Rainfall: spheres placed at random in a loose column fall into the box under gravity.
    Pluviation,
    /// Radius expansion: spheres placed at reduced size in the box volume of the target void
    /// ratio grow to full size in steps.
    Expansion,
}

/// `[specimen]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecimenConfig {
    /// Material name.
    pub material: String,
    /// Number of spheres.
    pub count: u32,
    /// Size distribution (diameters).
    pub size: SizeDistribution,
    /// Preparation method.
    #[serde(default = "default_method")]
    pub method: Method,
    /// Inter-particle friction during preparation and consolidation (He et al.: 0 gives a
    /// dense specimen, 1 a loose one); default the material's own.
    pub preparation_friction: Option<f64>,
    /// Target void ratio, for `method = "expansion"`.
    pub target_void_ratio: Option<f64>,
    /// Radius increments of the expansion.
    #[serde(default = "default_increments")]
    pub expansion_increments: u32,
    /// Solid fraction of the random column the rain falls from.
    #[serde(default = "default_fill")]
    pub fill_fraction: f64,
    /// Preparation ends once the mean particle speed is below this (m/s).
    #[serde(default = "default_prep_speed")]
    pub settle_speed: f64,
    /// Longest preparation (s of simulated time).
    #[serde(default = "default_prep_time")]
    pub max_time: f64,
    /// Local (non-viscous) damping α during the preparation alone (Cundall's, PFC's
    /// `damp`; 0 to below 1, default 0): each component of a sphere's force loses α |F|
    /// against its velocity. It takes the energy of an expansion's growth out sooner (a
    /// frictional expansion of 10 000 spheres settled in 3 300 steps with 0.7 instead of
    /// 5 000), but also slows a free fall to (1 − α) g, so a pour gains little. Off from
    /// consolidation on, so the servo and the shear see the contacts' own damping alone.
    #[serde(default)]
    pub local_damping: f64,
    /// `--specimen`: largest overlap of two spheres of the saved packing, as a fraction of
    /// the smaller radius (default 0.1); a packing with more is refused.
    #[serde(default = "default_max_overlap")]
    pub max_overlap: f64,
}

fn default_max_overlap() -> f64 {
    crate::packing::DEFAULT_MAX_OVERLAP
}

/// When the friction becomes the materials' own, where `specimen.preparation_friction` is
/// another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrictionChange {
    /// Once consolidated; the specimen then settles again under the servo with the new
    /// friction before shear starts.
    #[default]
    Resettle,
    /// When shear starts: the shear meets the packing as it was consolidated with the
    /// preparation friction (He et al. 2020 set μ "initially" for preparation and
    /// consolidation and 0.1 "in the shear stage").
    AtShear,
}

/// `[consolidation]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsolidationConfig {
    /// Target normal stress σ_n on the top plate (Pa).
    pub normal_stress: f64,
    /// Consolidation ends when |σ − σ_n| / σ_n stays below this for `settle_rows` rows.
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// Rows the stress must stay within tolerance.
    #[serde(default = "default_settle_rows")]
    pub settle_rows: u32,
    /// ... and the mean particle speed below this (m/s); default a fifth of the shear speed.
    pub settle_speed: Option<f64>,
    /// Longest consolidation (s of simulated time).
    #[serde(default = "default_consolidation_time")]
    pub max_time: f64,
    /// Servo gain as the fraction of the force error removed per control interval, in
    /// (0, 1] (PFC's α); the stiffness it divides by is estimated from the contact law.
    #[serde(default = "default_gain")]
    pub servo_gain: f64,
    /// When the friction changes from the preparation friction to the materials' own.
    #[serde(default)]
    pub friction_change: FrictionChange,
}

/// `[shear]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShearStageConfig {
    /// Speed of the lower box along +x (m/s).
    pub speed: f64,
    /// Shear displacement at which the test ends (m).
    pub displacement: f64,
}

/// `[output]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShearOutputConfig {
    /// VTK snapshots during shear (besides those at the end of each stage).
    #[serde(default = "default_snapshots")]
    pub vtk_snapshots: u32,
    /// Rows between checkpoints (also written at the end of every stage).
    #[serde(default = "default_checkpoint_rows")]
    pub checkpoint_rows: u32,
    /// The least wall-clock time between two checkpoints taken on the row count (s; default
    /// 120; 0: every `checkpoint_rows` rows). See [`crate::checkpoint::Pace`].
    #[serde(default = "default_checkpoint_seconds")]
    pub checkpoint_seconds: f64,
    /// What the snapshots carry (`[output.vtk]`: `particle_fields`, `contacts`, `walls`).
    #[serde(default)]
    pub vtk: crate::snapshot::VtkContent,
}

impl Default for ShearOutputConfig {
    fn default() -> Self {
        Self {
            vtk_snapshots: default_snapshots(),
            checkpoint_rows: default_checkpoint_rows(),
            checkpoint_seconds: default_checkpoint_seconds(),
            vtk: crate::snapshot::VtkContent::default(),
        }
    }
}

pub(super) fn default_control_interval() -> u64 {
    20
}
pub(super) fn default_method() -> Method {
    Method::Pluviation
}
pub(super) fn default_increments() -> u32 {
    10
}
pub(super) fn default_fill() -> f64 {
    0.3
}
pub(super) fn default_prep_speed() -> f64 {
    0.01
}
pub(super) fn default_prep_time() -> f64 {
    5.0
}
pub(super) fn default_tolerance() -> f64 {
    0.01
}
pub(super) fn default_settle_rows() -> u32 {
    5
}
pub(super) fn default_consolidation_time() -> f64 {
    2.0
}
pub(super) fn default_gain() -> f64 {
    0.5
}
pub(super) fn default_snapshots() -> u32 {
    10
}
pub(super) fn default_checkpoint_rows() -> u32 {
    50
}
pub(super) fn default_checkpoint_seconds() -> f64 {
    crate::checkpoint::DEFAULT_CHECKPOINT_SECONDS
}

/// Wall indices of the box, in the order they are built.
pub mod walls {
    /// Bottom plate (moves with the lower box).
    pub const BOTTOM: usize = 0;
    /// The lower box: bottom, four sides and the lip of its trailing (−x) side.
    pub const LOWER: [usize; 6] = [0, 1, 2, 3, 4, LOWER_LIP];
    /// The upper box: four sides and the lip of its leading (+x) side.
    pub const UPPER: [usize; 5] = [5, 6, 7, 8, UPPER_LIP];
    /// The servo-controlled top plate.
    pub const TOP: usize = 9;
    /// Horizontal plate at the top of the lower box's −x side, reaching outwards by the shear
    /// displacement: as the lower box moves, it closes the opening that appears under the
    /// upper box's −x end (the top face of a real box's wall).
    pub const LOWER_LIP: usize = 10;
    /// Horizontal plate at the bottom of the upper box's +x side, reaching outwards by the
    /// shear displacement: it closes the part of the lower box that moves out from under the
    /// upper box.
    pub const UPPER_LIP: usize = 11;
}

/// A validated configuration with its built scene.
#[derive(Debug, Clone)]
pub struct ShearSetup {
    /// The configuration.
    pub config: ShearConfig,
    /// The configuration file's text (a checkpoint resumes only with the same).
    pub text: String,
    /// Version, command line, the configuration as run (scaled, defaults filled in) and seed,
    /// for `summary.json` and `input.toml`.
    pub provenance: Provenance,
    /// The scene at time 0: particles, box, pair table for preparation.
    pub scene: Scene,
    /// Pair table during preparation and consolidation (specimen friction replaced).
    pub preparation_pairs: Vec<PairParams>,
    /// Pair table during shear (the materials as given).
    pub shear_pairs: Vec<PairParams>,
    /// Box cross-section `length × width` (m²).
    pub area: f64,
    /// Mean diameter of the specimen (m).
    pub mean_diameter: f64,
    /// Particle density (kg/m³).
    pub density: f64,
    /// Estimated stiffness of the top plate against the specimen (N/m), for the servo gain.
    pub plate_stiffness: f64,
    /// Height of the upper box's top (m).
    pub box_top: f64,
    /// Height of the expansion box, for `method = "expansion"` (m).
    pub expansion_height: Option<f64>,
    /// Radius factor per expansion increment.
    pub expansion_factor: f64,
}

impl ShearConfig {
    /// The same test with `count` spheres drawn from the same size distribution: the box's
    /// length, width and both heights and the shear displacement are scaled by
    /// `(count / specimen.count)^(1/3)`, so that the specimen keeps its shape, its packing and
    /// the shear strain it is taken to. Materials, normal stress, shear speed (and so the
    /// inertial number), time step, settling criteria and the gap between the halves (a
    /// fraction of a diameter) are kept. Gravity's share of the vertical stress at the bottom
    /// grows with the height, by the same factor. So do the bounds on the settling stages
    /// (`specimen.max_time`, `consolidation.max_time`; never shrunk): a taller specimen takes
    /// longer to fall, to sink and to carry the plate's stress to its bottom (at 300 to
    /// 10 000 spheres a pour's preparation grew as f^0.5, a frictionless expansion's as
    /// f^1.3, a consolidation's as f^1.24; docs/performance.md, "Settling at scale"), and a
    /// bound met first ends the stage unsettled.
    pub fn scaled_to(&self, count: u32) -> ShearConfig {
        let f = (f64::from(count) / f64::from(self.specimen.count)).cbrt();
        let mut c = self.clone();
        let b = &mut c.shear_box;
        b.length *= f;
        b.width *= f;
        b.lower_height *= f;
        b.upper_height *= f;
        c.shear.displacement *= f;
        c.specimen.max_time *= f.max(1.0);
        c.consolidation.max_time *= f.max(1.0);
        c.specimen.count = count;
        c
    }
}

impl ShearSetup {
    /// Control interval T (s).
    pub fn control_period(&self) -> f64 {
        self.config.simulation.control_interval_steps as f64 * self.scene.simulation.dt
    }

    /// Shear rate γ̇ (1/s) of the inertial number: the shear speed over a shear band of ten
    /// mean diameters (or the specimen height if smaller).
    pub fn shear_rate(&self, height: f64) -> f64 {
        self.config.shear.speed / (10.0 * self.mean_diameter).min(height.max(1e-12))
    }
}

/// Errors of the generated scene, named after this file's fields.
pub(super) fn rename_fields(e: Error) -> Error {
    match e {
        Error::Invalid {
            file,
            field,
            message,
        } => Error::Invalid {
            file,
            field: field
                .replace("particles[0]", "specimen")
                .replace("walls[0].material", "box.material"),
            message,
        },
        other => other,
    }
}

/// Stiffness of the top plate against the specimen's top layer (N/m) at the target stress:
/// `A / (2 R)²` contacts, each carrying its share of the force, with the tangent stiffness of
/// the contact law there (found by bisection on the law itself). The specimen below is softer
/// in series, so this over-estimates the stiffness, which keeps the servo stable.
pub fn plate_stiffness(
    law: crate::contact::ContactLaw,
    pair: &PairParams,
    radius: f64,
    density: f64,
    area: f64,
    stress: f64,
) -> f64 {
    let mass = density * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3);
    let params = pair.contact_params(mass, radius);
    let model = ContactModel {
        law,
        history: crate::contact::HistoryMode::True,
    };
    let still = RelativeMotion {
        velocity: DVec3::ZERO,
        displacement: DVec3::ZERO,
    };
    let force = |delta: f64| {
        contact_force(model, delta, DVec3::Z, still, DVec3::ZERO, &params).normal_force
    };
    let n = (area / (4.0 * radius * radius)).max(1.0);
    let f = stress * area / n;
    let (mut lo, mut hi) = (0.0, radius);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if force(mid) < f {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let delta = hi.max(1e-12);
    let k = (force(delta * 1.001) - force(delta * 0.999)) / (0.002 * delta);
    n * k.max(f / delta)
}
