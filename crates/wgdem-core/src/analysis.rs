//! Micro- and macro-quantities of a packing: contacts from positions, coordination number,
//! fabric tensor and its anisotropy, void ratio, and what a direct shear curve yields (peak,
//! residual, dilation).
//!
//! Contacts are found from positions alone (overlapping pairs), so the CPU and GPU backends
//! are measured the same way from the state copied back to the host. A direct shear row on
//! the GPU engine sums the same quantities on the device instead (`row_reduce.wgsl`,
//! [`crate::runner::RowSums`]), with the same definition of a touching pair.

use glam::{DMat3, DVec3};

use crate::broadphase::pairs_within;
use crate::particles::Particles;

/// A touching particle pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Touch {
    /// Smaller stable id.
    pub i: u32,
    /// Larger stable id.
    pub j: u32,
    /// Unit normal from `i` to `j`.
    pub normal: DVec3,
    /// Overlap (m).
    pub overlap: f64,
}

/// All overlapping particle pairs.
pub fn touching(p: &Particles) -> Vec<Touch> {
    touching_in(p, None)
}

/// All overlapping particle pairs, through their nearest images where `cell` is given (the
/// spheres inside it); the normal points from `i` to `j`'s image.
pub fn touching_in(p: &Particles, cell: Option<&crate::cell::PeriodicCell>) -> Vec<Touch> {
    let pairs = match cell {
        Some(c) => crate::broadphase::periodic_pairs_within(&p.position, &p.radius, 0.0, c),
        None => pairs_within(&p.position, &p.radius, 0.0),
    };
    pairs
        .into_iter()
        .filter_map(|(i, j)| {
            let (a, b) = (i as usize, j as usize);
            let mut d = p.position[b] - p.position[a];
            if let Some(c) = cell {
                d = c.nearest_image(d);
            }
            let dist = d.length();
            let overlap = p.radius[a] + p.radius[b] - dist;
            (overlap > 0.0 && dist > 0.0).then(|| Touch {
                i,
                j,
                normal: d / dist,
                overlap,
            })
        })
        .collect()
}

/// The mean stress `p = tr σ / 3` and the deviator stress `q = √(3/2 s : s)` of `σ`'s symmetric
/// part, `s` its deviatoric part (both in `σ`'s units; for an axisymmetric state
/// `q = |σ₁ − σ₃|`).
pub fn invariants(stress: DMat3) -> (f64, f64) {
    let sym = (stress + stress.transpose()) * 0.5;
    let p = (sym.x_axis.x + sym.y_axis.y + sym.z_axis.z) / 3.0;
    let s = sym - DMat3::from_diagonal(DVec3::splat(p));
    let ss: f64 = s.to_cols_array().iter().map(|e| e * e).sum();
    (p, (1.5 * ss).sqrt())
}

/// Mean sphere speed `√(2 E_k / Σm)` (m/s), rotation included: what the direct shear's
/// settling criteria bound.
pub fn mean_speed(p: &Particles) -> f64 {
    mean_speed_of(p.kinetic_energy(), p)
}

/// [`mean_speed`] of `p` from a kinetic energy summed elsewhere (J; a GPU shear row's).
pub fn mean_speed_of(kinetic_energy: f64, p: &Particles) -> f64 {
    let mass: f64 = p.mass.iter().sum();
    (2.0 * kinetic_energy / mass).sqrt()
}

/// Mean translational sphere speed `√(Σ m |v|² / Σ m)` (m/s), rotation left out: what the
/// periodic cell's settling criterion bounds. A rattler (a sphere without contacts) keeps
/// whatever spin it left its last contact with, undamped, so with rotation included one
/// spinning rattler can hold a packing that is otherwise at rest above any threshold.
pub fn translational_mean_speed(p: &Particles) -> f64 {
    let mass: f64 = p.mass.iter().sum();
    (twice_translational_kinetic(p) / mass).sqrt()
}

/// `Σ m |v|²` (J): twice the spheres' translational kinetic energy.
fn twice_translational_kinetic(p: &Particles) -> f64 {
    (p.mass.iter().zip(&p.velocity))
        .map(|(m, v)| m * v.length_squared())
        .sum()
}

