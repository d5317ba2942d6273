//! Scene files (TOML): the schema, its validation and the build into a [`Simulation`].
//!
//! All quantities are SI: metres, kilograms, seconds, pascals, newtons. Unknown keys are
//! rejected. The full reference with an example of every field is `docs/scene.md`.
//!
//! ```toml
//! [simulation]
//! duration = 0.5               # s, simulated time
//! output_interval = 0.01       # s, between rows of timeseries.csv and snapshots
//! dt = 1e-5                    # s, optional; default safety_factor × critical step
//! safety_factor = 0.2          # optional, (0, 1]
//! seed = 42                    # optional, random insertion
//! gravity = [0.0, 0.0, -9.81]  # m/s², optional
//!
//! [contact]
//! law = "hertz"                # "hooke" | "hertz"
//! history = "true"             # "true" | "pseudo" | "none"
//! characteristic_velocity = 1.0  # m/s, optional
//! damping = "viscoelastic"     # optional; "tsuji": restitution independent of impact speed
//!
//! [[materials]]
//! name = "glass"
//! density = 2550.0             # kg/m³
//! friction = 0.18
//! young_modulus = 4e7          # Pa   } elastic constants ...
//! poisson_ratio = 0.22         #      }
//! restitution = 0.5            #      }
//! # kn = 1e12, kt = 8e11, gamma_n = 40.0, gamma_t = 20.0   ... or Eq. 1's constants
//! ```

use std::collections::{HashMap, HashSet};
use std::path::Path;

use glam::DVec3;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};
use serde::{Deserialize, Serialize};

use crate::contact::model::{LinearStiffness, PairModel};
use crate::contact::{ContactLaw, ContactModel, Damping, HistoryMode};
use crate::cpu::{MoistureEvent, Simulation, critical_time_step};
use crate::error::{Error, Result};
use crate::material::{Material, PairParams, Stiffness};
use crate::particles::Particles;
use crate::wall::{Wall, WallShape};

mod build;
mod particles;
mod placement;
mod validate;

pub use build::{build_scene, build_scene_with, steps_per_output};
pub use particles::lognormal_by_mass;
pub(crate) use particles::sample_diameters;
use particles::*;
pub(crate) use validate::Validator;

/// A whole scene file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneConfig {
    /// Time stepping, outputs and body forces.
    pub simulation: SimulationConfig,
    /// Contact law and history mode.
    pub contact: ContactConfig,
    /// Materials, referred to by name.
    pub materials: Vec<MaterialConfig>,
    /// Particle groups.
    #[serde(default)]
    pub particles: Vec<ParticleGroup>,
    /// Walls.
    #[serde(default)]
    pub walls: Vec<WallConfig>,
    /// Loads and constraints on particles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loads: Vec<crate::loads::LoadConfig>,
    /// ParaView snapshots: how often and what they carry.
    #[serde(default)]
    pub output: OutputConfig,
    /// A periodic cell (`[cell]`), in place of or beside walls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<CellConfig>,
}

/// `[cell]`: a parallelepiped periodic along its three edges ([`crate::cell`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellConfig {
    /// The three edge vectors `a`, `b`, `c` (m), right-handed (`a · (b × c) > 0`).
    pub edges: [[f64; 3]; 3],
    /// The corner the edges start from (m); default the origin.
    #[serde(default)]
    pub origin: [f64; 3],
    /// The velocity gradient `L` by rows, `L_ij = ∂v_i/∂x_j` (1/s); the cell deforms as
    /// `Ḣ = L H`. Default zero (a fixed cell).
    #[serde(default)]
    pub velocity_gradient: [[f64; 3]; 3],
}

/// `[output]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputConfig {
    /// Simulated time between ParaView snapshots (s); default `simulation.output_interval`;
    /// 0 writes none.
    pub vtk_interval: Option<f64>,
    /// What the snapshots carry (`[output.vtk]`).
    #[serde(default)]
    pub vtk: crate::snapshot::VtkContent,
    /// Rows of `timeseries.csv` between checkpoints (also written at the end; default 50).
    #[serde(default = "default_checkpoint_rows")]
    pub checkpoint_rows: u32,
    /// The least wall-clock time between two checkpoints taken on the row count (s; default
    /// 120; 0: every `checkpoint_rows` rows). See [`crate::checkpoint::Pace`].
    #[serde(default = "default_checkpoint_seconds")]
    pub checkpoint_seconds: f64,
}

