//! Axisymmetric strain probes in the Rendulic plane (Kuhn, Suzuki & Daouadji, Fig. 5): from
//! one state, a set of small strain increments in directions around the plane, each from the
//! same state, with the response split into its reversible and irreversible parts.
//!
//! Coordinates: the Rendulic plane's orthonormal basis, volumetric `ε_kk/√3` and deviatoric
//! `√(2/3)(ε₁₁ − ε₃₃)` with `ε₂₂ = ε₃₃` (and the same for stresses), compression positive.
//!
//! Each probe `k` prescribes the strain increment `dε_k` of magnitude `m` at a constant rate
//! over `steps` steps, then holds the cell for `hold` steps, and reads the stress. The same is
//! done with no strain (the **zero probe**): its stress change is the state's own drift
//! (creep, relaxation), which is subtracted from every probe. The **reversible** response is
//! measured by running each probe again with every contact's friction raised so far that none
//! slides (the contacts' reversible stiffness): a least-squares fit of those responses gives
//! the elastic operator `dσ = D dε` (2×2). A probe's irreversible (plastic) strain is then
//! `dε^p = dε − D⁻¹ dσ`, and its point in Fig. 5's plot lies along the stress increment's
//! direction at the distance `|dε^p| / |dσ|`. For an elasto-plastic material those points lie
//! on a circle through the origin whose diameter is the inverse of the plastic (hardening)
//! modulus and whose direction is the yield surface's normal: [`fit_circle`] finds it.

use glam::{DMat2, DMat3, DVec2, DVec3};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::cpu::Simulation;
use crate::material::PairParams;

/// `[probes]`: probes at a stress ratio reached during loading (triaxial paths only).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbesConfig {
    /// The stress ratio `q/p` at which the loading is suspended and the probes are made; the
    /// loading strain stays a cap (the probes are made there if it comes first).
    pub at_stress_ratio: f64,
    /// Directions, evenly spread around the Rendulic plane.
    #[serde(default = "default_directions")]
    pub directions: u32,
    /// Strain magnitude of each probe (–).
    #[serde(default = "default_magnitude")]
    pub magnitude: f64,
    /// Steps each probe's strain takes; default at the loading's strain rate
    /// (`magnitude / (strain_rate Δt)`): the paper's 30 belong to its own time scaling, and
    /// a probe much faster than a wave's crossing of the cell measures inertia.
    pub steps: Option<u64>,
    /// Steps the cell is then held still before the stress is read; default `steps`.
    pub hold_steps: Option<u64>,
    /// A second series from the same state with the conventional linear-frictional algorithm
    /// (Kuhn, Suzuki & Daouadji's comparison, Fig. 5c); needs linear contacts.
    #[serde(default)]
    pub conventional: bool,
}

fn default_directions() -> u32 {
    72
}
fn default_magnitude() -> f64 {
    6e-6
}

/// The friction that keeps every contact from sliding during a reversible probe.
const LOCKED_FRICTION: f64 = 1e9;

/// One probe's measurements, a row of `probes.csv` (Rendulic coordinates; SI).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRow {
    /// Direction of the strain increment in the Rendulic plane, from the volumetric axis
    /// towards the deviatoric one (deg).
    pub direction_deg: f64,
    /// Prescribed strain increment, volumetric coordinate.
    pub strain_vol: f64,
    /// Prescribed strain increment, deviatoric coordinate.
    pub strain_dev: f64,
    /// Stress increment, the zero probe's drift removed (Pa).
    #[serde(rename = "stress_vol_Pa")]
    pub stress_vol_pa: f64,
    /// As `stress_vol_Pa`.
    #[serde(rename = "stress_dev_Pa")]
    pub stress_dev_pa: f64,
    /// The reversible probe's stress increment (Pa).
    #[serde(rename = "reversible_stress_vol_Pa")]
    pub reversible_stress_vol_pa: f64,
    /// As `reversible_stress_vol_Pa`.
    #[serde(rename = "reversible_stress_dev_Pa")]
    pub reversible_stress_dev_pa: f64,
    /// Irreversible strain `dε − D⁻¹ dσ`, volumetric coordinate.
    pub plastic_strain_vol: f64,
    /// As `plastic_strain_vol`.
    pub plastic_strain_dev: f64,
    /// Fig. 5's point: along `dσ`, at `|dε^p| / |dσ|` from the origin (1/Pa).
    #[serde(rename = "point_vol_1_Pa")]
    pub point_vol: f64,
    /// As `point_vol_1_Pa`.
    #[serde(rename = "point_dev_1_Pa")]
    pub point_dev: f64,
}

