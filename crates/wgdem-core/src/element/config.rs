//! The periodic-cell test's configuration file (TOML) and its build into a gas of spheres in a
//! periodic cube. Reference with every key: `docs/cell.md`.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::material::PairParams;
use crate::provenance::Provenance;
use crate::scene::{
    CellConfig, ContactConfig, MaterialConfig, ParticleGroup, RegionConfig, Scene, SceneConfig,
    SimulationConfig, SizeDistribution, Validator, build_scene, sample_diameters,
};
use crate::shear::ShearOutputConfig;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::paths::LoadingPath;
use super::probes::ProbesConfig;
use super::rotation::RotationConfig;

/// A whole periodic-cell test file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellTestConfig {
    /// Time stepping and outputs.
    pub simulation: CellSimulationConfig,
    /// Contact law and history mode.
    pub contact: ContactConfig,
    /// Materials, referred to by name from `[specimen]`.
    pub materials: Vec<MaterialConfig>,
    /// The spheres and the gas they start as.
    pub specimen: CellSpecimenConfig,
    /// Isotropic compaction to the confining stress.
    pub compaction: CompactionConfig,
    /// The cell's stress servo.
    #[serde(default)]
    pub servo: CellServoConfig,
    /// The loading path.
    pub loading: LoadingConfig,
    /// Strain probes at a stress ratio of the loading (triaxial paths).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probes: Option<ProbesConfig>,
    /// A rigid rotation of the assembly at the end of the loading (Kuhn, Suzuki & Daouadji's
    /// Fig. 6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation: Option<RotationConfig>,
    /// VTK snapshots and checkpoints (as a shear file's `[output]`).
    #[serde(default)]
    pub output: ShearOutputConfig,
}

/// `[simulation]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellSimulationConfig {
    /// Time step (s); default `safety_factor × Δt_crit`.
    pub dt: Option<f64>,
    /// Fraction of the critical time step estimate allowed, in (0, 1]. Default 0.05: the
    /// estimate is one contact's, and a dense loaded packing's rotational modes need a
    /// smaller step (docs/scene.md).
    #[serde(default = "default_safety")]
    pub safety_factor: f64,
    /// Seed of the specimen's random sizes and positions.
    #[serde(default)]
    pub seed: u64,
    /// Simulated time between rows of `cell.csv` (s).
    pub output_interval: f64,
    /// Steps between the servo's updates of the velocity gradient.
    #[serde(default = "default_control_interval")]
    pub control_interval_steps: u64,
    /// Cundall's local damping coefficient (–): with no walls, what takes the kinetic energy
    /// of a quasi-static test out (PFC's default 0.7).
    #[serde(default = "default_damping")]
    pub local_damping: f64,
    /// Speed (m/s) above which a sphere counts as blown up; default as for scenes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_speed: Option<f64>,
}

/// `[specimen]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellSpecimenConfig {
    /// Material name.
    pub material: String,
    /// Number of spheres.
    pub count: u32,
    /// Size distribution (diameters).
    pub size: SizeDistribution,
    /// Solid fraction of the gas the spheres are placed in at random (–); sets the cube's edge.
    #[serde(default = "default_solid_fraction")]
    pub solid_fraction: f64,
    /// Inter-particle friction during compaction (0 gives a dense specimen); default the
    /// material's own.
    pub preparation_friction: Option<f64>,
}

/// `[compaction]`: the gas is compressed isotropically to `mean_stress`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactionConfig {
    /// The confining stress `p₀` (Pa), held through the loading where the path holds one.
    pub mean_stress: f64,
    /// The rate (1/s) the gas is compressed at until its mean stress reaches half the target;
    /// the servo's `max_rate` after that.
    #[serde(default = "default_gas_rate")]
    pub gas_rate: f64,
    /// Each normal stress within this fraction of the target ends the compaction (–).
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// Consecutive rows within tolerance and below `settle_speed` that end it.
    #[serde(default = "default_settle_rows")]
    pub settle_rows: u32,
    /// Mean translational sphere speed (m/s, rotation left out) below which the packing
    /// counts as at rest; default the loading's strain rate times the mean diameter (the
    /// affine speed across a sphere).
    pub settle_speed: Option<f64>,
    /// An unbalanced force ratio (–, the spheres' mean net force over the mean contact force,
    /// `cell.csv`'s `unbalanced_force_ratio`) below which the packing also counts as at rest,
    /// whatever its speed: for nearly frictionless packings, whose spheres keep creeping
    /// (their non-affine speeds far above the affine ones) while the servo holds the stress
    /// quasi-statically. Default none: the speed alone decides.
    pub max_unbalanced: Option<f64>,
    /// Longest compaction (s of simulated time, both frictions together); the loading starts
    /// anyway after it, with a warning and `compaction_timed_out` in the summary.
    #[serde(default = "default_compaction_time")]
    pub max_time: f64,
}

