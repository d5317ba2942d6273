//! Rolling resistance: a torque against the relative rolling of two bodies in contact, after
//! Ai, Chen, Rotter & Ooi (2011), "Assessment of rolling resistance models in discrete element
//! simulations", Powder Technology 206:269–282.
//!
//! - [`RollingModel::Cdt`], their type A ("constant directional torque", LIGGGHTS `cdt`):
//!   `M_r = −μ_r R_r F_n ω_r / |ω_r|`, no history. At rest its direction flips with ω_r from
//!   step to step, so it cannot hold a static torque: a sphere on a slope below the threshold
//!   creeps (about 0.1 mm/s in `tests/rolling.rs`, against 0.7 m/s² of rolling above it), as
//!   Ai et al. found of type A. Use type C for packings at rest.
//! - [`RollingModel::Epsd`], their type C (elastic–plastic spring–dashpot, LIGGGHTS `epsd`):
//!   a spring torque accumulated from the relative rotation, `M_k ← M_k − k_r Δθ_r`,
//!   limited to `M_m = μ_r R_r F_n`, plus a dashpot `−C_r ω_r` while the spring is below its
//!   limit (their factor f = 0 at full mobilisation) with `C_r = η_r 2 √(I_r k_r)` and
//!   `I_r = ((I_A + m_A R_A²)⁻¹ + (I_B + m_B R_B²)⁻¹)⁻¹`. The rolling stiffness is
//!   `k_r = 2.25 k_n μ_r² R_r²` (their choice, after Iwashita & Oda) unless given, with
//!   `k_n` the contact's current normal stiffness `dF_n/dδ` (Hooke: `k_n`; Hertz: `3/2 k_n f`).
//!
//! `R_r = R_A R_B / (R_A + R_B)` (R against a wall). `ω_r` is the tangential part of the
//! angular velocity of B relative to A (a twist about the normal is not rolling). The torque
//! returned acts on B; A receives its negative. Like the tangential spring, the spring torque
//! is kept in the current tangent plane (its normal component removed each step).

use glam::DVec3;
use serde::{Deserialize, Serialize};

/// Which rolling resistance model a material pair uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RollingModel {
    /// Type A: constant directional torque.
    Cdt,
    /// Type C: elastic–plastic spring–dashpot.
    Epsd,
}

/// Rolling resistance of a material pair (before a contact's size and mass enter).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rolling {
    /// The model.
    pub model: RollingModel,
    /// Rolling friction coefficient μ_r (−).
    pub friction: f64,
    /// Rolling stiffness k_r (N·m/rad), `None` for `2.25 k_n μ_r² R_r²` (epsd only).
    pub stiffness: Option<f64>,
    /// Rolling damping ratio η_r in [0, 1] (epsd only).
    pub damping: f64,
}

/// Rolling resistance of one contact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RollingParams {
    /// The pair's rolling resistance.
    pub rolling: Rolling,
    /// `R_r` (m).
    pub radius: f64,
    /// `I_r` (kg·m²).
    pub inertia: f64,
}

impl RollingParams {
    /// For bodies of `radii` (m) and `masses` (kg), solid spheres; a wall is infinite in both.
    pub fn new(rolling: Rolling, radii: (f64, f64), masses: (f64, f64)) -> Self {
        let rolling_inertia = |r: f64, m: f64| 1.4 * m * r * r; // I + m R² of a solid sphere
        let radius = if radii.0.is_infinite() {
            radii.1
        } else if radii.1.is_infinite() {
            radii.0
        } else {
            radii.0 * radii.1 / (radii.0 + radii.1)
        };
        let inv = |r: f64, m: f64| {
            if r.is_infinite() || m.is_infinite() {
                0.0
            } else {
                1.0 / rolling_inertia(r, m)
            }
        };
        Self {
            rolling,
            radius,
            inertia: 1.0 / (inv(radii.0, masses.0) + inv(radii.1, masses.1)),
        }
    }

    /// The rolling stiffness k_r for a contact of normal stiffness `kn` (N/m).
    pub fn stiffness(&self, kn: f64) -> f64 {
        self.rolling.stiffness.unwrap_or_else(|| {
            2.25 * kn * self.rolling.friction.powi(2) * self.radius * self.radius
        })
    }
}