impl Default for OutputConfig {
    fn default() -> Self {
        Self {
            vtk_interval: None,
            vtk: crate::snapshot::VtkContent::default(),
            checkpoint_rows: default_checkpoint_rows(),
            checkpoint_seconds: default_checkpoint_seconds(),
        }
    }
}

fn default_checkpoint_rows() -> u32 {
    50
}

fn default_checkpoint_seconds() -> f64 {
    crate::checkpoint::DEFAULT_CHECKPOINT_SECONDS
}

/// `[simulation]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationConfig {
    /// Simulated time (s).
    pub duration: f64,
    /// Interval between outputs (s).
    pub output_interval: f64,
    /// Time step (s); default `safety_factor × Δt_crit`.
    pub dt: Option<f64>,
    /// Fraction of the critical time step allowed, in (0, 1].
    #[serde(default = "default_safety")]
    pub safety_factor: f64,
    /// Seed of the random insertion.
    #[serde(default)]
    pub seed: u64,
    /// Gravitational acceleration (m/s²).
    #[serde(default = "default_gravity")]
    pub gravity: [f64; 3],
    /// Cundall's local damping factor α in [0, 1) (PFC's; 0.7 for quasi-static problems;
    /// default 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub local_damping: f64,
    /// Speed (m/s) above which a sphere counts as blown up and the run stops; default 100 ×
    /// the largest expected speed (see `guard::default_max_speed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_speed: Option<f64>,
    /// Largest initial overlap allowed between two spheres, as a fraction of the smaller
    /// radius (default 0.1): deeper ones would be thrown apart on the first step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_overlap: Option<f64>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Default fraction of the critical time step (also the shear tests').
pub(crate) fn default_safety() -> f64 {
    0.2
}
/// Default gravity, m/s² (also the shear tests').
pub(crate) fn default_gravity() -> [f64; 3] {
    [0.0, 0.0, -9.81]
}
fn default_v_char() -> f64 {
    1.0
}
fn is_default_damping(d: &Damping) -> bool {
    *d == Damping::default()
}

/// `[contact]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactConfig {
    /// Normal law, Fleischmann Eq. 1.
    pub law: ContactLaw,
    /// Tangential history mode.
    pub history: HistoryMode,
    /// Impact speed at which elastic materials' restitution is matched (m/s).
    #[serde(default = "default_v_char")]
    pub characteristic_velocity: f64,
    /// How the spring–dashpot's dashpots scale with overlap: `viscoelastic` (Eq. 1 as written,
    /// the default) or `tsuji` (the same restitution at every impact speed; elastic materials).
    #[serde(default, skip_serializing_if = "is_default_damping")]
    pub damping: Damping,
    /// Contact models chosen per material pair; pairs not listed use `law` and `history`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<PairConfig>,
    /// Moisture events of hill contacts (`make_wet` / `make_dry`, Potyondy memo Table 6).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moisture: Vec<MoistureConfig>,
}

/// Contact models a material pair can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PairModelName {
    /// The scene's Fleischmann spring–dashpot (`[contact] law, history`).
    Spring,
    /// Kuhn, Suzuki & Daouadji's refined linear-frictional contact.
    Linear,
    /// Potyondy's hill model.
    Hill,
    /// Jäger's history-stack contact.
    Jager,
}

