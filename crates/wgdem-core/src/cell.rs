//! The periodic cell: a parallelepiped spanned by three edge vectors, periodic along each, that
//! may deform with a homogeneous velocity gradient.
//!
//! The edges are the columns of `H` (m); a point's fractional coordinates are
//! `s = H⁻¹ (x − origin)`, and the cell holds `0 ≤ s_k < 1`. A sphere leaving through a face
//! re-enters through the opposite one (its position shifted by `−H k` for the whole-cell
//! shift `k`), and a pair interacts through its nearest image: the branch vector
//! `d = x_j − x_i − H round(H⁻¹ (x_j − x_i))`. Rounding the fractional difference finds the
//! nearest image of every pair closer than half the cell's smallest width (the distance between
//! a pair of opposite faces, `V / |a × b|` and so on): its fractional components
//! `s_k = n_k · d / w_k` (`n_k` the face's unit normal) are then below ½. So the cell must be
//! wider than twice the neighbour lists' reach along each axis ([`PeriodicCell::check_reach`]).
//!
//! A deforming cell follows `Ḣ = L H` with the velocity gradient `L` (1/s, `L_ij = ∂v_i/∂x_j`,
//! Yade's `velGrad`), a step of `Δt` applying its exact solution for `L` constant over the
//! step, `H ← exp(L Δt) H` (so that a rigid rotation stays a rotation, however many steps it
//! takes; for a simple shear, whose `L² = 0`, it is `I + L Δt`). Spheres carry a fluctuating
//! velocity `v'` on top of the affine field `L (x − origin)`, their centres mapped with the
//! cell; a pair's relative velocity is `v'_j − v'_i + L d` whether or not it crosses a face,
//! which is the affine velocity jump `L H k` of Lees–Edwards boundaries in any direction.
//! The GPU engine takes the cell of every step from the host, which advances it with this
//! module (`wgdem-gpu`'s engine/cell.rs).

use glam::{DMat3, DVec3};
use serde::{Deserialize, Serialize};

/// A periodic parallelepiped and its velocity gradient.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PeriodicCell {
    /// The edge vectors as columns (m).
    h: DMat3,
    /// `H⁻¹` (1/m), kept with `h`.
    inverse: DMat3,
    /// The corner the edges start from; it does not move (m).
    origin: DVec3,
    /// `L = ∂v/∂x` (1/s); `Ḣ = L H`.
    velocity_gradient: DMat3,
}

impl PeriodicCell {
    /// A cell of edges `edges` (m) from `origin` (m) with velocity gradient `l` (rows
    /// `[L_x·, L_y·, L_z·]`, 1/s). Refused with the reason (the caller names the field): a
    /// value that is not finite, edges that are flat or left-handed (`a · (b × c) ≤ 0`), or a
    /// cell whose volume, widths or inverse overflow or vanish in f64.
    pub fn new(edges: [DVec3; 3], origin: DVec3, l: DMat3) -> Result<Self, String> {
        if !edges.iter().all(|e| e.is_finite()) {
            return Err("the edge vectors must be finite (m)".to_owned());
        }
        if !origin.is_finite() {
            return Err("the origin must be finite (m)".to_owned());
        }
        if !l.is_finite() {
            return Err("the velocity gradient must be finite (1/s)".to_owned());
        }
        Self::from_parts(DMat3::from_cols(edges[0], edges[1], edges[2]), origin, l)
    }

    fn from_parts(h: DMat3, origin: DVec3, velocity_gradient: DMat3) -> Result<Self, String> {
        let volume = h.determinant();
        if !volume.is_finite() {
            return Err(format!(
                "the edges span a volume beyond f64's range ({volume:e} m³); use edges of a size a packing can have"
            ));
        }
        if volume <= 0.0 {
            return Err(format!(
                "the edges span no right-handed volume (a · (b × c) = {volume:e} m³): they are flat, or left-handed (swap two of them)"
            ));
        }
        let inverse = h.inverse();
        let cell = Self {
            h,
            inverse,
            origin,
            velocity_gradient,
        };
        let widths = cell.widths();
        if !inverse.is_finite() || !widths.iter().all(|w| w.is_finite() && *w > 0.0) {
            return Err(format!(
                "the cell is too flat for f64 (widths {:e}, {:e}, {:e} m)",
                widths[0], widths[1], widths[2]
            ));
        }
        Ok(cell)
    }

