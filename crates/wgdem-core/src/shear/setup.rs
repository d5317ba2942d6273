//! From a parsed direct shear file to a [`ShearSetup`]: the box, the specimen's spheres, the
//! materials of each stage, the servo's plate stiffness and the time step, each checked with
//! the field named.

use std::path::Path;

use crate::cpu::Simulation;
use crate::error::{Error, Result};
use crate::material::PairParams;
use crate::provenance::Provenance;
use crate::scene::{
    ParticleGroup, RegionConfig, Scene, SceneConfig, SimulationConfig, Validator, WallConfig,
    build_scene, sample_diameters,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::config::*;

impl ShearSetup {
    /// Reads, validates and builds a direct shear file.
    pub fn load(path: &Path) -> Result<Self> {
        Self::load_scaled(path, None)
    }

    /// [`ShearSetup::load`], with the test scaled to `particles` spheres if given
    /// ([`ShearConfig::scaled_to`]; `wgdem shear --particles`).
    pub fn load_scaled(path: &Path, particles: Option<u32>) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Self::parse_scaled(&text, &path.display().to_string(), particles)
    }

    /// Parses and builds TOML text; `file` names the source in errors.
    pub fn parse(text: &str, file: &str) -> Result<Self> {
        Self::parse_scaled(text, file, None)
    }

    /// [`ShearSetup::parse`], with the test scaled to `particles` spheres if given. The
    /// setup's text then records the scaling, so that a checkpoint resumes only with the same.
    pub fn parse_scaled(text: &str, file: &str, particles: Option<u32>) -> Result<Self> {
        let config: ShearConfig = crate::scene::parse_toml(text, file)?;
        let Some(n) = particles else {
            return build(config, text, file).map_err(|e| crate::scene::with_line(e, text));
        };
        if n == 0 {
            return Err(Error::invalid(
                file,
                "particles",
                "must be at least 1 (the number of spheres to scale the test to)",
            ));
        }
        if config.specimen.count == 0 {
            return Err(Error::invalid(
                file,
                "specimen.count",
                "must be at least 1 (it is the size a particle count scales from)",
            ));
        }
        let scaled = config.scaled_to(n);
        let source = file;
        let file = format!("{file} scaled to {n} spheres");
        let text = format!("{text}\n# scaled to {n} spheres\n");
        let mut setup =
            build(scaled, &text, &file).map_err(|e| crate::scene::with_line(e, &text))?;
        setup.provenance.input_file = source.to_owned();
        let b = &setup.config.shear_box;
        let across = b.length.min(b.width) / setup.mean_diameter;
        if across < 10.0 {
            log::warn!(
                "{file}: the box is {across:.1} mean diameters across; with fewer than about ten the walls decide the result (scale to more particles)"
            );
        }
        Ok(setup)
    }
}

pub(super) fn build(config: ShearConfig, text: &str, file: &str) -> Result<ShearSetup> {
    let v = Validator { file };
    check_config(&v, &config)?;
    let sizes = specimen_sizes(&v, &config)?;
    let geometry = box_geometry(&v, &config, &sizes)?;
    let walls = box_walls(&config, &geometry);
    let scene_config = specimen_scene(&config, &geometry, walls);
    let mut scene = build_scene(scene_config, file).map_err(rename_fields)?;
    // The longest the test can take: every stage to its limit.
    let longest = config.specimen.max_time
        + config.consolidation.max_time
        + config.shear.displacement / config.shear.speed;
    crate::guard::check_steps(
        file,
        "simulation.dt",
        longest,
        scene.simulation.dt,
        "the stages' longest times (specimen.max_time + consolidation.max_time + shear.displacement / shear.speed) over the time step; check shear.speed and the materials' density and young_modulus",
    )?;
    let (preparation_pairs, shear_pairs) =
        stage_pairs(config.specimen.preparation_friction, &mut scene);
    if let Some(h) = geometry.expansion_height {
        squeeze_for_expansion(&mut scene.simulation, h, geometry.column);
    }
    let p_mat = scene.simulation.particles.material[0];
    let w_mat = scene.simulation.walls[0].material;
    let density = scene.materials[p_mat].density.unwrap_or(0.0);
    let area = geometry.area;
    let plate_stiffness = plate_stiffness(
        config.contact.law,
        &shear_pairs[w_mat * scene.materials.len() + p_mat],
        0.5 * sizes.mean_diameter,
        density,
        area,
        config.consolidation.normal_stress,
    );
    let provenance = Provenance::new(file, &config, Some(config.simulation.seed))?;
    Ok(ShearSetup {
        text: text.to_owned(),
        provenance,
        scene,
        preparation_pairs,
        shear_pairs,
        area,
        mean_diameter: sizes.mean_diameter,
        density,
        plate_stiffness,
        box_top: geometry.box_top,
        expansion_height: geometry.expansion_height,
        expansion_factor: geometry.expansion_factor,
        config,
    })
}

