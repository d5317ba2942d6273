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
use crate::contact::{ContactLaw, ContactModel, HistoryMode};
use crate::cpu::{MoistureEvent, Simulation, critical_time_step};
use crate::error::{Error, Result};
use crate::material::{Material, PairParams, Stiffness};
use crate::particles::Particles;
use crate::wall::{Wall, WallShape};

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
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn default_safety() -> f64 {
    0.2
}
fn default_gravity() -> [f64; 3] {
    [0.0, 0.0, -9.81]
}
fn default_v_char() -> f64 {
    1.0
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
    /// Hill: damping constant α_h in [0, 1] (default 0).
    pub damping_constant: Option<f64>,
    /// Hill: suction ψ (Pa, default 0).
    pub suction: Option<f64>,
    /// Jäger: `|Δp_max|` in [0, 2μ] (default 0).
    pub dp_max: Option<f64>,
    /// Jäger: history capacity in points (default 32).
    pub capacity: Option<usize>,
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

/// Loads, validates and builds a scene file.
pub fn load_scene(path: &Path) -> Result<Scene> {
    let config = SceneConfig::load(path)?;
    build_scene(config, &path.display().to_string())
}

/// Validates `config` and builds the simulation; `file` names the source in errors.
pub fn build_scene(config: SceneConfig, file: &str) -> Result<Scene> {
    let v = Validator { file };
    let s = &config.simulation;
    v.positive("simulation.duration", s.duration, "s")?;
    v.positive("simulation.output_interval", s.output_interval, "s")?;
    if !(s.safety_factor > 0.0 && s.safety_factor <= 1.0) {
        return Err(v.err(
            "simulation.safety_factor",
            format!(
                "{} is outside (0, 1]; use e.g. 0.2 (the default)",
                s.safety_factor
            ),
        ));
    }
    v.finite3("simulation.gravity", s.gravity)?;
    v.positive(
        "contact.characteristic_velocity",
        config.contact.characteristic_velocity,
        "m/s",
    )?;

    let materials = v.materials(&config.materials)?;
    let names: HashMap<&str, usize> = materials
        .iter()
        .enumerate()
        .map(|(i, m)| (m.name.as_str(), i))
        .collect();
    let lookup = |field: String, name: &str| -> Result<usize> {
        names.get(name).copied().ok_or_else(|| {
            v.err(
                &field,
                format!(
                    "no material named \"{name}\"; define it under [[materials]] (known: {})",
                    known(&materials)
                ),
            )
        })
    };

    let walls = build_walls(&v, &config.walls, &lookup)?;
    let mut rng = ChaCha8Rng::seed_from_u64(s.seed);
    let mut particles = Particles::default();
    for (g, group) in config.particles.iter().enumerate() {
        let field = format!("particles[{g}]");
        let (material_name, material_field) = match group {
            ParticleGroup::Explicit { material, .. }
            | ParticleGroup::Lattice { material, .. }
            | ParticleGroup::Random { material, .. } => (material, format!("{field}.material")),
        };
        let m = lookup(material_field.clone(), material_name)?;
        let density = materials[m].density.ok_or_else(|| {
            v.err(
                &format!("materials[{m}].density"),
                format!(
                    "material \"{material_name}\" is used by {field} but has no density; add `density = ...` in kg/m³"
                ),
            )
        })?;
        add_group(
            &v,
            &field,
            group,
            m,
            density,
            &walls,
            &mut rng,
            &mut particles,
        )?;
    }

    // Pair table and time step.
    let law = config.contact.law;
    let v_char = config.contact.characteristic_velocity;
    let n_mat = materials.len();
    let mut pair_params = Vec::with_capacity(n_mat * n_mat);
    for a in &materials {
        for b in &materials {
            // Mixed kinds were refused by `Validator::materials`.
            let p = PairParams::new(law, a, b, v_char)
                .ok_or_else(|| v.err("materials", "mixed stiffness kinds".to_owned()))?;
            pair_params.push(p);
        }
    }
    let wall_material_set: HashSet<usize> = walls.iter().map(|w| w.material).collect();
    let particle_material_set: HashSet<usize> = particles.material.iter().copied().collect();
    v.pair_models(
        &config.contact.pairs,
        &materials,
        &lookup,
        &wall_material_set,
        &particle_material_set,
        &mut pair_params,
    )?;
    let any_hill = pair_params
        .iter()
        .any(|p| matches!(p.model(), PairModel::Hill { .. }));
    let r_max = particles.radius.iter().copied().fold(0.0, f64::max);
    let mut moisture_events = Vec::new();
    for (k, e) in config.contact.moisture.iter().enumerate() {
        let f = |name: &str| format!("contact.moisture[{k}].{name}");
        if !any_hill {
            return Err(v.err(
                &f("action"),
                "moisture acts on hill contacts only; give some pair model = \"hill\" under [[contact.pairs]]".to_owned(),
            ));
        }
        if !(e.time.is_finite() && e.time >= 0.0) {
            return Err(v.err(&f("time"), format!("{} must be ≥ 0 (in s)", e.time)));
        }
        if !(e.gap.is_finite() && e.gap >= 0.0 && e.gap <= 2.0 * r_max) {
            return Err(v.err(
                &f("gap"),
                format!(
                    "{} must lie in [0, {:.3e}] m: a liquid bridge ruptures beyond 2 s_cr ≤ 2 R_max (memo Eq. 12)",
                    e.gap,
                    2.0 * r_max
                ),
            ));
        }
        moisture_events.push(MoistureEvent {
            time: e.time,
            wet: e.action == MoistureAction::Wet,
            gap: e.gap,
        });
    }
    if !(0.0..1.0).contains(&s.local_damping) {
        return Err(v.err(
            "simulation.local_damping",
            format!(
                "{} is outside [0, 1); use 0 (none) or e.g. 0.7 for quasi-static problems",
                s.local_damping
            ),
        ));
    }
    let mut smallest: Vec<(usize, f64, f64)> = Vec::new();
    for i in 0..particles.len() {
        let (m, r, mass) = (
            particles.material[i],
            particles.radius[i],
            particles.mass[i],
        );
        match smallest.iter_mut().find(|e| e.0 == m) {
            Some(e) if r < e.1 => *e = (m, r, mass),
            Some(_) => {}
            None => smallest.push((m, r, mass)),
        }
    }
    let wall_materials: Vec<usize> = walls
        .iter()
        .map(|w| w.material)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let critical_dt = critical_time_step(law, &smallest, &wall_materials, |a, b| {
        pair_params[a * n_mat + b]
    });
    let max_dt = s.safety_factor * critical_dt;
    let dt = match s.dt {
        Some(dt) => {
            v.positive("simulation.dt", dt, "s")?;
            if dt > max_dt {
                return Err(v.err(
                    "simulation.dt",
                    format!(
                        "{dt:e} s is above the stable limit {max_dt:.3e} s (safety_factor {} × critical time step {critical_dt:.3e} s); set dt ≤ {max_dt:.3e} or remove it to use that limit",
                        s.safety_factor
                    ),
                ));
            }
            dt
        }
        None if critical_dt.is_finite() => max_dt,
        None => {
            return Err(v.err(
                "simulation.dt",
                "no contact can form in this scene, so no time step can be estimated; give dt in seconds".to_owned(),
            ));
        }
    };

    let model = ContactModel {
        law,
        history: config.contact.history,
    };
    let gravity = DVec3::from_array(s.gravity);
    let mut simulation = Simulation::new(particles, walls, model, pair_params, gravity, dt);
    simulation.local_damping = s.local_damping;
    simulation.set_moisture_events(moisture_events);
    Ok(Scene {
        simulation,
        duration: s.duration,
        output_interval: s.output_interval,
        critical_dt,
        max_dt,
        materials,
        config,
    })
}

fn known(materials: &[Material]) -> String {
    materials
        .iter()
        .map(|m| format!("\"{}\"", m.name))
        .collect::<Vec<_>>()
        .join(", ")
}

fn build_walls(
    v: &Validator,
    configs: &[WallConfig],
    lookup: &dyn Fn(String, &str) -> Result<usize>,
) -> Result<Vec<Wall>> {
    let mut walls = Vec::with_capacity(configs.len());
    let mut seen = HashSet::new();
    for (k, w) in configs.iter().enumerate() {
        let field = format!("walls[{k}]");
        let (name, material, velocity, shape) = match w {
            WallConfig::Plane {
                name,
                material,
                point,
                normal,
                velocity,
            } => {
                v.finite3(&format!("{field}.point"), *point)?;
                let normal = v.unit(&format!("{field}.normal"), *normal)?;
                let shape = WallShape::Plane {
                    point: DVec3::from_array(*point),
                    normal,
                };
                (name, material, velocity, shape)
            }
            WallConfig::Plate {
                name,
                material,
                center,
                normal,
                u_axis,
                half_extents,
                velocity,
            } => {
                v.finite3(&format!("{field}.center"), *center)?;
                let normal = v.unit(&format!("{field}.normal"), *normal)?;
                let u = v.unit(&format!("{field}.u_axis"), *u_axis)?;
                if normal.dot(u).abs() > 1e-9 {
                    return Err(v.err(
                        &format!("{field}.u_axis"),
                        "is not orthogonal to `normal`; give an in-plane direction".to_owned(),
                    ));
                }
                v.positive(&format!("{field}.half_extents[0]"), half_extents[0], "m")?;
                v.positive(&format!("{field}.half_extents[1]"), half_extents[1], "m")?;
                let shape = WallShape::Plate {
                    center: DVec3::from_array(*center),
                    normal,
                    u_axis: u,
                    half_extents: *half_extents,
                };
                (name, material, velocity, shape)
            }
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(v.err(
                &format!("{field}.name"),
                format!(
                    "\"{name}\" must be non-empty letters, digits or '_' (it names CSV columns)"
                ),
            ));
        }
        if !seen.insert(name.clone()) {
            return Err(v.err(
                &format!("{field}.name"),
                format!("\"{name}\" is used by another wall; wall names must be unique"),
            ));
        }
        v.finite3(&format!("{field}.velocity"), *velocity)?;
        let material = lookup(format!("{field}.material"), material)?;
        walls.push(Wall {
            name: name.clone(),
            shape,
            velocity: DVec3::from_array(*velocity),
            material,
            force: DVec3::ZERO,
            torque: DVec3::ZERO,
        });
    }
    Ok(walls)
}

#[allow(clippy::too_many_arguments)]
fn add_group(
    v: &Validator,
    field: &str,
    group: &ParticleGroup,
    material: usize,
    density: f64,
    walls: &[Wall],
    rng: &mut ChaCha8Rng,
    particles: &mut Particles,
) -> Result<()> {
    match group {
        ParticleGroup::Explicit { spheres, .. } => {
            for (s, sphere) in spheres.iter().enumerate() {
                let f = format!("{field}.spheres[{s}]");
                v.positive(&format!("{f}.radius"), sphere.radius, "m")?;
                v.finite3(&format!("{f}.position"), sphere.position)?;
                v.finite3(&format!("{f}.velocity"), sphere.velocity)?;
                v.finite3(&format!("{f}.angular_velocity"), sphere.angular_velocity)?;
                let x = DVec3::from_array(sphere.position);
                v.inside_walls(&format!("{f}.position"), x, walls)?;
                let i = particles.push(x, sphere.radius, density, material);
                particles.velocity[i] = DVec3::from_array(sphere.velocity);
                particles.angular_velocity[i] = DVec3::from_array(sphere.angular_velocity);
                particles.spin_fixed[i] = sphere.fix_spin;
            }
        }
        ParticleGroup::Lattice {
            radius,
            origin,
            counts,
            spacing,
            velocity,
            ..
        } => {
            v.positive(&format!("{field}.radius"), *radius, "m")?;
            v.finite3(&format!("{field}.origin"), *origin)?;
            v.finite3(&format!("{field}.velocity"), *velocity)?;
            let spacing = spacing.unwrap_or(2.0 * radius);
            v.positive(&format!("{field}.spacing"), spacing, "m")?;
            let o = DVec3::from_array(*origin);
            for iz in 0..counts[2] {
                for iy in 0..counts[1] {
                    for ix in 0..counts[0] {
                        let x = o + DVec3::new(ix as f64, iy as f64, iz as f64) * spacing;
                        v.inside_walls(&format!("{field}.origin"), x, walls)?;
                        let i = particles.push(x, *radius, density, material);
                        particles.velocity[i] = DVec3::from_array(*velocity);
                    }
                }
            }
        }
        ParticleGroup::Random {
            count,
            region,
            size,
            max_attempts,
            ..
        } => {
            let diameters = sample_diameters(v, &format!("{field}.size"), size, *count, rng)?;
            let lo = DVec3::from_array(region.min);
            let hi = DVec3::from_array(region.max);
            v.finite3(&format!("{field}.region.min"), region.min)?;
            v.finite3(&format!("{field}.region.max"), region.max)?;
            if (0..3).any(|k| hi[k] <= lo[k]) {
                return Err(v.err(
                    &format!("{field}.region"),
                    "`max` must exceed `min` along every axis".to_owned(),
                ));
            }
            for corner in 0..8 {
                let c = DVec3::new(
                    if corner & 1 == 0 { lo.x } else { hi.x },
                    if corner & 2 == 0 { lo.y } else { hi.y },
                    if corner & 4 == 0 { lo.z } else { hi.z },
                );
                v.inside_walls(&format!("{field}.region"), c, walls)?;
            }
            insert_random(
                v,
                field,
                &diameters,
                lo,
                hi,
                *max_attempts,
                material,
                density,
                rng,
                particles,
            )?;
        }
    }
    Ok(())
}

/// Diameters of `count` spheres, largest first.
pub(crate) fn sample_diameters(
    v: &Validator,
    field: &str,
    size: &SizeDistribution,
    count: u32,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<f64>> {
    let mut d: Vec<f64> = match *size {
        SizeDistribution::Mono { diameter } => {
            v.positive(&format!("{field}.diameter"), diameter, "m")?;
            vec![diameter; count as usize]
        }
        SizeDistribution::Uniform {
            min_diameter,
            max_diameter,
        } => {
            v.positive(&format!("{field}.min_diameter"), min_diameter, "m")?;
            v.positive(&format!("{field}.max_diameter"), max_diameter, "m")?;
            if max_diameter < min_diameter {
                return Err(v.err(
                    &format!("{field}.max_diameter"),
                    "is smaller than `min_diameter`".to_owned(),
                ));
            }
            (0..count)
                .map(|_| min_diameter + (max_diameter - min_diameter) * rng.random::<f64>())
                .collect()
        }
        SizeDistribution::Lognormal {
            d50,
            cu,
            min_diameter,
            max_diameter,
        } => {
            v.positive(&format!("{field}.d50"), d50, "m")?;
            if !(cu.is_finite() && cu >= 1.0) {
                return Err(v.err(
                    &format!("{field}.cu"),
                    format!("{cu} must be ≥ 1 (Cu = D60/D10)"),
                ));
            }
            let (median, sigma) = lognormal_by_mass(d50, cu);
            let lo = min_diameter.unwrap_or(median * (-3.0 * sigma).exp());
            let hi = max_diameter.unwrap_or(median * (3.0 * sigma).exp());
            v.positive(&format!("{field}.min_diameter"), lo, "m")?;
            if hi < lo {
                return Err(v.err(
                    &format!("{field}.max_diameter"),
                    "is smaller than `min_diameter`".to_owned(),
                ));
            }
            if sigma == 0.0 {
                vec![d50; count as usize]
            } else {
                let dist = LogNormal::new(median.ln(), sigma)
                    .map_err(|e| v.err(field, format!("invalid log-normal: {e}")))?;
                let mut out = Vec::with_capacity(count as usize);
                while out.len() < count as usize {
                    let d: f64 = dist.sample(rng);
                    if (lo..=hi).contains(&d) {
                        out.push(d);
                    }
                }
                out
            }
        }
        SizeDistribution::Table {
            ref diameters,
            ref percent_passing,
        } => gradation_table(v, field, diameters, percent_passing, count, rng)?,
    };
    d.sort_by(|a, b| b.total_cmp(a));
    Ok(d)
}

/// Samples `count` diameters by number from a sieve curve given by mass: a size is drawn from
/// the mass distribution (inverse of the curve, linear in log d) and kept with probability
/// `(d_min / d)³`, which turns a mass fraction into a number fraction.
fn gradation_table(
    v: &Validator,
    field: &str,
    diameters: &[f64],
    passing: &[f64],
    count: u32,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<f64>> {
    if diameters.len() < 2 || diameters.len() != passing.len() {
        return Err(v.err(
            &format!("{field}.percent_passing"),
            format!(
                "needs one entry per diameter and at least two sizes (got {} diameters, {} percentages)",
                diameters.len(),
                passing.len()
            ),
        ));
    }
    for (k, w) in diameters.windows(2).enumerate() {
        v.positive(&format!("{field}.diameters[{k}]"), w[0], "m")?;
        if w[1] <= w[0] {
            return Err(v.err(
                &format!("{field}.diameters[{}]", k + 1),
                "sizes must increase strictly".to_owned(),
            ));
        }
    }
    let first = passing[0];
    let last = passing[passing.len() - 1];
    if first != 0.0 || last != 100.0 || passing.windows(2).any(|w| w[1] < w[0]) {
        return Err(v.err(
            &format!("{field}.percent_passing"),
            "must rise from 0 at the first size to 100 at the last, never decreasing".to_owned(),
        ));
    }
    let d_min = diameters[0];
    let mut out = Vec::with_capacity(count as usize);
    while out.len() < count as usize {
        let u = 100.0 * rng.random::<f64>();
        let k = passing
            .partition_point(|&p| p <= u)
            .clamp(1, passing.len() - 1);
        let (p0, p1) = (passing[k - 1], passing[k]);
        let t = if p1 > p0 { (u - p0) / (p1 - p0) } else { 0.0 };
        let d = (diameters[k - 1].ln() + t * (diameters[k].ln() - diameters[k - 1].ln())).exp();
        if rng.random::<f64>() < (d_min / d).powi(3) {
            out.push(d);
        }
    }
    Ok(out)
}

/// Number-median diameter and σ of ln d for a log-normal gradation given by mass.
///
/// `Cu = D60/D10 = exp(σ (z₀.₆ − z₀.₁))` with standard-normal quantiles z₀.₆ = 0.253347,
/// z₀.₁ = −1.281552. A log-normal by number with parameters (μ, σ) is log-normal by mass with
/// (μ + 3σ², σ) (Hatch–Choate relation), so the number median is `D50 e^{−3σ²}`.
pub fn lognormal_by_mass(d50: f64, cu: f64) -> (f64, f64) {
    let sigma = cu.ln() / (0.253_347_103_1 + 1.281_551_565_5);
    (d50 * (-3.0 * sigma * sigma).exp(), sigma)
}

#[allow(clippy::too_many_arguments)]
fn insert_random(
    v: &Validator,
    field: &str,
    diameters: &[f64],
    lo: DVec3,
    hi: DVec3,
    max_attempts: u32,
    material: usize,
    density: f64,
    rng: &mut ChaCha8Rng,
    particles: &mut Particles,
) -> Result<()> {
    let Some(&d_max) = diameters.first() else {
        return Ok(());
    };
    // Existing particles count as obstacles too.
    let h = d_max.max(2.0 * particles.max_radius());
    let cell = |x: DVec3| -> [i64; 3] {
        let c = (x / h).floor();
        [c.x as i64, c.y as i64, c.z as i64]
    };
    let mut grid: HashMap<[i64; 3], Vec<usize>> = HashMap::new();
    for i in 0..particles.len() {
        grid.entry(cell(particles.position[i])).or_default().push(i);
    }
    let volume = (hi - lo).x * (hi - lo).y * (hi - lo).z;
    let mut solid = 0.0;
    for (k, &d) in diameters.iter().enumerate() {
        let r = 0.5 * d;
        let (a, b) = (lo + r, hi - r);
        if (0..3).any(|ax| b[ax] < a[ax]) {
            return Err(v.err(
                &format!("{field}.region"),
                format!("is smaller than a sphere of diameter {d:e} m; enlarge it"),
            ));
        }
        let mut placed = false;
        for _ in 0..max_attempts {
            let x = DVec3::new(
                a.x + (b.x - a.x) * rng.random::<f64>(),
                a.y + (b.y - a.y) * rng.random::<f64>(),
                a.z + (b.z - a.z) * rng.random::<f64>(),
            );
            let c = cell(x);
            let mut free = true;
            'search: for dx in -1..=1 {
                for dy in -1..=1 {
                    for dz in -1..=1 {
                        if let Some(list) = grid.get(&[c[0] + dx, c[1] + dy, c[2] + dz]) {
                            for &j in list {
                                let reach = r + particles.radius[j];
                                if particles.position[j].distance_squared(x) < reach * reach {
                                    free = false;
                                    break 'search;
                                }
                            }
                        }
                    }
                }
            }
            if free {
                let i = particles.push(x, r, density, material);
                grid.entry(c).or_default().push(i);
                solid += 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
                placed = true;
                break;
            }
        }
        if !placed {
            return Err(v.err(
                &format!("{field}.count"),
                format!(
                    "placed only {k} of {} spheres without overlap after {max_attempts} tries for the next one (solid fraction reached {:.3}); enlarge `region`, lower `count`, or raise `max_attempts`",
                    diameters.len(),
                    solid / volume
                ),
            ));
        }
    }
    Ok(())
}

/// Range checks that produce [`Error::Invalid`] naming the field.
pub(crate) struct Validator<'a> {
    pub(crate) file: &'a str,
}

impl Validator<'_> {
    pub(crate) fn err(&self, field: &str, message: String) -> Error {
        Error::invalid(self.file, field, message)
    }

    pub(crate) fn positive(&self, field: &str, x: f64, unit: &str) -> Result<()> {
        if x.is_finite() && x > 0.0 {
            Ok(())
        } else {
            Err(self.err(field, format!("{x} must be a positive number (in {unit})")))
        }
    }

    fn finite3(&self, field: &str, x: [f64; 3]) -> Result<()> {
        if x.iter().all(|c| c.is_finite()) {
            Ok(())
        } else {
            Err(self.err(field, format!("{x:?} has a non-finite component")))
        }
    }

    fn unit(&self, field: &str, x: [f64; 3]) -> Result<DVec3> {
        self.finite3(field, x)?;
        DVec3::from_array(x)
            .try_normalize()
            .ok_or_else(|| self.err(field, "is the zero vector; give a direction".to_owned()))
    }

    fn inside_walls(&self, field: &str, x: DVec3, walls: &[Wall]) -> Result<()> {
        for w in walls {
            if let Some(d) = w.signed_distance(x) {
                if d < 0.0 {
                    return Err(self.err(
                        field,
                        format!(
                            "point ({:.6}, {:.6}, {:.6}) m lies outside wall \"{}\" ({:.3e} m behind it); move it to the side the wall's normal points to",
                            x.x, x.y, x.z, w.name, -d
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Applies `[[contact.pairs]]` to the pair table, refusing what a model cannot do.
    fn pair_models(
        &self,
        configs: &[PairConfig],
        materials: &[Material],
        lookup: &dyn Fn(String, &str) -> Result<usize>,
        wall_materials: &HashSet<usize>,
        particle_materials: &HashSet<usize>,
        table: &mut [PairParams],
    ) -> Result<()> {
        let n = materials.len();
        let mut seen = HashSet::new();
        for (k, c) in configs.iter().enumerate() {
            let f = |name: &str| format!("contact.pairs[{k}].{name}");
            let a = lookup(f("materials[0]"), &c.materials[0])?;
            let b = lookup(f("materials[1]"), &c.materials[1])?;
            if !seen.insert((a.min(b), a.max(b))) {
                return Err(self.err(
                    &f("materials"),
                    format!(
                        "the pair (\"{}\", \"{}\") is listed twice; give each pair one model",
                        c.materials[0], c.materials[1]
                    ),
                ));
            }
            let name = match c.model {
                PairModelName::Spring => "spring",
                PairModelName::Linear => "linear",
                PairModelName::Hill => "hill",
                PairModelName::Jager => "jager",
            };
            // Keys that belong to another model are refused rather than ignored.
            let keys = [
                ("kn", c.kn.is_some(), PairModelName::Linear),
                ("kt", c.kt.is_some(), PairModelName::Linear),
                (
                    "effective_modulus",
                    c.effective_modulus.is_some(),
                    PairModelName::Linear,
                ),
                (
                    "stiffness_ratio",
                    c.stiffness_ratio.is_some(),
                    PairModelName::Linear,
                ),
                ("twirl", c.twirl.is_some(), PairModelName::Linear),
                (
                    "damping_constant",
                    c.damping_constant.is_some(),
                    PairModelName::Hill,
                ),
                ("suction", c.suction.is_some(), PairModelName::Hill),
                ("dp_max", c.dp_max.is_some(), PairModelName::Jager),
                ("capacity", c.capacity.is_some(), PairModelName::Jager),
            ];
            if let Some((key, _, owner)) = keys
                .iter()
                .find(|(_, set, owner)| *set && *owner != c.model)
            {
                return Err(self.err(
                    &f(key),
                    format!(
                        "belongs to model = \"{}\", not \"{name}\"; remove it",
                        format!("{owner:?}").to_lowercase()
                    ),
                ));
            }
            let touches_wall = (wall_materials.contains(&a) && particle_materials.contains(&b))
                || (wall_materials.contains(&b) && particle_materials.contains(&a));
            let elastic = |m: usize| {
                match materials[m].stiffness {
                Stiffness::Elastic {
                    young_modulus,
                    poisson_ratio,
                    ..
                } => Ok((young_modulus, poisson_ratio)),
                Stiffness::Direct { .. } => Err(self.err(
                    &f("model"),
                    format!(
                        "the {name} model needs elastic constants; give material \"{}\" young_modulus, poisson_ratio and restitution",
                        materials[m].name
                    ),
                )),
            }
            };
            let model = match c.model {
                PairModelName::Spring => PairModel::Spring,
                PairModelName::Linear => {
                    let stiffness = match (c.effective_modulus, c.kn, c.kt) {
                        (Some(e), None, None) => {
                            self.positive(&f("effective_modulus"), e, "Pa")?;
                            let ratio = c.stiffness_ratio.unwrap_or(1.0);
                            self.positive(&f("stiffness_ratio"), ratio, "−")?;
                            LinearStiffness::Deformability {
                                effective_modulus: e,
                                stiffness_ratio: ratio,
                            }
                        }
                        (None, Some(kn), Some(kt)) => {
                            self.positive(&f("kn"), kn, "N/m")?;
                            self.positive(&f("kt"), kt, "N/m")?;
                            LinearStiffness::Direct { kn, kt }
                        }
                        _ => {
                            return Err(self.err(
                                &f("model"),
                                "the linear model needs either effective_modulus (with optional stiffness_ratio) or both kn and kt".to_owned(),
                            ));
                        }
                    };
                    PairModel::Linear {
                        stiffness,
                        twirl: c.twirl.unwrap_or(true),
                    }
                }
                PairModelName::Hill | PairModelName::Jager if touches_wall => {
                    return Err(self.err(
                        &f("model"),
                        format!(
                            "the {name} model is for sphere–sphere contacts only (material \"{}\" is a wall's); use \"linear\" or \"spring\" for this pair",
                            if wall_materials.contains(&a) { &c.materials[0] } else { &c.materials[1] }
                        ),
                    ));
                }
                PairModelName::Hill => {
                    let (e1, n1) = elastic(a)?;
                    let (e2, n2) = elastic(b)?;
                    let alpha = c.damping_constant.unwrap_or(0.0);
                    if !(0.0..=1.0).contains(&alpha) {
                        return Err(self.err(
                            &f("damping_constant"),
                            format!("{alpha} must lie in [0, 1] (memo Table 5)"),
                        ));
                    }
                    let suction = c.suction.unwrap_or(0.0);
                    if !(suction.is_finite() && suction >= 0.0) {
                        return Err(
                            self.err(&f("suction"), format!("{suction} must be ≥ 0 (in Pa)"))
                        );
                    }
                    let (e_e, g_e) = crate::material::effective_moduli((e1, n1), (e2, n2));
                    PairModel::Hill {
                        e_e,
                        g_e,
                        damping_constant: alpha,
                        suction,
                    }
                }
                PairModelName::Jager => {
                    let (e1, n1) = elastic(a)?;
                    let (e2, n2) = elastic(b)?;
                    if (e1, n1) != (e2, n2) {
                        return Err(self.err(
                            &f("materials"),
                            "Jäger's contact is for spheres of equal elastic constants; the two materials differ in young_modulus or poisson_ratio".to_owned(),
                        ));
                    }
                    let mu = table[a * n + b].friction();
                    let dp_max = c.dp_max.unwrap_or(0.0);
                    if !(0.0..=2.0 * mu).contains(&dp_max) {
                        return Err(self.err(
                            &f("dp_max"),
                            format!("{dp_max} must lie in [0, 2μ] = [0, {}]", 2.0 * mu),
                        ));
                    }
                    let capacity = c.capacity.unwrap_or(32);
                    if capacity < 3 {
                        return Err(self.err(
                            &f("capacity"),
                            format!("{capacity} is too small; a history needs at least 3 points"),
                        ));
                    }
                    PairModel::Jager {
                        shear_modulus: e1 / (2.0 * (1.0 + n1)),
                        poisson_ratio: n1,
                        dp_max,
                        capacity,
                    }
                }
            };
            table[a * n + b] = table[a * n + b].with_model(model);
            table[b * n + a] = table[b * n + a].with_model(model);
        }
        Ok(())
    }

    fn materials(&self, configs: &[MaterialConfig]) -> Result<Vec<Material>> {
        if configs.is_empty() {
            return Err(self.err(
                "materials",
                "no material defined; add at least one [[materials]] table".to_owned(),
            ));
        }
        let mut out: Vec<Material> = Vec::with_capacity(configs.len());
        for (k, m) in configs.iter().enumerate() {
            let f = |name: &str| format!("materials[{k}].{name}");
            if out.iter().any(|o| o.name == m.name) {
                return Err(self.err(
                    &f("name"),
                    format!(
                        "\"{}\" is defined twice; material names must be unique",
                        m.name
                    ),
                ));
            }
            if let Some(rho) = m.density {
                self.positive(&f("density"), rho, "kg/m³")?;
            }
            if !(m.friction.is_finite() && m.friction >= 0.0) {
                return Err(self.err(
                    &f("friction"),
                    format!(
                        "{} is negative; the friction coefficient μ must be ≥ 0",
                        m.friction
                    ),
                ));
            }
            let elastic = [m.young_modulus, m.poisson_ratio, m.restitution];
            let direct = [m.kn, m.kt, m.gamma_n, m.gamma_t];
            let stiffness = if elastic.iter().any(Option::is_some) {
                if let Some(name) = [
                    ("kn", m.kn),
                    ("kt", m.kt),
                    ("gamma_n", m.gamma_n),
                    ("gamma_t", m.gamma_t),
                ]
                .iter()
                .find_map(|(n, x)| x.map(|_| *n))
                {
                    return Err(self.err(
                        &f(name),
                        "cannot be combined with elastic constants (young_modulus, poisson_ratio, restitution); give one set".to_owned(),
                    ));
                }
                let need = |name: &str, x: Option<f64>| {
                    x.ok_or_else(|| {
                        self.err(
                            &f(name),
                            "is missing; elastic materials need young_modulus, poisson_ratio and restitution".to_owned(),
                        )
                    })
                };
                let e = need("young_modulus", m.young_modulus)?;
                let nu = need("poisson_ratio", m.poisson_ratio)?;
                let r = need("restitution", m.restitution)?;
                self.positive(&f("young_modulus"), e, "Pa")?;
                if !(nu > -1.0 && nu < 0.5) {
                    return Err(
                        self.err(&f("poisson_ratio"), format!("{nu} must lie in (−1, 0.5)"))
                    );
                }
                if !(r > 0.0 && r <= 1.0) {
                    return Err(self.err(&f("restitution"), format!("{r} must lie in (0, 1]")));
                }
                Stiffness::Elastic {
                    young_modulus: e,
                    poisson_ratio: nu,
                    restitution: r,
                }
            } else if direct.iter().any(Option::is_some) {
                let need = |name: &str, x: Option<f64>| {
                    let x = x.ok_or_else(|| {
                        self.err(
                            &f(name),
                            "is missing; direct materials need kn, kt, gamma_n and gamma_t"
                                .to_owned(),
                        )
                    })?;
                    if !(x.is_finite() && x >= 0.0) {
                        return Err(self.err(&f(name), format!("{x} must be ≥ 0")));
                    }
                    Ok(x)
                };
                let kn = need("kn", m.kn)?;
                self.positive(&f("kn"), kn, "N/m (Hooke) or N/m² (Hertz)")?;
                Stiffness::Direct {
                    kn,
                    kt: need("kt", m.kt)?,
                    gamma_n: need("gamma_n", m.gamma_n)?,
                    gamma_t: need("gamma_t", m.gamma_t)?,
                }
            } else {
                return Err(self.err(
                    &format!("materials[{k}]"),
                    "gives no stiffness; add young_modulus, poisson_ratio and restitution, or kn, kt, gamma_n and gamma_t".to_owned(),
                ));
            };
            if let Some(first) = out.first() {
                if std::mem::discriminant(&first.stiffness) != std::mem::discriminant(&stiffness) {
                    return Err(self.err(
                        &format!("materials[{k}]"),
                        format!(
                            "gives its stiffness another way than material \"{}\" (elastic constants versus kn/kt/gamma); all materials of a scene must use the same way",
                            first.name
                        ),
                    ));
                }
            }
            out.push(Material {
                name: m.name.clone(),
                density: m.density,
                friction: m.friction,
                stiffness,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