    /// The edge vectors (m).
    pub fn edges(&self) -> [DVec3; 3] {
        [self.h.x_axis, self.h.y_axis, self.h.z_axis]
    }

    /// `H`, the edges as columns (m).
    pub fn matrix(&self) -> DMat3 {
        self.h
    }

    /// The fixed corner (m).
    pub fn origin(&self) -> DVec3 {
        self.origin
    }

    /// `L` (1/s).
    pub fn velocity_gradient(&self) -> DMat3 {
        self.velocity_gradient
    }

    /// Sets `L` (1/s); refused where not finite.
    pub fn set_velocity_gradient(&mut self, l: DMat3) -> Result<(), String> {
        if !l.is_finite() {
            return Err("the velocity gradient must be finite (1/s)".to_owned());
        }
        self.velocity_gradient = l;
        Ok(())
    }

    /// The volume `det H` (m³).
    pub fn volume(&self) -> f64 {
        self.h.determinant()
    }

    /// The distances between opposite faces (m): `V / |b × c|`, `V / |c × a|`, `V / |a × b|`.
    pub fn widths(&self) -> [f64; 3] {
        let [a, b, c] = self.edges();
        let v = self.volume();
        [
            v / b.cross(c).length(),
            v / c.cross(a).length(),
            v / a.cross(b).length(),
        ]
    }

    /// Refuses a cell in which a pair within `reach` (m) could have two images within it: the
    /// smallest width must exceed `2 reach`. The message names both.
    pub fn check_reach(&self, reach: f64) -> Result<(), String> {
        let w = self.widths();
        let smallest = w.iter().copied().fold(f64::INFINITY, f64::min);
        // `!(a > b)` so that a NaN or infinite reach is refused too.
        if !(smallest > 2.0 * reach && reach.is_finite()) {
            return Err(format!(
                "the cell's widths ({:e}, {:e}, {:e} m) must all exceed twice the neighbour reach ({reach:e} m: the largest diameter plus the skin and any bridge reach); make the cell larger or the spheres smaller",
                w[0], w[1], w[2]
            ));
        }
        Ok(())
    }

    /// Fractional coordinates `H⁻¹ (x − origin)` of `x`.
    pub fn fractional(&self, x: DVec3) -> DVec3 {
        self.inverse * (x - self.origin)
    }

    /// `x` moved into the cell by whole edges, and the shift `k` it was moved by (the new
    /// position is `x − H k`). A point inside is returned as it is, bit for bit.
    pub fn wrap(&self, x: DVec3) -> (DVec3, [i64; 3]) {
        let s = self.fractional(x);
        let k = s.floor();
        if k == DVec3::ZERO {
            return (x, [0; 3]);
        }
        (x - self.h * k, [k.x as i64, k.y as i64, k.z as i64])
    }

    /// The nearest image of the vector `d` (m) between two points of the cell: `d − H round(H⁻¹ d)`
    /// (exact for any `d` shorter than half the smallest width; see the module docs).
    pub fn nearest_image(&self, d: DVec3) -> DVec3 {
        let k = (self.inverse * d).round();
        if k == DVec3::ZERO {
            return d;
        }
        d - self.h * k
    }

    /// The map of one step of `dt` (s) at the velocity gradient, `exp(L Δt)`: the cell's edges
    /// and the affine part of the spheres' motion follow it.
    pub fn step_map(&self, dt: f64) -> DMat3 {
        exp(self.velocity_gradient * dt)
    }

    /// The cell after one step of `dt` (s) at its velocity gradient: `H ← exp(L Δt) H`, the map
    /// the affine part of the spheres' motion follows too (so their fractional coordinates
    /// keep to rounding). Refused where it turns flat or beyond f64.
    pub fn advanced(&self, dt: f64) -> Result<Self, String> {
        Self::from_parts(
            self.step_map(dt) * self.h,
            self.origin,
            self.velocity_gradient,
        )
    }
}