/// The box, specimen, consolidation, shear and simulation values that need no sizes.
fn check_config(v: &Validator, config: &ShearConfig) -> Result<()> {
    v.checkpoint_seconds(config.output.checkpoint_seconds)?;
    let b = &config.shear_box;
    v.positive("box.length", b.length, "m")?;
    v.positive("box.width", b.width, "m")?;
    v.positive("box.lower_height", b.lower_height, "m")?;
    v.positive("box.upper_height", b.upper_height, "m")?;
    if !(b.gap.is_finite() && b.gap >= 0.0) {
        return Err(v.err("box.gap", format!("{} must be ≥ 0 m", b.gap)));
    }
    let s = &config.specimen;
    if s.count == 0 {
        return Err(v.err("specimen.count", "must be at least 1".to_owned()));
    }
    v.positive("specimen.settle_speed", s.settle_speed, "m/s")?;
    v.positive("specimen.max_time", s.max_time, "s")?;
    if !(0.0..1.0).contains(&s.local_damping) {
        return Err(v.err(
            "specimen.local_damping",
            format!(
                "{} is outside [0, 1); use e.g. 0.7 (PFC's default) to settle an expansion sooner, or 0 (the default) for none",
                s.local_damping
            ),
        ));
    }
    if !(s.fill_fraction > 0.0 && s.fill_fraction <= 0.45) {
        return Err(v.err(
            "specimen.fill_fraction",
            format!(
                "{} is outside (0, 0.45]; random placement jams above that (default 0.3)",
                s.fill_fraction
            ),
        ));
    }
    if let Some(mu) = s.preparation_friction
        && !(mu.is_finite() && mu >= 0.0)
    {
        return Err(v.err(
            "specimen.preparation_friction",
            format!("{mu} must be ≥ 0 (0 gives a dense specimen, 1 a loose one)"),
        ));
    }
    let c = &config.consolidation;
    v.positive("consolidation.normal_stress", c.normal_stress, "Pa")?;
    v.positive("consolidation.tolerance", c.tolerance, "1")?;
    v.positive("consolidation.max_time", c.max_time, "s")?;
    if let Some(speed) = c.settle_speed {
        v.positive("consolidation.settle_speed", speed, "m/s")?;
    }
    if !(c.servo_gain > 0.0 && c.servo_gain <= 1.0) {
        return Err(v.err(
            "consolidation.servo_gain",
            format!(
                "{} is outside (0, 1]; use e.g. 0.5 (the default)",
                c.servo_gain
            ),
        ));
    }
    v.positive("shear.speed", config.shear.speed, "m/s")?;
    v.positive("shear.displacement", config.shear.displacement, "m")?;
    if config.shear.displacement > 0.5 * b.length {
        return Err(v.err(
            "shear.displacement",
            format!(
                "{} m is more than half the box length {} m; shear at most ~20 % of it",
                config.shear.displacement, b.length
            ),
        ));
    }
    v.positive(
        "simulation.output_interval",
        config.simulation.output_interval,
        "s",
    )?;
    if config.simulation.control_interval_steps == 0 {
        return Err(v.err(
            "simulation.control_interval_steps",
            format!(
                "must be at least 1 (default {})",
                super::config::default_control_interval()
            ),
        ));
    }

    Ok(())
}

/// The specimen's sizes, drawn as the scene build will draw them (same seed): solid volume
/// (m³), largest, smallest and mean diameter (m).
struct Sizes {
    solid: f64,
    d_max: f64,
    d_min: f64,
    mean_diameter: f64,
}

fn specimen_sizes(v: &Validator, config: &ShearConfig) -> Result<Sizes> {
    let s = &config.specimen;
    let mut rng = ChaCha8Rng::seed_from_u64(config.simulation.seed);
    let diameters = sample_diameters(v, "specimen.size", &s.size, s.count, &mut rng)?;
    Ok(Sizes {
        solid: diameters
            .iter()
            .map(|d| std::f64::consts::PI / 6.0 * d * d * d)
            .sum(),
        d_max: diameters.first().copied().unwrap_or(0.0),
        d_min: diameters.last().copied().unwrap_or(0.0),
        mean_diameter: diameters.iter().sum::<f64>() / diameters.len() as f64,
    })
}