/// The unbalanced force ratio of a packing in a periodic cell: the spheres' mean net force
/// `(1/N) Σᵢ |Fᵢ|` over the mean contact force, Yade's `unbalancedForce` and PFC's mean force
/// ratio, with the mean contact force taken as the branch-weighted mean normal force that
/// Love–Weber's trace gives exactly, `Σ_c f_c^n |l_c| = 3 p V` (`σ = (1/V) Σ f ⊗ l`), so
/// `f̄ = 3 p_c V / Σ_c |l_c|` with `|l_c| = r_i + r_j − δ_c`. `force` is each sphere's net
/// force of the last step, before any damping (`Particles::force`); `mean_stress` the cell's
/// `p` as `Simulation::stress` gives it, whose kinetic part `Σ m |v|² / 3V` is taken off here
/// to leave the contacts' `p_c` (so a gas, whose pressure is kinetic, is far from balanced). A
/// quasi-static packing has a small ratio even while it creeps, since its spheres'
/// accelerations are small against their contact forces; NaN without contacts or without
/// compression in them.
pub fn unbalanced_force_ratio(
    p: &Particles,
    touches: &[Touch],
    mean_stress: f64,
    volume: f64,
) -> f64 {
    let branches: f64 = (touches.iter())
        .map(|t| p.radius[t.i as usize] + p.radius[t.j as usize] - t.overlap)
        .sum();
    let kinetic = twice_translational_kinetic(p);
    let contact_force = (3.0 * mean_stress * volume - kinetic) / branches;
    if p.is_empty() || !(contact_force > 0.0 && contact_force.is_finite()) {
        return f64::NAN;
    }
    let net = p.force.iter().map(|f| f.length()).sum::<f64>() / p.len() as f64;
    net / contact_force
}

/// Coordination number `CN = 2 N_c / N_p` (He, Zheng & Li 2020, Eq. 27).
pub fn coordination_number(n_contacts: usize, n_particles: usize) -> f64 {
    if n_particles == 0 {
        0.0
    } else {
        2.0 * n_contacts as f64 / n_particles as f64
    }
}

/// Second-order fabric tensor `φ_ij = (1/N_c) Σ n_i n_j` (He et al. Eq. 32); zero without
/// contacts.
pub fn fabric_tensor(contacts: &[Touch]) -> DMat3 {
    if contacts.is_empty() {
        return DMat3::ZERO;
    }
    let mut m = DMat3::ZERO;
    for c in contacts {
        let n = c.normal;
        m += DMat3::from_cols(n * n.x, n * n.y, n * n.z);
    }
    m * (1.0 / contacts.len() as f64)
}

/// Octahedral fabric anisotropy `Ψ = (1/√2) [(φ₁−φ₂)² + (φ₁−φ₃)² + (φ₂−φ₃)²]^{1/2}` (He et al.
/// Eq. 34, after Barreto & O'Sullivan). Computed from invariants, without an eigensolver:
/// `Σ_{a<b} (φ_a − φ_b)² = 3 tr(φ²) − (tr φ)²` for the eigenvalues φ_a of the symmetric φ.
pub fn fabric_anisotropy(phi: &DMat3) -> f64 {
    let tr = phi.x_axis.x + phi.y_axis.y + phi.z_axis.z;
    let tr2: f64 = (0..3)
        .map(|r| (0..3).map(|c| phi.col(c)[r] * phi.col(r)[c]).sum::<f64>())
        .sum();
    (0.5 * (3.0 * tr2 - tr * tr).max(0.0)).sqrt()
}

/// Total solid volume of the spheres (m³), overlaps not subtracted.
pub fn solid_volume(p: &Particles) -> f64 {
    p.radius
        .iter()
        .map(|r| 4.0 / 3.0 * std::f64::consts::PI * r * r * r)
        .sum()
}

/// Points per axis of the quadrature over a sphere that a box's faces cut ([`solid_volume_in`]).
const CUT_SPHERE_POINTS: usize = 64;

/// Solid volume of the spheres inside the axis-aligned box `lo`–`hi` (m³), overlaps not
/// subtracted: a sphere inside whole counts whole, one outside not at all, one that a single
/// face cuts its volume less the cap beyond the face (exact), and one that several faces cut
/// (at an edge or a corner of the box) its part inside, integrated over a 64 × 64 midpoint
/// grid across the sphere in x and y with the chord along z clipped exactly (the error is that
/// of the grid's edge cells: below 10⁻³ of that sphere's volume).
pub fn solid_volume_in(p: &Particles, lo: DVec3, hi: DVec3) -> f64 {
    let ball = |r: f64| 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
    let cap = |h: f64, r: f64| std::f64::consts::PI * h * h * (3.0 * r - h) / 3.0;
    let mut volume = 0.0;
    for (&c, &r) in p.position.iter().zip(&p.radius) {
        if !((c + r).cmpgt(lo).all() && (c - r).cmplt(hi).all()) {
            continue;
        }
        // Depths beyond each face the sphere crosses; one reaching less than 10⁻¹² of its
        // radius past a face touches it (a lattice sphere on a face, to the rounding of its
        // coordinates).
        let beyond: Vec<f64> = (0..3)
            .flat_map(|k| [lo[k] - (c[k] - r), (c[k] + r) - hi[k]])
            .filter(|&h| h > 1e-12 * r)
            .collect();
        volume += match beyond[..] {
            [] => ball(r),
            [h] => ball(r) - cap(h, r),
            _ => cut_sphere_volume(c, r, lo, hi),
        };
    }
    volume
}