/// `[servo]`: [`crate::cell_servo::CellServo`]'s constants for the held stresses.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellServoConfig {
    /// The largest rate (1/s) a held component moves at. The stress answers a strain of the
    /// cell once a wave has crossed it, so too fast a servo rings (docs/cell.md).
    #[serde(default = "default_max_rate")]
    pub max_rate: f64,
    /// The proportional band as a fraction of `compaction.mean_stress` (–).
    #[serde(default = "default_band")]
    pub band: f64,
}

impl Default for CellServoConfig {
    fn default() -> Self {
        Self {
            max_rate: default_max_rate(),
            band: default_band(),
        }
    }
}

/// `[loading]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadingConfig {
    /// The path ([`LoadingPath`]).
    pub path: LoadingPath,
    /// The prescribed rate (1/s): axial compression along x, or the shear rate `γ̇ = L_xz`.
    pub strain_rate: f64,
    /// The loading strain the test ends at (–): axial (compression positive), or `γ`.
    pub strain: f64,
    /// Cundall's local damping (–, in [0, 1)) once the compaction with the preparation
    /// friction has ended: the settling with the materials' friction, then the loading; default
    /// `simulation.local_damping`. Its `sign(v)` term turns resting spheres' small movements
    /// back and forth, which Jäger contacts record in their histories (docs/cell.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_damping: Option<f64>,
}

impl LoadingConfig {
    /// The local damping of the loading.
    pub fn damping(&self, simulation: &CellSimulationConfig) -> f64 {
        self.local_damping.unwrap_or(simulation.local_damping)
    }
}

fn default_safety() -> f64 {
    0.05
}
fn default_control_interval() -> u64 {
    10
}
fn default_damping() -> f64 {
    0.7
}
fn default_solid_fraction() -> f64 {
    0.2
}
fn default_gas_rate() -> f64 {
    1.0
}
fn default_tolerance() -> f64 {
    0.01
}
fn default_settle_rows() -> u32 {
    5
}
fn default_compaction_time() -> f64 {
    5.0
}
fn default_max_rate() -> f64 {
    0.1
}
fn default_band() -> f64 {
    0.05
}

/// A parsed, validated and built test.
#[derive(Debug, Clone)]
pub struct CellSetup {
    /// The configuration's text as read (checkpoints are bound to it).
    pub text: String,
    /// Version, command line, input and seed.
    pub provenance: Provenance,
    /// The file.
    pub config: CellTestConfig,
    /// The gas in its periodic cube.
    pub scene: Scene,
    /// The pair table of the compaction (the preparation friction).
    pub preparation_pairs: Vec<PairParams>,
    /// The materials' own pair table.
    pub loading_pairs: Vec<PairParams>,
    /// Mean diameter (m).
    pub mean_diameter: f64,
    /// Solid volume of the spheres (m³).
    pub solid_volume: f64,
}

impl CellSetup {
    /// Parses and builds TOML text; `file` names the source in errors.
    pub fn parse(text: &str, file: &str) -> Result<Self> {
        let config: CellTestConfig = crate::scene::parse_toml(text, file)?;
        build(config, text, file).map_err(|e| crate::scene::with_line(e, text))
    }

    /// The mean speed (m/s) below which the packing counts as at rest.
    pub fn settle_speed(&self) -> f64 {
        let c = &self.config;
        c.compaction
            .settle_speed
            .unwrap_or(c.loading.strain_rate * self.mean_diameter)
    }
}

