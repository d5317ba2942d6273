//! The specimen of `wgdem bench` and of `cargo bench --bench throughput`: a dense packing in a
//! direct shear box whose lower half shears, built directly (no preparation run), so that
//! every size up to millions of particles is ready at once and every run measures the same
//! packing.
//!
//! - Spheres of 5 mm on a simple-cubic lattice at 0.5 % overlap: six contacts per sphere from
//!   the first step, about the coordination of a consolidated specimen (He et al. 2020 report
//!   4–6), with quartz properties of the Fleischmann preset (E = 8e6 Pa, ν 0.3, μ 0.5).
//! - The box is made of plates like `wgdem shear`'s: the lower box (bottom and four sides of the
//!   lower half) moves along +x at [`SHEAR_SPEED`], the upper box (four sides and the lid) is
//!   fixed, and the lower half of the spheres starts at the lower box's speed, so the contacts
//!   across the mid-plane slide and turn while the rest of the packing is loaded.
//!
//! Units: SI.

use crate::cpu::Simulation;
use crate::error::{Error, Result};
use crate::scene::{SceneConfig, build_scene};

/// Speed of the lower box and the lower half of the spheres (m/s).
pub const SHEAR_SPEED: f64 = 0.01;

/// Sphere diameter (m).
pub const DIAMETER: f64 = 0.005;

/// The contact models `wgdem bench --model` accepts: name and the scene's `[contact]` section
/// (plus pair sections for the models chosen per material pair).
pub const MODELS: [(&str, &str); 4] = [
    ("hertz", "law = \"hertz\"\nhistory = \"true\"\n"),
    ("hooke", "law = \"hooke\"\nhistory = \"true\"\n"),
    (
        "linear",
        "law = \"hertz\"\nhistory = \"true\"\n[[contact.pairs]]\nmaterials = [\"quartz\", \"quartz\"]\nmodel = \"linear\"\neffective_modulus = 4.4e6\n[[contact.pairs]]\nmaterials = [\"quartz\", \"steel\"]\nmodel = \"linear\"\neffective_modulus = 4.4e6\n",
    ),
    (
        "hill",
        "law = \"hertz\"\nhistory = \"true\"\n[[contact.pairs]]\nmaterials = [\"quartz\", \"quartz\"]\nmodel = \"hill\"\n",
    ),
];