/// `[[contact.pairs]]`: the contact model of one material pair (either order).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairConfig {
    /// The two material names (may be the same).
    pub materials: [String; 2],
    /// The model.
    pub model: PairModelName,
    /// Linear: normal stiffness (N/m), with `kt`.
    pub kn: Option<f64>,
    /// Linear: tangential stiffness (N/m), with `kn`.
    pub kt: Option<f64>,
    /// Linear: PFC effective modulus E* (Pa), instead of `kn`/`kt`.
    pub effective_modulus: Option<f64>,
    /// Linear: PFC stiffness ratio κ* = k_n/k_t (default 1).
    pub stiffness_ratio: Option<f64>,
    /// Linear: apply Kuhn's Eq. 23 twirl (default true).
    pub twirl: Option<bool>,
    /// Linear: Kuhn's refinements 1–3 (default true); false is the conventional algorithm,
    /// for comparisons (CPU reference only).
    pub refined: Option<bool>,
    /// Hill: damping constant α_h in [0, 1] (default 0).
    pub damping_constant: Option<f64>,
    /// Hill: suction ψ (Pa, default 0).
    pub suction: Option<f64>,
    /// Jäger: `|Δp_max|` in [0, 2μ] (default 0).
    pub dp_max: Option<f64>,
    /// Jäger: history capacity in points (default 32).
    pub capacity: Option<usize>,
    /// Rolling resistance (spring pairs): `cdt` (Ai et al.'s type A) or `epsd` (type C).
    pub rolling: Option<crate::contact::rolling::RollingModel>,
    /// Rolling friction coefficient μ_r ≥ 0 (with `rolling`).
    pub rolling_friction: Option<f64>,
    /// Rolling stiffness k_r (N·m/rad, `epsd`; default `2.25 k_n μ_r² R_r²`).
    pub rolling_stiffness: Option<f64>,
    /// Rolling damping ratio η_r in [0, 1] (`epsd`, default 0).
    pub rolling_damping: Option<f64>,
}

/// Moisture actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MoistureAction {
    /// `make_wet`: hill contacts with a gap up to `gap` become wet.
    Wet,
    /// `make_dry`: every hill contact becomes dry.
    Dry,
}

/// `[[contact.moisture]]`: a moisture event.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoistureConfig {
    /// Simulated time of the event (s, default 0).
    #[serde(default)]
    pub time: f64,
    /// `wet` or `dry`.
    pub action: MoistureAction,
    /// Moisture gap `g_m` of `wet` (m, default 0: touching contacts only).
    #[serde(default)]
    pub gap: f64,
}

/// `[[materials]]`: either elastic constants or Eq. 1's constants.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialConfig {
    /// Unique name.
    pub name: String,
    /// Density (kg/m³); required for materials that particles use.
    pub density: Option<f64>,
    /// Coulomb friction coefficient μ ≥ 0.
    pub friction: f64,
    /// Young's modulus E (Pa).
    pub young_modulus: Option<f64>,
    /// Poisson's ratio ν, in (−1, 0.5).
    pub poisson_ratio: Option<f64>,
    /// Restitution coefficient e, in (0, 1].
    pub restitution: Option<f64>,
    /// Normal stiffness `k_n` (N/m Hooke, N/m² Hertz).
    pub kn: Option<f64>,
    /// Tangential stiffness `k_t`.
    pub kt: Option<f64>,
    /// Normal damping `γ_n` (1/s Hooke, 1/(m·s) Hertz).
    pub gamma_n: Option<f64>,
    /// Tangential damping `γ_t`.
    pub gamma_t: Option<f64>,
}