/// Columns of `probes.csv`.
pub const PROBE_HEADER: [&str; 11] = [
    "direction_deg",
    "strain_vol",
    "strain_dev",
    "stress_vol_Pa",
    "stress_dev_Pa",
    "reversible_stress_vol_Pa",
    "reversible_stress_dev_Pa",
    "plastic_strain_vol",
    "plastic_strain_dev",
    "point_vol_1_Pa",
    "point_dev_1_Pa",
];

/// What the probes found (`summary.json`'s `probes`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeSummary {
    /// The stress ratio `q/p` where the probes were made.
    pub stress_ratio: f64,
    /// Number of probes.
    pub count: usize,
    /// The reversible operator `D` (Pa), rows (vol, dev) by columns (vol, dev).
    #[serde(rename = "reversible_stiffness_Pa")]
    pub reversible_stiffness_pa: [[f64; 2]; 2],
    /// The plastic (hardening) modulus, the inverse of the fitted circle's diameter (Pa).
    #[serde(rename = "plastic_modulus_Pa")]
    pub plastic_modulus_pa: f64,
    /// Direction of the circle's diameter (the yield surface's normal), from the volumetric
    /// axis (deg).
    pub yield_direction_deg: f64,
    /// Root-mean-square distance of the points from the circle, over its diameter.
    pub circle_misfit: f64,
    /// How far the reversible probes are from linear: the largest `|dσ(θ) + dσ(θ + π)|` over
    /// the largest `|dσ|` (0 for a linear response; the probes are refused above 0.5).
    pub reversible_asymmetry: f64,
}

/// `(vol, dev)` of a diagonal axisymmetric tensor `(a₁₁, a₃₃)`.
pub fn rendulic(a11: f64, a33: f64) -> DVec2 {
    DVec2::new(
        (a11 + 2.0 * a33) / 3f64.sqrt(),
        (2.0f64 / 3.0).sqrt() * (a11 - a33),
    )
}

/// `(a₁₁, a₃₃)` of Rendulic coordinates `r`.
pub fn axial_lateral(r: DVec2) -> (f64, f64) {
    let trace = 3f64.sqrt() * r.x;
    let difference = (1.5f64).sqrt() * r.y;
    ((trace + 2.0 * difference) / 3.0, (trace - difference) / 3.0)
}

/// The least-squares `D` of `dσ_k = D dε_k` (`None` if the strains do not span the plane).
pub fn fit_operator(strains: &[DVec2], stresses: &[DVec2]) -> Option<DMat2> {
    let mut ee = DMat2::ZERO;
    let mut se = DMat2::ZERO;
    for (e, s) in strains.iter().zip(stresses) {
        ee += outer(*e, *e);
        se += outer(*s, *e);
    }
    (ee.determinant().abs() > 0.0).then(|| se * ee.inverse())
}

fn outer(a: DVec2, b: DVec2) -> DMat2 {
    DMat2::from_cols(a * b.x, a * b.y)
}