/// The part of the sphere `c`, `r` inside the box `lo`–`hi` by quadrature (see
/// [`solid_volume_in`]).
fn cut_sphere_volume(c: DVec3, r: f64, lo: DVec3, hi: DVec3) -> f64 {
    let n = CUT_SPHERE_POINTS;
    let h = 2.0 * r / n as f64;
    let mut volume = 0.0;
    for i in 0..n {
        let x = c.x - r + (i as f64 + 0.5) * h;
        if x < lo.x || x > hi.x {
            continue;
        }
        for j in 0..n {
            let y = c.y - r + (j as f64 + 0.5) * h;
            if y < lo.y || y > hi.y {
                continue;
            }
            let q = r * r - (x - c.x).powi(2) - (y - c.y).powi(2);
            if q <= 0.0 {
                continue;
            }
            let half = q.sqrt();
            let chord = (c.z + half).min(hi.z) - (c.z - half).max(lo.z);
            volume += chord.max(0.0) * h * h;
        }
    }
    volume
}

/// Inertial number `I = γ̇ d √(ρ / σ)` (GDR MiDi 2004): below about 1e-3 a shear is
/// quasi-static.
pub fn inertial_number(shear_rate: f64, diameter: f64, density: f64, stress: f64) -> f64 {
    if stress > 0.0 {
        shear_rate * diameter * (density / stress).sqrt()
    } else {
        0.0
    }
}

/// Running mean over `window` samples, centred (shorter at the ends).
pub fn running_mean(x: &[f64], window: usize) -> Vec<f64> {
    let h = window / 2;
    (0..x.len())
        .map(|k| {
            let lo = k.saturating_sub(h);
            let hi = (k + h + 1).min(x.len());
            x[lo..hi].iter().sum::<f64>() / (hi - lo) as f64
        })
        .collect()
}

/// Slope `dy/dx` by least squares over a centred window of `window` samples (`None` where
/// `x` does not vary within it).
pub fn windowed_slope(x: &[f64], y: &[f64], window: usize) -> Vec<Option<f64>> {
    let h = window.max(2) / 2;
    (0..x.len())
        .map(|k| {
            let lo = k.saturating_sub(h);
            let hi = (k + h + 1).min(x.len());
            let n = (hi - lo) as f64;
            let mx = x[lo..hi].iter().sum::<f64>() / n;
            let my = y[lo..hi].iter().sum::<f64>() / n;
            let (mut sxy, mut sxx) = (0.0, 0.0);
            for q in lo..hi {
                sxy += (x[q] - mx) * (y[q] - my);
                sxx += (x[q] - mx) * (x[q] - mx);
            }
            (sxx > 0.0).then(|| sxy / sxx)
        })
        .collect()
}

#[cfg(test)]
mod tests {

    /// A sphere on a face counts half, on an edge a quarter, at a corner an eighth, inside
    /// whole and outside nothing, to 10⁻³ of its volume (the quadrature's bound); a box that
    /// holds it whole counts it exactly.
    #[test]
    fn spheres_cut_by_a_box_count_their_part_inside() {
        let r = 0.3;
        let whole = 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        let (lo, hi) = (DVec3::ZERO, DVec3::ONE);
        for (centre, fraction) in [
            (DVec3::new(0.5, 0.5, 0.5), 1.0),
            (DVec3::new(0.5, 0.5, 0.0), 0.5),
            (DVec3::new(1.0, 0.5, 0.5), 0.5),
            (DVec3::new(0.0, 1.0, 0.5), 0.25),
            (DVec3::new(1.0, 1.0, 1.0), 0.125),
            (DVec3::new(0.5, 0.5, 1.3), 0.0),
            (DVec3::new(0.5, 0.5, 1.0 + r), 0.0),
        ] {
            let mut p = Particles::default();
            p.push(centre, r, 1.0, 0);
            let v = solid_volume_in(&p, lo, hi);
            assert!(
                (v - fraction * whole).abs() <= 1e-3 * whole,
                "{centre}: {v} against {}",
                fraction * whole
            );
        }
        let mut p = Particles::default();
        p.push(DVec3::splat(0.5), r, 1.0, 0);
        assert_eq!(solid_volume_in(&p, lo, hi), whole);
        // One face: its cap, exactly; a sphere a hair through a face, all but a hair.
        let mut p = Particles::default();
        p.push(DVec3::new(0.5, 0.5, 0.9), r, 1.0, 0);
        let h: f64 = 0.2;
        let cap = std::f64::consts::PI * h * h * (3.0 * r - h) / 3.0;
        assert!((solid_volume_in(&p, lo, hi) - (whole - cap)).abs() <= 1e-15 * whole);
        let mut p = Particles::default();
        p.push(DVec3::new(1.0 - r + 1e-17, 0.5, 1.0 - r + 1e-17), r, 1.0, 0);
        assert_eq!(solid_volume_in(&p, lo, hi), whole);
    }