/// `[[particles]]`: a group of spheres of one material.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum ParticleGroup {
    /// Spheres listed one by one.
    Explicit {
        /// Material name.
        material: String,
        /// The spheres.
        spheres: Vec<SphereConfig>,
    },
    /// A regular cubic lattice.
    Lattice {
        /// Material name.
        material: String,
        /// Sphere radius (m).
        radius: f64,
        /// Centre of the first sphere (m).
        origin: [f64; 3],
        /// Spheres along x, y, z.
        counts: [u32; 3],
        /// Centre-to-centre spacing (m); default one diameter.
        spacing: Option<f64>,
        /// Initial velocity of every sphere (m/s).
        #[serde(default)]
        velocity: [f64; 3],
        /// Keep only the first `count` spheres in lattice order (x fastest, then y, then z),
        /// as LAMMPS's `create_atoms` followed by `delete_atoms` of the higher ids; default all.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u32>,
        /// Move each sphere by a random vector, each component uniform in [−jitter, jitter]
        /// (m), drawn from `simulation.seed` (LAMMPS's `displace_atoms random`); default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        jitter: Option<f64>,
    },
    /// Random sequential insertion without overlap inside a box region.
    Random {
        /// Material name.
        material: String,
        /// Number of spheres.
        count: u32,
        /// Box that holds the whole spheres.
        region: RegionConfig,
        /// Size distribution (diameters).
        size: SizeDistribution,
        /// Tries per sphere before giving up.
        #[serde(default = "default_attempts")]
        max_attempts: u32,
    },
    /// Spheres read from a packing file: CSV (`x,y,z,radius[,vx,vy,vz,wx,wy,wz,material]`, or
    /// wgdem's own particle and specimen CSVs), wgdem's `.vtu`, or a LAMMPS/LIGGGHTS data
    /// (`atom_style sphere`) or dump file, told apart by extension (`.csv`, `.vtu`, `.data`
    /// or `.lmp`, `.dump`).
    File {
        /// Material of the spheres (of those the file gives none for, with `types`); needed
        /// only where a sphere has no material of its own.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        material: Option<String>,
        /// The file, relative to the scene file.
        path: String,
        /// The file's format (`csv`, `vtu`, `lammps-data`, `lammps-dump`); default: from its
        /// extension, or else its content (LIGGGHTS names files `dump.particles`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        format: Option<crate::packing::PackingFormat>,
        /// LAMMPS atom type k → material `types[k − 1]` (default: every sphere `material`).
        /// A wgdem file's `material` column holds the scene's material indices or names.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        types: Vec<String>,
        /// Largest overlap of two spheres, as a fraction of the smaller radius (default 0.1);
        /// a packing with more is refused.
        #[serde(default = "default_max_overlap")]
        max_overlap: f64,
        /// BLAKE3 of the file's bytes (64 hex digits). The input as run (`input.toml`, and the
        /// input hash of checkpoints) records it beside the file's absolute path, so that the
        /// input names exactly the spheres it ran; a scene that gives it refuses a file whose
        /// bytes differ.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        blake3: Option<String>,
    },
}

fn default_max_overlap() -> f64 {
    crate::packing::DEFAULT_MAX_OVERLAP
}

fn default_attempts() -> u32 {
    2000
}

/// One explicit sphere.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SphereConfig {
    /// Centre (m).
    pub position: [f64; 3],
    /// Radius (m).
    pub radius: f64,
    /// Velocity (m/s).
    #[serde(default)]
    pub velocity: [f64; 3],
    /// Angular velocity (rad/s).
    #[serde(default)]
    pub angular_velocity: [f64; 3],
    /// Hold the angular velocity fixed (no contact torque acts on the spin).
    #[serde(default)]
    pub fix_spin: bool,
}

/// An axis-aligned box.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionConfig {
    /// Lower corner (m).
    pub min: [f64; 3],
    /// Upper corner (m).
    pub max: [f64; 3],
}

/// Sphere diameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "distribution", rename_all = "lowercase", deny_unknown_fields)]
pub enum SizeDistribution {
    /// All spheres of one diameter.
    Mono {
        /// Diameter (m).
        diameter: f64,
    },
    /// Diameters uniform (by number) in a range.
    Uniform {
        /// Smallest diameter (m).
        min_diameter: f64,
        /// Largest diameter (m).
        max_diameter: f64,
    },
    /// Log-normal gradation given by mass: median diameter D50 and uniformity Cu = D60/D10.
    Lognormal {
        /// Median diameter by mass (m).
        d50: f64,
        /// Coefficient of uniformity D60/D10 ≥ 1.
        cu: f64,
        /// Smallest diameter kept (m); default the number median × e^{−3σ}.
        min_diameter: Option<f64>,
        /// Largest diameter kept (m); default the number median × e^{3σ}.
        max_diameter: Option<f64>,
    },
    /// A gradation table (sieve curve): percent by mass finer than each diameter, linear
    /// between points in log d. The first entry is the smallest size (0 %), the last the
    /// largest (100 %).
    Table {
        /// Sieve sizes, increasing (m).
        diameters: Vec<f64>,
        /// Percent by mass passing each size, non-decreasing from 0 to 100.
        percent_passing: Vec<f64>,
    },
}