/// Heights of the box and its specimen (m).
struct Geometry {
    /// Plan area of the box (m²).
    area: f64,
    /// Height of the pour column the spheres are placed in.
    column: f64,
    /// The expansion method's target height, and the radius factor of each increment.
    expansion_height: Option<f64>,
    expansion_factor: f64,
    /// Top of the box's side walls.
    box_top: f64,
    /// Bottom of the upper box.
    upper_bottom: f64,
    /// Where the lid waits until consolidation.
    park: f64,
}

/// The box checked against the sizes, and its heights: the pour column that holds the
/// specimen at `specimen.fill_fraction`, or the expansion's target height.
fn box_geometry(v: &Validator, config: &ShearConfig, sizes: &Sizes) -> Result<Geometry> {
    let (b, s) = (&config.shear_box, &config.specimen);
    let Sizes {
        solid,
        d_max,
        d_min,
        ..
    } = *sizes;
    let (l, w) = (b.length, b.width);
    let area = l * w;
    if b.gap >= d_min {
        return Err(v.err(
            "box.gap",
            format!(
                "{} m is not below the smallest diameter {d_min:e} m: spheres would fall out between the halves",
                b.gap
            ),
        ));
    }
    if b.length <= d_max || b.width <= d_max {
        return Err(v.err(
            "box.length",
            format!("the box ({l} × {w} m) must be wider than the largest sphere ({d_max:e} m); use at least ten diameters", l = b.length, w = b.width),
        ));
    }
    // Random placement holds the centres a radius from the walls.
    let column = solid / (s.fill_fraction * (l - d_max) * (w - d_max)) + d_max;
    let (expansion_height, expansion_factor) = match s.method {
        Method::Pluviation => (None, 1.0),
        Method::Expansion => {
            let e = s.target_void_ratio.ok_or_else(|| {
                v.err(
                    "specimen.target_void_ratio",
                    "is required with method = \"expansion\" (e.g. 0.6)".to_owned(),
                )
            })?;
            v.positive("specimen.target_void_ratio", e, "1")?;
            if s.expansion_increments == 0 {
                return Err(v.err(
                    "specimen.expansion_increments",
                    "must be at least 1 (default 10)".to_owned(),
                ));
            }
            let h = solid * (1.0 + e) / area;
            // Placed in the pour column, squeezed to height h with radii scaled by h/column
            // (no overlap can appear), then grown back in increments.
            let shrink = (h / column).min(1.0);
            (Some(h), shrink.powf(-1.0 / s.expansion_increments as f64))
        }
    };
    let fill_top = expansion_height.unwrap_or(column);
    Ok(Geometry {
        area,
        column,
        expansion_height,
        expansion_factor,
        box_top: (b.lower_height + b.gap + b.upper_height).max(fill_top + 2.0 * d_max),
        upper_bottom: b.lower_height + b.gap,
        // Above the spheres as the scene places them: the expansion method places them in the
        // pour column and squeezes them (and the lid) down to its height after.
        park: fill_top.max(column) + 1.5 * d_max,
    })
}

/// The box's plates, in the order of `walls` (config.rs): bottom, the lower and upper boxes'
/// sides, the lid (parked above the specimen) and the two lips.
fn box_walls(config: &ShearConfig, g: &Geometry) -> Vec<WallConfig> {
    let b = &config.shear_box;
    let (l, w) = (b.length, b.width);
    let (box_top, upper_bottom, park) = (g.box_top, g.upper_bottom, g.park);
    let plate = |name: &str, center: [f64; 3], normal: [f64; 3], u: [f64; 3], half: [f64; 2]| {
        WallConfig::Plate {
            name: name.to_owned(),
            material: b.material.clone(),
            center,
            normal,
            u_axis: u,
            half_extents: half,
            velocity: [0.0; 3],
            velocity_schedule: None,
        }
    };
    let (hl, hu) = (b.lower_height, box_top - upper_bottom);
    let (zl, zu) = (0.5 * hl, upper_bottom + 0.5 * hu);
    let x = [1.0, 0.0, 0.0];
    let y = [0.0, 1.0, 0.0];
    let z = [0.0, 0.0, 1.0];
    // The y sides of the lower box reach past its ends by the shear displacement, so that the
    // spheres the box carries stay enclosed at the upper box's ends.
    let reach = 0.5 * l + config.shear.displacement;
    vec![
        plate("bottom", [0.0, 0.0, 0.0], z, x, [0.5 * l, 0.5 * w]),
        plate("lower_x0", [-0.5 * l, 0.0, zl], x, y, [0.5 * w, 0.5 * hl]),
        plate("lower_x1", [0.5 * l, 0.0, zl], x, y, [0.5 * w, 0.5 * hl]),
        plate("lower_y0", [0.0, -0.5 * w, zl], y, z, [0.5 * hl, reach]),
        plate("lower_y1", [0.0, 0.5 * w, zl], y, z, [0.5 * hl, reach]),
        plate("upper_x0", [-0.5 * l, 0.0, zu], x, y, [0.5 * w, 0.5 * hu]),
        plate("upper_x1", [0.5 * l, 0.0, zu], x, y, [0.5 * w, 0.5 * hu]),
        plate("upper_y0", [0.0, -0.5 * w, zu], y, z, [0.5 * hu, reach]),
        plate("upper_y1", [0.0, 0.5 * w, zu], y, z, [0.5 * hu, reach]),
        plate("top", [0.0, 0.0, park], z, x, [0.5 * l, 0.5 * w]),
        // Without the lips, once the shear displacement exceeds a diameter, spheres fall out
        // of the specimen through the opening under the upper box's −x end.
        plate(
            "lower_lip",
            [-0.5 * l - 0.5 * config.shear.displacement, 0.0, hl],
            z,
            x,
            [0.5 * config.shear.displacement, 0.5 * w],
        ),
        plate(
            "upper_lip",
            [0.5 * l + 0.5 * config.shear.displacement, 0.0, upper_bottom],
            z,
            x,
            [0.5 * config.shear.displacement, 0.5 * w],
        ),
    ]
}