/// The circle through the origin that best fits `points` (least squares on
/// `|x|² = 2 c·x`): its centre `c`, and the RMS distance of the points from it over its
/// diameter. `None` for fewer than two points or points on a line through the origin.
pub fn fit_circle(points: &[DVec2]) -> Option<(DVec2, f64)> {
    let mut a = DMat2::ZERO;
    let mut b = DVec2::ZERO;
    for p in points {
        a += outer(*p, *p) * 4.0;
        b += *p * (2.0 * p.length_squared());
    }
    if points.len() < 2 || a.determinant().abs() <= f64::MIN_POSITIVE {
        return None;
    }
    let c = a.inverse() * b;
    let r = c.length();
    let rms = (points
        .iter()
        .map(|p| ((*p - c).length() - r).powi(2))
        .sum::<f64>()
        / points.len() as f64)
        .sqrt();
    Some((c, rms / (2.0 * r)))
}

/// The axisymmetric stress `(σ₁₁, σ₃₃)` of `sim` (σ₃₃ the mean of the lateral two).
fn axisymmetric_stress(sim: &Simulation) -> (f64, f64) {
    let s = sim.stress().unwrap_or(DMat3::NAN);
    (s.x_axis.x, 0.5 * (s.y_axis.y + s.z_axis.z))
}

/// The stress change in Rendulic coordinates after `sim` (a copy) takes the strain increment
/// `de` (Rendulic) over `steps` steps and is held for `hold`.
fn respond(sim: &Simulation, de: DVec2, steps: u64, hold: u64) -> Result<DVec2, String> {
    let mut s = sim.clone();
    let before = axisymmetric_stress(&s);
    let (e11, e33) = axial_lateral(de);
    let h = steps as f64 * s.dt;
    // Compression positive: a positive strain shortens the edge.
    s.set_velocity_gradient(DMat3::from_diagonal(DVec3::new(-e11, -e33, -e33) / h))?;
    s.run(steps);
    s.set_velocity_gradient(DMat3::ZERO)?;
    s.run(hold);
    let after = axisymmetric_stress(&s);
    let d = rendulic(after.0 - before.0, after.1 - before.1);
    if d.is_finite() {
        Ok(d)
    } else {
        Err(format!(
            "a probe of strain ({e11:e}, {e33:e}) left a stress that is not finite"
        ))
    }
}