/// `[[walls]]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum WallConfig {
    /// An infinite plane; particles live on the side the normal points to.
    Plane {
        /// Name used in outputs.
        name: String,
        /// Material name.
        material: String,
        /// A point of the plane (m).
        point: [f64; 3],
        /// Normal towards the particles (normalised on load).
        normal: [f64; 3],
        /// Prescribed velocity (m/s).
        #[serde(default)]
        velocity: [f64; 3],
        /// Velocity piecewise linear in time instead (`{ times, values }`, m/s).
        velocity_schedule: Option<crate::loads::VectorConfig>,
    },
    /// A finite rectangle, contact on both faces and its edges.
    Plate {
        /// Name used in outputs.
        name: String,
        /// Material name.
        material: String,
        /// Centre (m).
        center: [f64; 3],
        /// Normal (normalised on load).
        normal: [f64; 3],
        /// First in-plane axis, orthogonal to the normal (normalised on load).
        u_axis: [f64; 3],
        /// Half lengths along `u_axis` and `normal × u_axis` (m).
        half_extents: [f64; 2],
        /// Prescribed velocity (m/s).
        #[serde(default)]
        velocity: [f64; 3],
        /// Velocity piecewise linear in time instead (`{ times, values }`, m/s).
        velocity_schedule: Option<crate::loads::VectorConfig>,
    },
}

/// A scene built and ready to run.
#[derive(Debug, Clone)]
pub struct Scene {
    /// The simulation at time 0.
    pub simulation: Simulation,
    /// Simulated time to run (s).
    pub duration: f64,
    /// Interval between outputs (s).
    pub output_interval: f64,
    /// Critical time step estimate (s), see [`critical_time_step`].
    pub critical_dt: f64,
    /// Largest allowed step, `safety_factor × critical_dt` (s).
    pub max_dt: f64,
    /// Materials, in file order.
    pub materials: Vec<Material>,
    /// The configuration it was built from.
    pub config: SceneConfig,
    /// The file (or other source) it was read from, as named to [`build_scene`].
    pub source: String,
}

impl SceneConfig {
    /// Parses TOML text; `file` names the source in errors.
    pub fn parse(text: &str, file: &str) -> Result<Self> {
        parse_toml(text, file)
    }

    /// Reads and parses a scene file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Self::parse(&text, &path.display().to_string())
    }
}

/// Parses TOML text into `T`; errors name the file, line and field path.
pub fn parse_toml<T: serde::de::DeserializeOwned>(text: &str, file: &str) -> Result<T> {
    let de = toml::Deserializer::parse(text).map_err(|e| parse_error(file, text, "", &e))?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        parse_error(file, text, &field, e.inner())
    })
}

fn parse_error(file: &str, text: &str, field: &str, e: &toml::de::Error) -> Error {
    let line = e
        .span()
        .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
        .unwrap_or(0);
    let field = if field.is_empty() || field == "." {
        "(document)".to_owned()
    } else {
        field.to_owned()
    };
    Error::Parse {
        file: file.to_owned(),
        line,
        field,
        message: e.message().replace('\n', " ").trim().to_owned(),
    }
}

/// The 1-based line of `field` (a dotted path such as `loads[0].force` or
/// `particles[1].spheres[2].radius`) in the TOML `text`, where the text has it.
pub fn field_line(text: &str, field: &str) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let root = DeTable::parse(text).ok()?;
    let mut span = root.span();
    let mut value: Option<&DeValue<'_>>;
    let mut table = Some(root.get_ref());
    for part in field.split('.') {
        let (key, indices) = match part.find('[') {
            Some(at) => (&part[..at], &part[at..]),
            None => (part, ""),
        };
        let (_, v) = table?.iter().find(|(k, _)| k.get_ref().as_ref() == key)?;
        span = v.span();
        value = Some(v.get_ref());
        for index in indices.split(']').filter(|x| !x.is_empty()) {
            let k: usize = index.trim_start_matches('[').parse().ok()?;
            let DeValue::Array(items) = value? else {
                return None;
            };
            let item = items.get(k)?;
            span = item.span();
            value = Some(item.get_ref());
        }
        table = match value? {
            DeValue::Table(t) => Some(t),
            _ => None,
        };
    }
    Some(text[..span.start.min(text.len())].matches('\n').count() + 1)
}