/// The scene that places the specimen's spheres at random in the pour column of the box.
fn specimen_scene(config: &ShearConfig, g: &Geometry, walls: Vec<WallConfig>) -> SceneConfig {
    let (b, s) = (&config.shear_box, &config.specimen);
    let (l, w, column) = (b.length, b.width, g.column);
    SceneConfig {
        simulation: SimulationConfig {
            duration: 1.0,
            output_interval: config.simulation.output_interval,
            dt: config.simulation.dt,
            safety_factor: config.simulation.safety_factor,
            seed: config.simulation.seed,
            gravity: config.simulation.gravity,
            // The preparation's alone: `ShearRun` switches it off at consolidation.
            local_damping: s.local_damping,
            max_speed: config.simulation.max_speed,
            allow_overlap: None,
        },
        contact: config.contact.clone(),
        materials: config.materials.clone(),
        // The test writes its own snapshots ([output] of the shear file).
        output: Default::default(),
        loads: Vec::new(),
        cell: None,
        particles: vec![ParticleGroup::Random {
            material: s.material.clone(),
            count: s.count,
            region: RegionConfig {
                min: [-0.5 * l, -0.5 * w, 0.0],
                max: [0.5 * l, 0.5 * w, column],
            },
            size: s.size.clone(),
            max_attempts: 5000,
        }],
        walls,
    }
}

/// The shear stage's pair table (the scene's, with any per-pair contact models) and the
/// preparation's, which replaces the specimen's friction (a pair taking the smaller of its
/// materials' values, as in `PairParams::new`) with `preparation_friction` where given; the
/// scene starts with the preparation's. The periodic-cell test's compaction uses it too.
pub(crate) fn stage_pairs(
    preparation_friction: Option<f64>,
    scene: &mut Scene,
) -> (Vec<PairParams>, Vec<PairParams>) {
    let sim = &mut scene.simulation;
    let p_mat = sim.particles.material[0];
    let n_mat = scene.materials.len();
    let shear_pairs: Vec<PairParams> = (0..n_mat * n_mat)
        .map(|k| *sim.pair(k / n_mat, k % n_mat))
        .collect();
    let prep_friction = |m: usize| match preparation_friction {
        Some(mu) if m == p_mat => mu,
        _ => scene.materials[m].friction,
    };
    let preparation_pairs: Vec<PairParams> = shear_pairs
        .iter()
        .enumerate()
        .map(|(k, pair)| pair.with_friction(prep_friction(k / n_mat).min(prep_friction(k % n_mat))))
        .collect();
    sim.set_pair_params(preparation_pairs.clone());
    (preparation_pairs, shear_pairs)
}

/// The expansion method's start: the spheres placed in the pour column squeezed to the target
/// height `h` with their radii (no overlap can appear), and the lid at `h`.
fn squeeze_for_expansion(sim: &mut Simulation, h: f64, column: f64) {
    let shrink = h / column;
    if shrink < 1.0 {
        for i in 0..sim.particles.len() {
            let r = sim.particles.radius[i];
            sim.particles.set_radius(i, r * shrink);
            sim.particles.position[i].z *= shrink;
        }
        sim.set_default_skin();
    }
    // The lid holds the expanding specimen at the target height.
    if let crate::wall::WallShape::Plate { center, .. } = &mut sim.walls[walls::TOP].shape {
        center.z = h;
    }
}