/// TOML of plane walls of `material` around `[0, len]² × [0, height]`: floor, a lid at
/// `height` when given, and the four sides (named floor, lid, xmin, xmax, ymin, ymax).
pub fn plane_box_walls(len: f64, lid: Option<f64>, material: &str) -> String {
    let mut walls = vec![("floor", [0.0, 0.0, 0.0], [0.0, 0.0, 1.0])];
    if let Some(height) = lid {
        walls.push(("lid", [0.0, 0.0, height], [0.0, 0.0, -1.0]));
    }
    walls.extend([
        ("xmin", [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
        ("xmax", [len, 0.0, 0.0], [-1.0, 0.0, 0.0]),
        ("ymin", [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ("ymax", [0.0, len, 0.0], [0.0, -1.0, 0.0]),
    ]);
    walls
        .iter()
        .map(|(name, point, normal)| {
            format!(
                "[[walls]]\nkind = \"plane\"\nname = \"{name}\"\nmaterial = \"{material}\"\npoint = {point:?}\nnormal = {normal:?}\n"
            )
        })
        .collect()
}

/// `(side, layers)` of the lattice closest to `n` spheres: `side × side` spheres per layer.
pub fn lattice_shape(n: u32) -> (u32, u32) {
    let side = (f64::from(n)).cbrt().round().max(1.0) as u32;
    let layers = (n / (side * side)).max(2);
    (side, layers)
}

/// The scene text of the bench specimen with about `n` spheres and contact model `model` (one
/// of [`MODELS`]).
pub fn specimen_toml(n: u32, model: &str) -> Result<String> {
    let contact = MODELS
        .iter()
        .find(|(name, _)| *name == model)
        .map(|(_, text)| *text)
        .ok_or_else(|| {
            Error::invalid(
                "wgdem bench",
                "model",
                format!(
                    "unknown contact model {model:?}; choose one of {}",
                    MODELS.map(|(n, _)| n).join(", ")
                ),
            )
        })?;
    if n < 8 {
        return Err(Error::invalid(
            "wgdem bench",
            "particles",
            format!("{n} is too few for a sheared packing; use at least 8"),
        ));
    }
    let (side, layers) = lattice_shape(n);
    let spacing = DIAMETER * 0.995;
    let lower_layers = layers / 2;
    let len = f64::from(side) * spacing;
    let lower = f64::from(lower_layers) * spacing;
    let upper = f64::from(layers - lower_layers) * spacing;
    let v = SHEAR_SPEED;
    let mut s = format!(
        "[simulation]\nduration = 1.0\noutput_interval = 1.0\ngravity = [0.0, 0.0, -9.81]\n\n\
         [contact]\n{contact}\n\
         [[materials]]\nname = \"quartz\"\ndensity = 2500.0\nyoung_modulus = 8e6\npoisson_ratio = 0.3\nrestitution = 0.6\nfriction = 0.5\n\n\
         [[materials]]\nname = \"steel\"\nyoung_modulus = 2e11\npoisson_ratio = 0.3\nrestitution = 0.6\nfriction = 0.3\n\n"
    );
    let h = spacing / 2.0;
    for (layers, z0, velocity) in [
        (lower_layers, h, v),
        (layers - lower_layers, lower + h, 0.0),
    ] {
        s.push_str(&format!(
            "[[particles]]\nkind = \"lattice\"\nmaterial = \"quartz\"\nradius = {r}\norigin = [{h}, {h}, {z0}]\nspacing = {spacing}\ncounts = [{side}, {side}, {layers}]\nvelocity = [{velocity}, 0.0, 0.0]\n\n",
            r = DIAMETER / 2.0,
        ));
    }
    let plate = |s: &mut String,
                 name: &str,
                 center: [f64; 3],
                 normal: [f64; 3],
                 u: [f64; 3],
                 half: [f64; 2],
                 vx: f64| {
        s.push_str(&format!(
            "[[walls]]\nkind = \"plate\"\nname = \"{name}\"\nmaterial = \"steel\"\ncenter = {center:?}\nnormal = {normal:?}\nu_axis = {u:?}\nhalf_extents = {half:?}\nvelocity = [{vx}, 0.0, 0.0]\n\n"
        ));
    };
    let c = len / 2.0;
    // The bottom and lid reach past the sides so that the lower box's travel keeps them under
    // the spheres.
    plate(
        &mut s,
        "bottom",
        [c, c, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 0.0, 0.0],
        [len, c],
        v,
    );
    plate(
        &mut s,
        "lid",
        [c, c, lower + upper],
        [0.0, 0.0, -1.0],
        [1.0, 0.0, 0.0],
        [len, c],
        0.0,
    );
    for (half_z, zc, vx, tag) in [
        (lower / 2.0, lower / 2.0, v, "lower"),
        (upper / 2.0, lower + upper / 2.0, 0.0, "upper"),
    ] {
        plate(
            &mut s,
            &format!("{tag}_xmin"),
            [0.0, c, zc],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [c, half_z],
            vx,
        );
        plate(
            &mut s,
            &format!("{tag}_xmax"),
            [len, c, zc],
            [-1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [c, half_z],
            vx,
        );
        plate(
            &mut s,
            &format!("{tag}_ymin"),
            [c, 0.0, zc],
            [0.0, 1.0, 0.0],
            [1.0, 0.0, 0.0],
            [c, half_z],
            vx,
        );
        plate(
            &mut s,
            &format!("{tag}_ymax"),
            [c, len, zc],
            [0.0, -1.0, 0.0],
            [1.0, 0.0, 0.0],
            [c, half_z],
            vx,
        );
    }
    Ok(s)
}

/// The bench specimen with about `n` spheres (exactly `side² × layers`, see
/// [`lattice_shape`]) and contact model `model`.
pub fn specimen(n: u32, model: &str) -> Result<Simulation> {
    let text = specimen_toml(n, model)?;
    let config = SceneConfig::parse(&text, "bench specimen")?;
    Ok(build_scene(config, "bench specimen")?.simulation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specimen_is_dense_and_its_lower_half_moves() {
        let sim = specimen(1000, "hertz").unwrap_or_else(|e| panic!("{e}"));
        let (side, layers) = lattice_shape(1000);
        assert_eq!(sim.particles.len() as u32, side * side * layers);
        let moving = sim
            .particles
            .velocity
            .iter()
            .filter(|v| v.x == SHEAR_SPEED)
            .count() as u32;
        assert_eq!(moving, side * side * (layers / 2));
        assert_eq!(sim.walls.len(), 10);
        let mut sim = sim;
        sim.run(1);
        // Interior spheres touch six neighbours.
        let per_particle = 2.0 * sim.stats.contacts as f64 / sim.particles.len() as f64;
        assert!(per_particle > 4.5, "{per_particle} contacts per sphere");
    }

    #[test]
    fn unknown_model_and_tiny_counts_are_refused_by_name() {
        let e = specimen(1000, "spring").err().map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|m| m.contains("`model`") && m.contains("hertz"))
        );
        let e = specimen(3, "hertz").err().map(|e| e.to_string());
        assert!(e.as_deref().is_some_and(|m| m.contains("`particles`")));
        for (name, _) in MODELS {
            specimen(64, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
}