/// `e` with the line of its field in `text`, where it is a range or consistency error
/// ([`Error::Invalid`]) whose field the text holds.
pub fn with_line(e: Error, text: &str) -> Error {
    match e {
        Error::Invalid {
            file,
            field,
            message,
        } => match field_line(text, &field) {
            Some(line) => Error::Parse {
                file,
                line,
                field,
                message,
            },
            None => Error::Invalid {
                file,
                field,
                message,
            },
        },
        e => e,
    }
}

/// Loads, validates and builds a scene file (without packing files: see [`load_scene_with`]).
pub fn load_scene(path: &Path) -> Result<Scene> {
    load_scene_with(path, &crate::packing::NoPackingReader)
}

/// Loads, validates and builds a scene file whose `kind = "file"` groups `reader` reads.
pub fn load_scene_with(path: &Path, reader: &dyn crate::packing::PackingReader) -> Result<Scene> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    scene_from_text(&text, &path.display().to_string(), reader)
}

/// Parses, validates and builds the scene `text` read from `file` (which names it in errors,
/// with the line of an invalid value, and whose directory packing files are relative to).
pub fn scene_from_text(
    text: &str,
    file: &str,
    reader: &dyn crate::packing::PackingReader,
) -> Result<Scene> {
    let config = SceneConfig::parse(text, file)?;
    build_scene_with(config, file, reader).map_err(|e| with_line(e, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A field's line: keys of tables, arrays of tables and inline arrays.
    #[test]
    fn fields_are_found_by_line() {
        let text = "[simulation]\nduration = 1.0\n\n[[particles]]\nkind = \"a\"\n\n[[particles]]\nspheres = [\n  { radius = 1.0 },\n  { radius = -1.0 },\n]\n[[loads]]\nparticles = [0]\nforce = { times = [0.0], values = [[1.0, 0.0, 0.0]] }\n";
        assert_eq!(field_line(text, "simulation.duration"), Some(2));
        assert_eq!(field_line(text, "particles[1].spheres[1].radius"), Some(10));
        assert_eq!(field_line(text, "particles[1].spheres[1]"), Some(10));
        assert_eq!(field_line(text, "loads[0].force"), Some(14));
        assert_eq!(field_line(text, "loads[0].lock"), None);
        assert_eq!(field_line(text, "particles[5]"), None);
        let e = with_line(Error::invalid("f.toml", "loads[0].particles", "bad"), text);
        assert_eq!(e.to_string(), "f.toml, line 13: `loads[0].particles`: bad");
    }

    /// A sample of the log-normal gradation has, by mass, the requested D50 and Cu = D60/D10.
    /// 40 000 spheres; the ±3σ truncation removes 0.27 % of the number (and shifts the mass
    /// quantiles by well under 1 %), so 2 % bounds the sampling and truncation error together.
    #[test]
    fn lognormal_gradation_has_requested_d50_and_cu_by_mass() {
        let v = Validator { file: "t" };
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let size = SizeDistribution::Lognormal {
            d50: 0.35e-3,
            cu: 1.7,
            min_diameter: None,
            max_diameter: None,
        };
        let mut d = sample_diameters(&v, "size", &size, 40_000, &mut rng).expect("valid");
        d.sort_by(f64::total_cmp);
        let total: f64 = d.iter().map(|x| x.powi(3)).sum();
        let quantile = |q: f64| {
            let mut acc = 0.0;
            for x in &d {
                acc += x.powi(3);
                if acc >= q * total {
                    return *x;
                }
            }
            d[d.len() - 1]
        };
        let (d10, d50, d60) = (quantile(0.1), quantile(0.5), quantile(0.6));
        assert!((d50 / 0.35e-3 - 1.0).abs() < 0.02, "D50 {d50}");
        assert!((d60 / d10 / 1.7 - 1.0).abs() < 0.02, "Cu {}", d60 / d10);
    }
}