/// `exp(A)` of a 3×3 matrix: scaled by 2⁻ˢ to a norm below ½, its Taylor series summed until a
/// term no longer changes the sum (at most 30 terms; ½³⁰/30! is far below f64's precision),
/// then squared `s` times. A step's `L Δt` is far below ½, so `s` is 0 there.
fn exp(a: DMat3) -> DMat3 {
    let norm = a.to_cols_array().iter().map(|e| e.abs()).sum::<f64>();
    if !norm.is_finite() {
        return DMat3::NAN;
    }
    let mut squarings = 0;
    let mut scaled = a;
    let mut n = norm;
    while n > 0.5 && squarings < 2000 {
        scaled *= 0.5;
        n *= 0.5;
        squarings += 1;
    }
    let mut sum = DMat3::IDENTITY;
    let mut term = DMat3::IDENTITY;
    for k in 1..=30 {
        term = term * scaled * (1.0 / k as f64);
        let next = sum + term;
        if next == sum {
            break;
        }
        sum = next;
    }
    for _ in 0..squarings {
        sum = sum * sum;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube(a: f64) -> PeriodicCell {
        PeriodicCell::new(
            [DVec3::X * a, DVec3::Y * a, DVec3::Z * a],
            DVec3::ZERO,
            DMat3::ZERO,
        )
        .expect("accepted")
    }

    #[test]
    fn a_cube_has_its_volume_widths_and_wrap() {
        let c = cube(0.5);
        assert_eq!(c.volume(), 0.125);
        assert_eq!(c.widths(), [0.5; 3]);
        let (x, k) = c.wrap(DVec3::new(0.625, -0.125, 0.25));
        assert_eq!(x, DVec3::new(0.125, 0.375, 0.25));
        assert_eq!(k, [1, -1, 0]);
        // Inside: the same bits.
        let inside = DVec3::new(0.1, 0.2, 0.3);
        assert_eq!(c.wrap(inside), (inside, [0; 3]));
    }

    #[test]
    fn the_nearest_image_of_a_sheared_cell_is_the_shortest() {
        // A cell sheared by 0.3 of its height along x.
        let c = PeriodicCell::new(
            [
                DVec3::new(1.0, 0.0, 0.0),
                DVec3::new(0.0, 1.0, 0.0),
                DVec3::new(0.3, 0.0, 1.0),
            ],
            DVec3::ZERO,
            DMat3::ZERO,
        )
        .expect("accepted");
        let w = c.widths();
        assert!((w[0] - 1.0 / 1.09f64.sqrt()).abs() < 1e-12, "{w:?}");
        assert_eq!(w[1], 1.0);
        assert!((w[2] - 1.0).abs() < 1e-15);
        // Every short vector is its own nearest image; shifted by any cell vector it comes back.
        for (i, d) in [
            DVec3::new(0.2, -0.1, 0.3),
            DVec3::new(-0.3, 0.25, -0.2),
            DVec3::new(0.05, 0.4, 0.1),
        ]
        .into_iter()
        .enumerate()
        {
            assert!(d.length() < 0.5 * w[0], "case {i}");
            assert_eq!(c.nearest_image(d), d);
            for k in [[1.0, 0.0, 0.0], [0.0, -1.0, 1.0], [2.0, 1.0, -1.0]] {
                let shifted = d + c.matrix() * DVec3::from_array(k);
                let back = c.nearest_image(shifted);
                assert!((back - d).length() < 1e-14, "case {i}, k {k:?}: {back}");
            }
        }
    }

    #[test]
    fn advancing_keeps_fractional_coordinates_and_strains_the_cell() {
        // Simple shear: v_x = γ̇ z.
        let mut l = DMat3::ZERO;
        l.z_axis.x = 2.0;
        let mut c = cube(1.0);
        c.set_velocity_gradient(l).expect("accepted");
        let x = DVec3::new(0.25, 0.5, 0.75);
        let s = c.fractional(x);
        let next = c.advanced(0.01).expect("accepted");
        let moved = c.origin() + c.step_map(0.01) * (x - c.origin());
        assert!((next.fractional(moved) - s).length() < 1e-15);
        // L² = 0: exp(L Δt) = I + L Δt exactly.
        assert_eq!(next.edges()[2], DVec3::new(0.02, 0.0, 1.0));
        assert_eq!(next.volume(), 1.0);
    }

    /// A rigid rotation at 1 rad/s for π/2 s in 1 000 steps turns the cell's edges by 90° to
    /// 1e-13 and keeps its volume to 1e-13 (`I + L Δt` would grow it by 0.12 %).
    #[test]
    fn a_rigid_rotation_stays_a_rotation() {
        let mut c = cube(1.0);
        let mut l = DMat3::ZERO;
        l.x_axis.y = 1.0;
        l.y_axis.x = -1.0;
        c.set_velocity_gradient(l).expect("accepted");
        let dt = std::f64::consts::FRAC_PI_2 / 1000.0;
        for _ in 0..1000 {
            c = c.advanced(dt).expect("accepted");
        }
        let [a, b, e] = c.edges();
        assert!((a - DVec3::Y).length() < 1e-13, "{a}");
        assert!((b + DVec3::X).length() < 1e-13, "{b}");
        assert_eq!(e, DVec3::Z);
        assert!((c.volume() - 1.0).abs() < 1e-13);
        // And a general L against its series to many terms: exp(A) exp(−A) = I.
        let a = DMat3::from_cols_array(&[0.3, -0.2, 0.1, 0.05, -0.4, 0.2, -0.1, 0.15, 0.25]) * 3.0;
        let product = exp(a) * exp(-a);
        assert!(
            (product - DMat3::IDENTITY)
                .to_cols_array()
                .iter()
                .all(|e| e.abs() < 1e-14),
            "{product}"
        );
        assert_eq!(exp(DMat3::ZERO), DMat3::IDENTITY);
    }

    #[test]
    fn bad_cells_are_refused_even_at_the_extremes_of_f64() {
        let l = DMat3::ZERO;
        let refuse = |e: [DVec3; 3]| PeriodicCell::new(e, DVec3::ZERO, l).expect_err("refused");
        assert!(refuse([DVec3::X, DVec3::Y, DVec3::Y]).contains("flat"));
        assert!(refuse([DVec3::Y, DVec3::X, DVec3::Z]).contains("left-handed"));
        assert!(refuse([DVec3::X * f64::NAN, DVec3::Y, DVec3::Z]).contains("finite"));
        assert!(refuse([DVec3::X * f64::INFINITY, DVec3::Y, DVec3::Z]).contains("finite"));
        // Edges near f64's range: the volume overflows, and is refused rather than taken as
        // infinitely roomy.
        for big in [1e300, f64::MAX] {
            let e = refuse([DVec3::X * big, DVec3::Y * big, DVec3::Z * big]);
            assert!(e.contains("beyond f64"), "{big:e}: {e}");
        }
        // And tiny ones: the volume underflows to zero.
        assert!(refuse([DVec3::X * 1e-120, DVec3::Y * 1e-120, DVec3::Z * 1e-120]).contains("flat"));
        let mut bad = DMat3::ZERO;
        bad.x_axis.y = f64::INFINITY;
        assert!(
            PeriodicCell::new([DVec3::X, DVec3::Y, DVec3::Z], DVec3::ZERO, bad)
                .expect_err("refused")
                .contains("velocity gradient")
        );
        assert!(
            PeriodicCell::new([DVec3::X, DVec3::Y, DVec3::Z], DVec3::NAN, l)
                .expect_err("refused")
                .contains("origin")
        );
    }

    #[test]
    fn the_reach_is_checked_against_the_smallest_width() {
        let c = cube(1.0);
        assert!(c.check_reach(0.49).is_ok());
        let e = c.check_reach(0.5).expect_err("refused");
        assert!(e.contains("1e0") && e.contains("5e-1"), "{e}");
        for reach in [f64::INFINITY, f64::NAN, f64::MAX, 1e300] {
            assert!(c.check_reach(reach).is_err(), "{reach:e}");
        }
        // A cell a compression flattened beyond f64 is refused as it advances (exp(−10⁵)
        // underflows to 0), as is a rate that overflows.
        let mut l = DMat3::ZERO;
        l.x_axis.x = -1e7;
        let mut squeezed = c;
        squeezed.set_velocity_gradient(l).expect("accepted");
        let e = squeezed.advanced(0.01).expect_err("refused");
        assert!(e.contains("flat"), "{e}");
        l.x_axis.x = 1e300;
        squeezed.set_velocity_gradient(l).expect("accepted");
        assert!(squeezed.advanced(1e10).is_err());
    }
}