/// Makes `directions` probes of magnitude `magnitude` from `sim`'s state; `locked` is its pair
/// table with friction too high to slide.
pub fn probe(
    sim: &Simulation,
    locked: Vec<PairParams>,
    directions: u32,
    magnitude: f64,
    (steps, hold): (u64, u64),
    stress_ratio: f64,
) -> Result<(Vec<ProbeRow>, ProbeSummary), String> {
    let mut reversible_sim = sim.clone();
    reversible_sim.set_pair_params(locked);
    let strains: Vec<DVec2> = (0..directions)
        .map(|k| {
            let angle = std::f64::consts::TAU * f64::from(k) / f64::from(directions);
            DVec2::new(angle.cos(), angle.sin()) * magnitude
        })
        .collect();
    // Every probe starts from its own copy of the same state, so they run side by side on
    // the host's threads (`RAYON_NUM_THREADS` caps them); each response is the same to the
    // bit whatever the threads, and the first error in the order below is the one reported.
    // Order: the zero probes, then each direction with sliding and without.
    let jobs: Vec<(&Simulation, DVec2)> = [DVec2::ZERO]
        .iter()
        .chain(&strains)
        .flat_map(|&de| [(sim, de), (&reversible_sim, de)])
        .collect();
    let responses = jobs
        .par_iter()
        .map(|&(s, de)| respond(s, de, steps, hold))
        .collect::<Vec<_>>()
        .into_iter()
        .collect::<Result<Vec<DVec2>, String>>()?;
    let (drift, reversible_drift) = (responses[0], responses[1]);
    let stresses: Vec<DVec2> = responses[2..]
        .iter()
        .step_by(2)
        .map(|s| *s - drift)
        .collect();
    let reversible: Vec<DVec2> = responses[3..]
        .iter()
        .step_by(2)
        .map(|s| *s - reversible_drift)
        .collect();
    // Opposite reversible probes give opposite stresses: a linear response. Far from it, the
    // stepping was unstable once no contact could slide (a time step too large for the
    // packing's rotational modes) and the probes measure nothing.
    let largest = reversible.iter().map(|r| r.length()).fold(0.0, f64::max);
    let half = reversible.len() / 2;
    let asymmetry = if directions.is_multiple_of(2) {
        (0..half)
            .map(|k| (reversible[k] + reversible[k + half]).length())
            .fold(0.0, f64::max)
            / largest
    } else {
        f64::NAN
    };
    if asymmetry > 0.5 || !largest.is_finite() {
        return Err(format!(
            "the reversible probes are not linear (opposite probes differ by {asymmetry:.2} of the largest response, {largest:.3e} Pa): the stepping is unstable once no contact slides; lower simulation.safety_factor"
        ));
    }
    let d = fit_operator(&strains, &reversible)
        .filter(|d| d.determinant().abs() > 0.0)
        .ok_or("the reversible probes gave no invertible stiffness (no contacts?)")?;
    let compliance = d.inverse();
    let mut rows = Vec::new();
    let mut points = Vec::new();
    for k in 0..strains.len() {
        let (de, ds, dr) = (strains[k], stresses[k], reversible[k]);
        let plastic = de - compliance * ds;
        let point = ds.normalize_or_zero() * (plastic.length() / ds.length());
        points.push(point);
        rows.push(ProbeRow {
            direction_deg: de.y.atan2(de.x).to_degrees().rem_euclid(360.0),
            strain_vol: de.x,
            strain_dev: de.y,
            stress_vol_pa: ds.x,
            stress_dev_pa: ds.y,
            reversible_stress_vol_pa: dr.x,
            reversible_stress_dev_pa: dr.y,
            plastic_strain_vol: plastic.x,
            plastic_strain_dev: plastic.y,
            point_vol: point.x,
            point_dev: point.y,
        });
    }
    let finite: Vec<DVec2> = points.into_iter().filter(|p| p.is_finite()).collect();
    let (centre, misfit) = fit_circle(&finite).unwrap_or((DVec2::NAN, f64::NAN));
    let summary = ProbeSummary {
        stress_ratio,
        count: rows.len(),
        reversible_stiffness_pa: [[d.x_axis.x, d.y_axis.x], [d.x_axis.y, d.y_axis.y]],
        plastic_modulus_pa: 1.0 / (2.0 * centre.length()),
        yield_direction_deg: centre.y.atan2(centre.x).to_degrees(),
        circle_misfit: misfit,
        reversible_asymmetry: asymmetry,
    };
    Ok((rows, summary))
}

