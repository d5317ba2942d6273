//! Kuhn, Suzuki & Daouadji's rigid-rotation check (Section 3, Fig. 6, Eq. 24): the loaded
//! assembly is turned as a rigid body about a coordinate axis, 90° in 1 000 increments. No
//! contact moves relative to its particles, so an observer turning with the assembly sees no
//! force change, and the stress must turn with it: `σ⁹⁰ = Ω σ Ωᵀ`. Restored to the original
//! frame by Eq. 24, `σ⁰ = Ωᵀ σ⁹⁰ Ω`, it must equal `σ`; an algorithm that does not turn the
//! tangential forces with their contacts (projection and twirl, Eq. 22–23) gives a `σ⁰` that
//! is "not even a tensor" (their Fig. 6b–c).
//!
//! The cell's velocity gradient is the rotation's spin tensor `L = ω [n]×` and every sphere
//! gets the spin `ω n` on top of its own, so the whole assembly turns rigidly; local damping is
//! off (it would brake the spin). The same steps without the rotation measure the state's own
//! drift (creep, relaxation) beside the error. Both run on copies: the test's state is left as
//! it was.

use glam::{DMat3, DVec3};
use serde::{Deserialize, Serialize};

use crate::cpu::Simulation;
use crate::material::PairParams;

/// A coordinate axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// x (Kuhn's x₁, the compression axis).
    X,
    /// y.
    Y,
    /// z.
    Z,
}

impl Axis {
    fn unit(self) -> DVec3 {
        match self {
            Axis::X => DVec3::X,
            Axis::Y => DVec3::Y,
            Axis::Z => DVec3::Z,
        }
    }
}

/// `[rotation]`: a rigid rotation of the assembly at the end of the loading (after the probes
/// where there are some: from the state they were made at).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RotationConfig {
    /// The axis (default x, the paper's x₁).
    #[serde(default = "default_axis")]
    pub axis: Axis,
    /// The angle turned (degrees, default 90).
    #[serde(default = "default_angle")]
    pub angle_deg: f64,
    /// The steps it takes (default 1 000, the paper's increments).
    #[serde(default = "default_increments")]
    pub increments: u64,
    /// A second rotation from the same state with the linear pairs' twirl off (projection
    /// only, the paper's Fig. 6c); needs linear contacts.
    #[serde(default)]
    pub without_twirl: bool,
}

fn default_axis() -> Axis {
    Axis::X
}
fn default_angle() -> f64 {
    90.0
}
fn default_increments() -> u64 {
    1000
}

/// What a rotation found (`summary.json`'s `rotation`; stresses as `Simulation::stress`, the
/// Love–Weber tensor of the contacts and the fluctuations, rows of the matrix).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RotationSummary {
    /// The axis.
    pub axis: Axis,
    /// The angle (degrees).
    pub angle_deg: f64,
    /// Steps.
    pub increments: u64,
    /// `σ` before the rotation (Pa).
    #[serde(rename = "stress_before_Pa")]
    pub stress_before_pa: [[f64; 3]; 3],
    /// `σ⁰ = Ωᵀ σ⁹⁰ Ω`, the stress after it restored to the original frame (Pa; Eq. 24).
    #[serde(rename = "stress_restored_Pa")]
    pub stress_restored_pa: [[f64; 3]; 3],
    /// `|σ⁰ − σ| / |σ|` (Frobenius norms).
    pub error_fraction: f64,
    /// The same steps without the rotation: `|σ' − σ| / |σ|`, the state's own drift.
    pub creep_fraction: f64,
}

/// Turns copies of `sim` (with the pair table `pairs`) rigidly as `config` says; `Err` names
/// what failed (a cell that refuses the spin tensor, a stress that cannot be measured).
pub fn rotate(
    sim: &Simulation,
    pairs: Vec<PairParams>,
    config: &RotationConfig,
) -> Result<RotationSummary, String> {
    let mut turning = sim.clone();
    turning.set_pair_params(pairs);
    turning.local_damping = 0.0;
    let mut still = turning.clone();
    let n = config.axis.unit();
    let angle = config.angle_deg.to_radians();
    let rate = angle / (config.increments as f64 * sim.dt);
    turning.set_velocity_gradient(spin_tensor(n) * rate)?;
    still.set_velocity_gradient(DMat3::ZERO)?;
    for w in &mut turning.particles.angular_velocity {
        *w += n * rate;
    }
    let before = sim.stress().ok_or("the stress of a cell without one")?;
    turning.run(config.increments);
    still.run(config.increments);
    let turn = DMat3::from_axis_angle(n, angle);
    let after = turning.stress().ok_or("no stress after the rotation")?;
    let restored = turn.transpose() * after * turn;
    let drifted = still.stress().ok_or("no stress after the steps")?;
    let norm = |m: DMat3| m.to_cols_array().iter().map(|e| e * e).sum::<f64>().sqrt();
    let size = norm(before);
    Ok(RotationSummary {
        axis: config.axis,
        angle_deg: config.angle_deg,
        increments: config.increments,
        stress_before_pa: rows(before),
        stress_restored_pa: rows(restored),
        error_fraction: norm(restored - before) / size,
        creep_fraction: norm(drifted - before) / size,
    })
}

/// `[n]×`, the matrix of `v ↦ n × v` (its columns `n × e_j`): `ω [n]×` is the velocity gradient
/// of a rigid rotation at `ω` about `n`.
fn spin_tensor(n: DVec3) -> DMat3 {
    DMat3::from_cols(n.cross(DVec3::X), n.cross(DVec3::Y), n.cross(DVec3::Z))
}

/// The rows of `m`.
fn rows(m: DMat3) -> [[f64; 3]; 3] {
    m.transpose().to_cols_array_2d()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spin tensor turns a vector about the axis: `L v = ω n × v`, and the rotation it
    /// integrates to is `from_axis_angle`'s (a quarter turn about x takes y to z).
    #[test]
    fn the_spin_tensor_and_the_turn_agree() {
        for axis in [Axis::X, Axis::Y, Axis::Z] {
            let n = axis.unit();
            let spin = spin_tensor(n);
            let v = DVec3::new(0.3, -1.2, 2.0);
            assert!((spin * v - n.cross(v)).length() < 1e-15, "{axis:?}");
            // exp(θ [n]×) by its series against the axis–angle rotation.
            let theta = 0.7;
            let (mut term, mut sum) = (DMat3::IDENTITY, DMat3::IDENTITY);
            for k in 1..30 {
                term = term * spin * (theta / k as f64);
                sum += term;
            }
            let turn = DMat3::from_axis_angle(n, theta);
            assert!(
                (sum - turn)
                    .abs()
                    .to_cols_array()
                    .iter()
                    .all(|e| *e < 1e-14)
            );
        }
        let quarter = DMat3::from_axis_angle(DVec3::X, std::f64::consts::FRAC_PI_2);
        assert!((quarter * DVec3::Y - DVec3::Z).length() < 1e-15);
        let m = DMat3::from_cols_array(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        assert_eq!(rows(m)[0], [1.0, 4.0, 7.0]);
    }
}