/// The motion and load of one contact for one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RollingStep {
    /// Unit normal from A to B.
    pub normal: DVec3,
    /// Angular velocity of B relative to A at the current time (rad/s), for the dashpot and
    /// type A's direction.
    pub spin: DVec3,
    /// Rotation of B relative to A over the last step (rad), for the spring.
    pub rotation: DVec3,
    /// Normal force (N), positive when repulsive.
    pub normal_force: f64,
    /// Normal stiffness `dF_n/dδ` (N/m).
    pub normal_stiffness: f64,
}

/// The rolling torque on B (N·m), updating the spring torque `spring` (type C; untouched by
/// type A).
pub fn rolling_torque(p: &RollingParams, spring: &mut DVec3, s: &RollingStep) -> DVec3 {
    let n = s.normal;
    let omega = s.spin - n * n.dot(s.spin);
    let limit = p.rolling.friction * p.radius * s.normal_force.max(0.0);
    match p.rolling.model {
        RollingModel::Cdt => {
            let len = omega.length();
            if len > 0.0 {
                -omega * (limit / len)
            } else {
                DVec3::ZERO
            }
        }
        RollingModel::Epsd => {
            let kr = p.stiffness(s.normal_stiffness);
            let turn = s.rotation - n * n.dot(s.rotation);
            // The spring, turned into the current tangent plane, loaded by the rotation.
            let mut m = *spring - n * n.dot(*spring) - turn * kr;
            let len = m.length();
            let mut torque = m;
            if len >= limit {
                // Full mobilisation: limited, no dashpot.
                m = if len > 0.0 { m * (limit / len) } else { m };
                torque = m;
            } else {
                let c = p.rolling.damping * 2.0 * (p.inertia * kr).sqrt();
                torque -= omega * c;
            }
            *spring = m;
            torque
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(model: RollingModel) -> RollingParams {
        RollingParams::new(
            Rolling {
                model,
                friction: 0.1,
                stiffness: None,
                damping: 0.0,
            },
            (f64::INFINITY, 0.005),
            (f64::INFINITY, 1e-3),
        )
    }

    /// Type A: the full torque μ_r R F_n against the rolling, none for a twist.
    #[test]
    fn cdt_opposes_rolling_with_the_full_torque() {
        let p = params(RollingModel::Cdt);
        let mut spring = DVec3::ZERO;
        let step = |spin| RollingStep {
            normal: DVec3::Z,
            spin,
            rotation: DVec3::ZERO,
            normal_force: 2.0,
            normal_stiffness: 1e5,
        };
        let t = rolling_torque(&p, &mut spring, &step(DVec3::new(0.0, 3.0, 0.7)));
        assert!((t - DVec3::new(0.0, -0.1 * 0.005 * 2.0, 0.0)).length() < 1e-15);
        let t = rolling_torque(&p, &mut spring, &step(DVec3::new(0.0, 0.0, 5.0)));
        assert_eq!(t, DVec3::ZERO);
        assert_eq!(spring, DVec3::ZERO);
    }

    /// Type C: the spring torque grows by k_r per radian up to μ_r R F_n, stays there while
    /// the rotation goes on, and unloads with k_r when it reverses (type C's loop).
    #[test]
    fn epsd_is_elastic_then_plastic_and_unloads_elastically() {
        let p = params(RollingModel::Epsd);
        let (f_n, kn) = (2.0, 1e5);
        let kr = 2.25 * kn * 0.01 * 0.005 * 0.005;
        let limit = 0.1 * 0.005 * f_n;
        let mut spring = DVec3::ZERO;
        let turn = |dtheta: f64, spring: &mut DVec3| {
            rolling_torque(
                &p,
                spring,
                &RollingStep {
                    normal: DVec3::Z,
                    spin: DVec3::ZERO,
                    rotation: DVec3::new(dtheta, 0.0, 0.0),
                    normal_force: f_n,
                    normal_stiffness: kn,
                },
            )
            .x
        };
        let theta_y = limit / kr; // rotation at full mobilisation
        let t = turn(0.5 * theta_y, &mut spring);
        assert!((t + 0.5 * limit).abs() < 1e-12 * limit, "elastic: {t}");
        let t = turn(theta_y, &mut spring);
        assert!((t + limit).abs() < 1e-12 * limit, "limited: {t}");
        let t = turn(-0.5 * theta_y, &mut spring);
        assert!((t + 0.5 * limit).abs() < 1e-12 * limit, "unloading: {t}");
        let t = turn(-3.0 * theta_y, &mut spring);
        assert!((t - limit).abs() < 1e-12 * limit, "reversed limit: {t}");
    }
}