/// `pairs` with every friction raised so that no contact slides.
pub fn locked(pairs: &[PairParams]) -> Vec<PairParams> {
    pairs
        .iter()
        .map(|p| p.with_friction(LOCKED_FRICTION))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probes run side by side on the host's threads, each from its own copy of the
    /// state: one thread and three give the same rows and summary, bit for bit, on the
    /// periodic benchmark lattice cut to 3³ spheres (touching at 0.5 % overlap), compressed
    /// and sheared a little first.
    #[test]
    fn probes_give_the_same_bits_on_one_thread_and_on_three() {
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../assets/scenes/periodic_lattice.toml"
        );
        let text = std::fs::read_to_string(file)
            .expect("the periodic lattice scene")
            .replace("counts = [22, 22, 22]", "counts = [3, 3, 3]")
            .replace("0.10945", "0.014925")
            // Locked contacts need a smaller step than the scene's (see `probe`'s error).
            .replace("[simulation]", "[simulation]\nsafety_factor = 0.05");
        let config =
            crate::scene::SceneConfig::parse(&text, file).unwrap_or_else(|e| panic!("{e}"));
        let mut sim = crate::scene::build_scene(config, file)
            .unwrap_or_else(|e| panic!("{e}"))
            .simulation;
        assert_eq!(sim.particles.len(), 27);
        sim.run(300);
        sim.set_velocity_gradient(DMat3::ZERO)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            sim.stress().is_some_and(|s| s.x_axis.x > 0.0),
            "no contacts"
        );
        let pairs = vec![*sim.pair(0, 0)];
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a thread pool");
            pool.install(|| probe(&sim, locked(&pairs), 8, 6e-6, (40, 40), 0.5))
        };
        let (one, three) = (on(1), on(3));
        let (rows, summary) = one.clone().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rows.len(), 8);
        assert!(summary.plastic_modulus_pa.is_finite(), "{summary:?}");
        // Debug prints every f64 so that it parses back to the same bits.
        assert_eq!(format!("{one:?}"), format!("{three:?}"));
    }

    /// The Rendulic basis is orthonormal: `(1, 1)` (isotropic) is purely volumetric with
    /// length `√3`, `(1, −1/2)` purely deviatoric with length `√(3/2)`, and the map inverts.
    #[test]
    fn rendulic_coordinates_are_orthonormal_and_invert() {
        let iso = rendulic(1.0, 1.0);
        assert!((iso - DVec2::new(3f64.sqrt(), 0.0)).length() < 1e-15);
        let dev = rendulic(1.0, -0.5);
        assert!((dev - DVec2::new(0.0, 1.5f64.sqrt())).length() < 1e-15);
        let (a, b) = axial_lateral(rendulic(0.3, -1.7));
        assert!((a - 0.3).abs() < 1e-15 && (b + 1.7).abs() < 1e-15);
    }

    /// An elasto-plastic material of the closed form: elastic `D`, and a plastic strain
    /// `dε^p = n (n·dσ) / H` for loading (`n·dσ > 0`) only. Its probes' points lie on the
    /// circle of diameter `1/H` along `n` (Kuhn et al. Fig. 5b): the fit finds `H` and `n` to
    /// rounding, `D` is recovered from the elastic responses, and the unloading half gives no
    /// points off the origin.
    #[test]
    fn an_elasto_plastic_material_gives_its_circle() {
        let d = DMat2::from_cols(DVec2::new(3e7, 4e6), DVec2::new(4e6, 2e7));
        let n = DVec2::new(-0.3, 1.0).normalize();
        let h = 2e6;
        let (mut strains, mut elastic, mut points) = (Vec::new(), Vec::new(), Vec::new());
        for k in 0..72 {
            let a = std::f64::consts::TAU * f64::from(k) / 72.0;
            let ds = DVec2::new(a.cos(), a.sin()) * 100.0;
            let plastic = if n.dot(ds) > 0.0 {
                n * (n.dot(ds) / h)
            } else {
                DVec2::ZERO
            };
            let de = d.inverse() * ds + plastic;
            strains.push(de);
            elastic.push(d * de);
            points.push(ds.normalize() * (plastic.length() / ds.length()));
        }
        let fitted = fit_operator(&strains, &elastic).expect("spans the plane");
        // To rounding: 1e-9 of the stiffness's scale.
        assert!(
            (fitted - d)
                .abs()
                .to_cols_array()
                .iter()
                .all(|&e| e < 1e-9 * 3e7),
            "{fitted:?}"
        );
        let (c, misfit) = fit_circle(&points).expect("a circle");
        assert!((1.0 / (2.0 * c.length()) / h - 1.0).abs() < 1e-9, "{c}");
        assert!((c.normalize() - n).length() < 1e-9);
        assert!(misfit < 1e-9, "{misfit}");
        // Points on a line through the origin fit no circle.
        let line: Vec<DVec2> = (1..5)
            .map(|k| DVec2::new(1.0, 2.0) * f64::from(k))
            .collect();
        assert!(fit_circle(&line).is_none());
    }
}