fn build(config: CellTestConfig, text: &str, file: &str) -> Result<CellSetup> {
    let v = Validator { file };
    check_config(&v, &config)?;
    let s = &config.specimen;
    let mut rng = ChaCha8Rng::seed_from_u64(config.simulation.seed);
    let diameters = sample_diameters(&v, "specimen.size", &s.size, s.count, &mut rng)?;
    let solid: f64 = diameters
        .iter()
        .map(|d| std::f64::consts::PI / 6.0 * d * d * d)
        .sum();
    let d_max = diameters.iter().copied().fold(0.0, f64::max);
    let mean_diameter = diameters.iter().sum::<f64>() / diameters.len().max(1) as f64;
    let side = (solid / s.solid_fraction).cbrt();
    // Compacted to a solid fraction of about 0.64 the edge shrinks by (0.64 / φ)^(1/3); the
    // cell must then stay wider than twice the neighbour reach (about a diameter and a skin).
    let compacted = side * (s.solid_fraction / 0.64).cbrt();
    // NaN (from a size at f64's edge) is refused too.
    if compacted.is_nan() || compacted <= 3.0 * d_max {
        // The edge grows as the cube root of the count.
        let needed = (f64::from(s.count) * (3.0 * d_max / compacted).powi(3)).ceil();
        return Err(v.err(
            "specimen.count",
            format!(
                "{} spheres make a compacted cell about {compacted:.3e} m wide, less than three of the largest diameter ({d_max:.3e} m): the periodic images would touch; use at least about {needed:.0} spheres",
                s.count
            ),
        ));
    }
    // The spheres are placed a largest diameter clear of the far faces: the region they are
    // placed in holds them at a higher solid fraction than the cell's.
    let placed = s.solid_fraction * (side / (side - d_max)).powi(3);
    if placed.is_nan() || placed > 0.35 {
        return Err(v.err(
            "specimen.solid_fraction",
            format!(
                "{} puts {} spheres at a solid fraction of {placed:.2} in the part of the cell they are placed in (a largest diameter clear of its far faces), where random placement jams; lower it or use more spheres",
                s.solid_fraction, s.count
            ),
        ));
    }
    let scene_config = gas_scene(&config, side, d_max);
    let mut scene = build_scene(scene_config, file).map_err(rename_fields)?;
    let l = &config.loading;
    let longest = config.compaction.max_time + l.strain / l.strain_rate;
    crate::guard::check_steps(
        file,
        "simulation.dt",
        longest,
        scene.simulation.dt,
        "the stages' longest times (compaction.max_time + loading.strain / loading.strain_rate) over the time step; check loading.strain_rate and the materials' density and young_modulus",
    )?;
    let (preparation_pairs, loading_pairs) =
        crate::shear::stage_pairs(s.preparation_friction, &mut scene);
    let provenance = Provenance::new(file, &config, Some(config.simulation.seed))?;
    Ok(CellSetup {
        text: text.to_owned(),
        provenance,
        scene,
        preparation_pairs,
        loading_pairs,
        mean_diameter,
        solid_volume: solid,
        config,
    })
}

fn check_config(v: &Validator, config: &CellTestConfig) -> Result<()> {
    v.checkpoint_seconds(config.output.checkpoint_seconds)?;
    let s = &config.specimen;
    if s.count == 0 {
        return Err(v.err("specimen.count", "must be at least 1".to_owned()));
    }
    if !(s.solid_fraction > 0.0 && s.solid_fraction <= 0.3) {
        return Err(v.err(
            "specimen.solid_fraction",
            format!(
                "{} is outside (0, 0.3]; random placement in the cube jams above that (default 0.2)",
                s.solid_fraction
            ),
        ));
    }
    if let Some(mu) = s.preparation_friction
        && !(mu.is_finite() && mu >= 0.0)
    {
        return Err(v.err(
            "specimen.preparation_friction",
            format!("{mu} must be ≥ 0 (0 gives a dense specimen)"),
        ));
    }
    let c = &config.compaction;
    v.positive("compaction.mean_stress", c.mean_stress, "Pa")?;
    v.positive("compaction.gas_rate", c.gas_rate, "1/s")?;
    v.positive("compaction.tolerance", c.tolerance, "1")?;
    v.positive("compaction.max_time", c.max_time, "s")?;
    if let Some(speed) = c.settle_speed {
        v.positive("compaction.settle_speed", speed, "m/s")?;
    }
    if let Some(most) = c.max_unbalanced {
        v.positive("compaction.max_unbalanced", most, "1")?;
    }
    v.positive("servo.max_rate", config.servo.max_rate, "1/s")?;
    v.positive("servo.band", config.servo.band, "1")?;
    let l = &config.loading;
    v.positive("loading.strain_rate", l.strain_rate, "1/s")?;
    v.positive("loading.strain", l.strain, "1")?;
    if let Some(alpha) = l.local_damping
        && !(0.0..1.0).contains(&alpha)
    {
        return Err(v.err(
            "loading.local_damping",
            format!("{alpha} is outside [0, 1); use 0 (none) or e.g. 0.7"),
        ));
    }
    if l.path.compresses() && l.strain >= 0.5 {
        return Err(v.err(
            "loading.strain",
            format!(
                "{} is an axial strain of 50 % or more; element tests end well before (e.g. 0.1)",
                l.strain
            ),
        ));
    }
    if let Some(p) = &config.probes {
        if !matches!(
            l.path,
            LoadingPath::DrainedTriaxial | LoadingPath::ConstantP
        ) {
            return Err(v.err(
                "probes",
                format!(
                    "are axisymmetric probes in the Rendulic plane, made from a triaxial state; loading.path = \"{}\" is not one (use \"drained_triaxial\" or \"constant_p\")",
                    l.path.name()
                ),
            ));
        }
        v.positive("probes.at_stress_ratio", p.at_stress_ratio, "1")?;
        if p.directions < 4 || !p.directions.is_multiple_of(2) {
            return Err(v.err(
                "probes.directions",
                format!(
                    "{} must be even (each probe has its opposite) and at least 4; use e.g. 72 (the default)",
                    p.directions
                ),
            ));
        }
        v.positive("probes.magnitude", p.magnitude, "1")?;
        if p.magnitude > 1e-3 {
            return Err(v.err(
                "probes.magnitude",
                format!(
                    "{} is no small probe; use e.g. 6e-6 (the default)",
                    p.magnitude
                ),
            ));
        }
        if p.conventional && !has_linear_pairs(config) {
            return Err(v.err(
                "probes.conventional",
                "compares the conventional linear-frictional algorithm with the refined one: it needs a [[contact.pairs]] entry with model = \"linear\"".to_owned(),
            ));
        }
        for (field, steps) in [
            ("probes.steps", p.steps),
            ("probes.hold_steps", p.hold_steps),
        ] {
            if steps == Some(0) {
                return Err(v.err(field, "must be at least 1".to_owned()));
            }
        }
    }
    if let Some(r) = &config.rotation {
        if !(r.angle_deg.is_finite() && r.angle_deg != 0.0 && r.angle_deg.abs() <= 360.0) {
            return Err(v.err(
                "rotation.angle_deg",
                format!(
                    "{} is no turn; give an angle in degrees, nonzero and at most 360 (the paper's 90)",
                    r.angle_deg
                ),
            ));
        }
        if r.increments == 0 {
            return Err(v.err(
                "rotation.increments",
                "must be at least 1 (the paper's 1000)".to_owned(),
            ));
        }
        if r.without_twirl && !has_linear_pairs(config) {
            return Err(v.err(
                "rotation.without_twirl",
                "turns off the twirl of linear contacts: it needs a [[contact.pairs]] entry with model = \"linear\"".to_owned(),
            ));
        }
    }
    let sim = &config.simulation;
    v.positive("simulation.output_interval", sim.output_interval, "s")?;
    if sim.control_interval_steps == 0 {
        return Err(v.err(
            "simulation.control_interval_steps",
            format!(
                "must be at least 1 (default {})",
                default_control_interval()
            ),
        ));
    }
    Ok(())
}

