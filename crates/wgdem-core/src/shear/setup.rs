//! From a parsed direct shear file to a [`ShearSetup`]: the box, the specimen's spheres, the
//! materials of each stage, the servo's plate stiffness and the time step, each checked with
//! the field named.

use std::path::Path;

use crate::error::{Error, Result};
use crate::material::PairParams;
use crate::provenance::Provenance;
use crate::scene::{
    ParticleGroup, RegionConfig, SceneConfig, SimulationConfig, Validator, WallConfig, build_scene,
    sample_diameters,
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

    // The sizes, drawn as the scene build will draw them (same seed), give the solid volume.
    let mut rng = ChaCha8Rng::seed_from_u64(config.simulation.seed);
    let diameters = sample_diameters(&v, "specimen.size", &s.size, s.count, &mut rng)?;
    let solid: f64 = diameters
        .iter()
        .map(|d| std::f64::consts::PI / 6.0 * d * d * d)
        .sum();
    let d_max = diameters.first().copied().unwrap_or(0.0);
    let (l, w) = (b.length, b.width);
    let area = l * w;
    let d_min = diameters.last().copied().unwrap_or(0.0);
    let mean_diameter = diameters.iter().sum::<f64>() / diameters.len() as f64;
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
    let box_top = (b.lower_height + b.gap + b.upper_height).max(fill_top + 2.0 * d_max);
    let upper_bottom = b.lower_height + b.gap;
    let park = fill_top + 1.5 * d_max;

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
    let scene_walls = vec![
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
    ];
    let scene_config = SceneConfig {
        simulation: SimulationConfig {
            duration: 1.0,
            output_interval: config.simulation.output_interval,
            dt: config.simulation.dt,
            safety_factor: config.simulation.safety_factor,
            seed: config.simulation.seed,
            gravity: config.simulation.gravity,
            local_damping: 0.0,
            max_speed: config.simulation.max_speed,
            allow_overlap: None,
        },
        contact: config.contact.clone(),
        materials: config.materials.clone(),
        // The test writes its own snapshots ([output] of the shear file).
        output: Default::default(),
        loads: Vec::new(),
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
        walls: scene_walls,
    };
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
    let sim = &mut scene.simulation;
    let p_mat = sim.particles.material[0];
    let w_mat = sim.walls[0].material;
    // The scene's pair table (with any per-pair contact models) is the shear table; the
    // preparation table replaces the specimen's friction, a pair taking the smaller of its
    // materials' values as in `PairParams::new`.
    let n_mat = scene.materials.len();
    let shear_pairs: Vec<PairParams> = (0..n_mat * n_mat)
        .map(|k| *sim.pair(k / n_mat, k % n_mat))
        .collect();
    let prep_friction = |m: usize| match s.preparation_friction {
        Some(mu) if m == p_mat => mu,
        _ => scene.materials[m].friction,
    };
    let preparation_pairs: Vec<PairParams> = shear_pairs
        .iter()
        .enumerate()
        .map(|(k, pair)| pair.with_friction(prep_friction(k / n_mat).min(prep_friction(k % n_mat))))
        .collect();
    sim.set_pair_params(preparation_pairs.clone());
    if let Some(h) = expansion_height {
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
    let density = scene.materials[p_mat].density.unwrap_or(0.0);
    let plate_stiffness = plate_stiffness(
        config.contact.law,
        &shear_pairs[w_mat * scene.materials.len() + p_mat],
        0.5 * mean_diameter,
        density,
        area,
        c.normal_stress,
    );
    let provenance = Provenance::new(file, &config, Some(config.simulation.seed))?;
    Ok(ShearSetup {
        text: text.to_owned(),
        provenance,
        scene,
        preparation_pairs,
        shear_pairs,
        area,
        mean_diameter,
        density,
        plate_stiffness,
        box_top,
        expansion_height,
        expansion_factor,
        config,
    })
}
