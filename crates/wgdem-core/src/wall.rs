//! Rigid walls: infinite planes and finite rectangular plates, moving at a prescribed velocity.
//!
//! A wall touches a sphere where the sphere's surface passes the wall's closest point. The
//! contact normal points from the wall to the sphere's centre, so in the contact law the wall is
//! body A and the particle body B (see `contact`). Plates are thin and two-sided: their edges and
//! corners are contact points too, which a direct shear box needs at the gap between its halves.

use glam::DVec3;
use serde::{Deserialize, Serialize};

/// Geometry of a wall at its current position.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum WallShape {
    /// Infinite plane through `point`; particles live on the side `normal` points to.
    Plane {
        /// A point on the plane (m).
        point: DVec3,
        /// Unit normal pointing into the particle domain.
        normal: DVec3,
    },
    /// Rectangle centred at `center`, spanned by `u_axis` and `normal × u_axis`.
    Plate {
        /// Centre (m).
        center: DVec3,
        /// Unit normal.
        normal: DVec3,
        /// Unit in-plane axis, orthogonal to `normal`.
        u_axis: DVec3,
        /// Half lengths along `u_axis` and `normal × u_axis` (m).
        half_extents: [f64; 2],
    },
}

/// A rigid wall and the force the particles exert on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wall {
    /// Name used in outputs (`wall_<name>_fx_N`, ...).
    pub name: String,
    /// Current geometry.
    pub shape: WallShape,
    /// Prescribed translational velocity (m/s); the host may change it between steps.
    pub velocity: DVec3,
    /// Index of the wall's material.
    pub material: usize,
    /// Force exerted by the particles on the wall during the last step (N).
    pub force: DVec3,
    /// Torque of that force about [`Wall::reference_point`] (N·m).
    pub torque: DVec3,
}

/// Where a sphere touches a wall.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WallContact {
    /// Overlap δ > 0 (m).
    pub overlap: f64,
    /// Unit normal from the wall to the sphere centre.
    pub normal: DVec3,
}

impl Wall {
    /// The plane's point or the plate's centre: the reference point of the torque.
    pub fn reference_point(&self) -> DVec3 {
        match self.shape {
            WallShape::Plane { point, .. } => point,
            WallShape::Plate { center, .. } => center,
        }
    }

    /// Moves the wall by `velocity * dt`.
    pub fn advance(&mut self, dt: f64) {
        let d = self.velocity * dt;
        match &mut self.shape {
            WallShape::Plane { point, .. } => *point += d,
            WallShape::Plate { center, .. } => *center += d,
        }
    }

    /// Signed distance of `x` from a plane wall (positive on the particle side); `None` for
    /// plates, which have no inside.
    pub fn signed_distance(&self, x: DVec3) -> Option<f64> {
        match self.shape {
            WallShape::Plane { point, normal } => Some((x - point).dot(normal)),
            WallShape::Plate { .. } => None,
        }
    }

    /// Contact with a sphere of centre `x` and radius `r`, if they overlap.
    pub fn contact(&self, x: DVec3, r: f64) -> Option<WallContact> {
        match self.shape {
            WallShape::Plane { point, normal } => {
                let d = (x - point).dot(normal);
                // A sphere entirely behind the plane has left the domain: no contact.
                (d < r && d > -r).then_some(WallContact {
                    overlap: r - d,
                    normal,
                })
            }
            WallShape::Plate {
                center,
                normal,
                u_axis,
                half_extents,
            } => {
                let v_axis = normal.cross(u_axis);
                let rel = x - center;
                let cu = rel.dot(u_axis).clamp(-half_extents[0], half_extents[0]);
                let cv = rel.dot(v_axis).clamp(-half_extents[1], half_extents[1]);
                let w = rel - u_axis * cu - v_axis * cv;
                let d = w.length();
                if d >= r {
                    return None;
                }
                let n = if d > 0.0 { w / d } else { normal };
                Some(WallContact {
                    overlap: r - d,
                    normal: n,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plate() -> Wall {
        Wall {
            name: "p".into(),
            shape: WallShape::Plate {
                center: DVec3::ZERO,
                normal: DVec3::Z,
                u_axis: DVec3::X,
                half_extents: [0.01, 0.02],
            },
            velocity: DVec3::ZERO,
            material: 0,
            force: DVec3::ZERO,
            torque: DVec3::ZERO,
        }
    }

    #[test]
    fn plate_touches_on_both_faces_edges_and_corners() {
        let w = plate();
        let r = 0.001;
        // Face, above and below: normal ±z, overlap r − |z|.
        let c = w
            .contact(DVec3::new(0.005, -0.01, 0.0008), r)
            .expect("face above");
        assert!((c.overlap - 0.0002).abs() < 1e-15 && c.normal == DVec3::Z);
        let c = w
            .contact(DVec3::new(0.0, 0.0, -0.0005), r)
            .expect("face below");
        assert!((c.overlap - 0.0005).abs() < 1e-15 && c.normal == -DVec3::Z);
        // Beyond the edge x = 0.01, level with the plate: normal +x.
        let c = w.contact(DVec3::new(0.0106, 0.0, 0.0), r).expect("edge");
        assert!((c.overlap - 0.0004).abs() < 1e-12);
        assert!((c.normal - DVec3::X).length() < 1e-12);
        // Past the corner (0.01, 0.02): normal along the diagonal.
        let d = DVec3::new(0.0005, 0.0005, 0.0);
        let c = w
            .contact(DVec3::new(0.01, 0.02, 0.0) + d, r)
            .expect("corner");
        assert!((c.overlap - (r - d.length())).abs() < 1e-15);
        assert!((c.normal - d.normalize()).length() < 1e-12);
        // Out of reach.
        assert!(w.contact(DVec3::new(0.0125, 0.0, 0.0), r).is_none());
        assert!(w.contact(DVec3::new(0.0, 0.0, 0.0011), r).is_none());
    }

    #[test]
    fn plane_ignores_spheres_fully_behind_it_and_moves() {
        let mut w = plate();
        w.shape = WallShape::Plane {
            point: DVec3::ZERO,
            normal: DVec3::Z,
        };
        assert!(w.contact(DVec3::new(0.0, 0.0, -0.002), 0.001).is_none());
        assert_eq!(w.signed_distance(DVec3::new(5.0, 1.0, 0.25)), Some(0.25));
        w.velocity = DVec3::new(0.0, 0.0, 1e-3);
        w.advance(2.0);
        assert_eq!(w.reference_point(), DVec3::new(0.0, 0.0, 2e-3));
    }
}