/// Whether some `[[contact.pairs]]` entry is Kuhn's linear contact.
fn has_linear_pairs(config: &CellTestConfig) -> bool {
    (config.contact.pairs.iter()).any(|pair| pair.model == crate::scene::PairModelName::Linear)
}

/// The spheres at random in a periodic cube of edge `side`, a largest diameter clear of the
/// far faces so that no pair overlaps through them.
fn gas_scene(config: &CellTestConfig, side: f64, d_max: f64) -> SceneConfig {
    let sim = &config.simulation;
    let s = &config.specimen;
    let inner = side - d_max;
    SceneConfig {
        simulation: SimulationConfig {
            duration: 1.0,
            output_interval: sim.output_interval,
            dt: sim.dt,
            safety_factor: sim.safety_factor,
            seed: sim.seed,
            gravity: [0.0; 3],
            local_damping: sim.local_damping,
            max_speed: sim.max_speed,
            allow_overlap: None,
        },
        contact: config.contact.clone(),
        materials: config.materials.clone(),
        // The test writes its own snapshots ([output] of the cell file).
        output: Default::default(),
        loads: Vec::new(),
        cell: Some(CellConfig {
            edges: [[side, 0.0, 0.0], [0.0, side, 0.0], [0.0, 0.0, side]],
            origin: [0.0; 3],
            velocity_gradient: [[0.0; 3]; 3],
        }),
        particles: vec![ParticleGroup::Random {
            material: s.material.clone(),
            count: s.count,
            region: RegionConfig {
                min: [0.0; 3],
                max: [inner; 3],
            },
            size: s.size.clone(),
            max_attempts: 5000,
        }],
        walls: Vec::new(),
    }
}

/// Errors of the generated scene, named after this file's fields. The gas's count is checked
/// before, so a count the random placement refuses is a gas too dense to place: it names
/// `specimen.solid_fraction`, which sets the region the spheres are placed in.
fn rename_fields(e: Error) -> Error {
    match e {
        Error::Invalid {
            file,
            field,
            message,
        } if field == "particles[0].count" => Error::Invalid {
            file,
            field: "specimen.solid_fraction".to_owned(),
            message: format!(
                "{message}. In a periodic-cell test the region is the cell at this solid fraction: lower specimen.solid_fraction (spheres of nearly one size jam near 0.3 where they are placed)"
            ),
        },
        Error::Invalid {
            file,
            field,
            message,
        } => Error::Invalid {
            file,
            field: field.replace("particles[0]", "specimen"),
            message,
        },
        other => other,
    }
}