    use super::*;

    /// A spinning rattler counts in the mean speed but not in the translational one, which is
    /// the mass-weighted RMS of the spheres' velocities: spheres of masses m and 8m at 3 and
    /// 0 m/s give √(9m / 9m) = 1 m/s.
    #[test]
    fn the_translational_mean_speed_leaves_a_spinning_rattler_out() {
        let mut p = Particles::default();
        p.push(DVec3::ZERO, 0.5, 1.0, 0);
        p.push(DVec3::X * 3.0, 1.0, 1.0, 0);
        p.velocity[0] = DVec3::new(0.0, 3.0, 0.0);
        assert!((translational_mean_speed(&p) - 1.0).abs() <= 1e-15);
        p.velocity[0] = DVec3::ZERO;
        p.angular_velocity[1] = DVec3::new(0.0, 0.0, 10.0);
        assert_eq!(translational_mean_speed(&p), 0.0);
        let spin = (p.inertia[1] * 100.0 / (p.mass[0] + p.mass[1])).sqrt();
        assert!((mean_speed(&p) - spin).abs() <= 1e-15 * spin);
    }

    #[test]
    fn isotropic_and_uniaxial_fabric() {
        let touch = |n: DVec3| Touch {
            i: 0,
            j: 1,
            normal: n,
            overlap: 0.0,
        };
        // Six normals along ±x, ±y, ±z: φ = I/3, Ψ = 0.
        let iso: Vec<Touch> = [
            DVec3::X,
            -DVec3::X,
            DVec3::Y,
            -DVec3::Y,
            DVec3::Z,
            -DVec3::Z,
        ]
        .into_iter()
        .map(touch)
        .collect();
        let phi = fabric_tensor(&iso);
        assert!((phi - DMat3::IDENTITY / 3.0).abs_diff_eq(DMat3::ZERO, 1e-15));
        assert!(fabric_anisotropy(&phi) < 1e-12);
        // All normals along z: eigenvalues (1, 0, 0), Ψ = (1/√2)·√2 = 1.
        let uni = vec![touch(DVec3::Z), touch(-DVec3::Z)];
        assert!((fabric_anisotropy(&fabric_tensor(&uni)) - 1.0).abs() < 1e-12);
        // Eigenvalues (1/2, 1/2, 0): Ψ = (1/√2)·√(0 + 1/4 + 1/4) = 1/2.
        let planar = vec![touch(DVec3::X), touch(DVec3::Y)];
        assert!((fabric_anisotropy(&fabric_tensor(&planar)) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn slope_of_a_line_and_running_mean() {
        let x: Vec<f64> = (0..20).map(|k| k as f64 * 0.1).collect();
        let y: Vec<f64> = x.iter().map(|v| 3.0 * v + 1.0).collect();
        for s in windowed_slope(&x, &y, 5) {
            assert!((s.expect("x varies") - 3.0).abs() < 1e-12);
        }
        let m = running_mean(&[1.0, 2.0, 3.0, 4.0], 3);
        assert_eq!(m, vec![1.5, 2.0, 3.0, 3.5]);
    }

    #[test]
    fn touching_pairs_and_coordination() {
        let mut p = Particles::default();
        p.push(DVec3::ZERO, 0.01, 1000.0, 0);
        p.push(DVec3::new(0.019, 0.0, 0.0), 0.01, 1000.0, 0);
        p.push(DVec3::new(0.0, 0.021, 0.0), 0.01, 1000.0, 0);
        let t = touching(&p);
        assert_eq!(t.len(), 1);
        assert!((t[0].overlap - 0.001).abs() < 1e-12);
        assert_eq!(coordination_number(t.len(), p.len()), 2.0 / 3.0);
    }
}
