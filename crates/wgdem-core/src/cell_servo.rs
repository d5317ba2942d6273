//! Mixed stress/strain control of a periodic cell ([`crate::cell`]): each component of the
//! velocity gradient `L` is either prescribed (a strain rate) or driven to hold a stress
//! target, with a bounded rate. A pure function of the measured stress, called once per
//! control interval; the element tests' paths are choices of these modes.
//!
//! A stress-controlled component `ij` moves at
//! `L_ij = r_max · clamp((σ_ij − σ*_ij) / (b σ_ref), −1, 1)`: the full rate `r_max` while the
//! stress is off its target by more than the band `b σ_ref`, proportionally less inside it
//! (stresses compression positive, so a stress below its target compresses: `L_ij < 0`). With
//! a specimen of tangent modulus `E` and a control interval `T`, one interval closes the
//! fraction `E T r_max / (b σ_ref)` of the error; the quasi-static rates of element tests make
//! that far below 1 (e.g. `E/σ_ref` = 10³, `r_max` = 1/s, `b` = 0.05 and `T` = 10⁻⁵ s give
//! 0.2 %), so the loop neither overshoots nor oscillates. While the stress moves at a steady
//! rate (a dilating specimen) the servo lags by the fraction `ṙ / r_max` of the band.

use glam::DMat3;
use serde::{Deserialize, Serialize};

/// How one component of `L` is set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Mode {
    /// Prescribed: this rate (1/s).
    Rate(f64),
    /// Driven to hold this stress (Pa, compression positive).
    Stress(f64),
}

/// The servo's constants.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CellServo {
    /// The largest rate a stress-controlled component moves at (1/s).
    pub max_rate: f64,
    /// The proportional band as a fraction of `reference` (–).
    pub band: f64,
    /// The stress the band is a fraction of (Pa): the test's confining stress.
    pub reference: f64,
}

impl CellServo {
    /// Refuses constants that cannot control: each must be finite and positive. The message
    /// names the constant.
    pub fn check(&self) -> Result<(), String> {
        for (name, value, unit) in [
            ("max_rate", self.max_rate, "1/s"),
            ("band", self.band, "a fraction of the reference stress"),
            ("reference", self.reference, "Pa"),
        ] {
            // `!(x > 0)` so that NaN is refused too; an infinite value is no bound.
            if !(value > 0.0 && value.is_finite()) {
                return Err(format!("{name} = {value} must be finite and > 0 ({unit})"));
            }
        }
        Ok(())
    }

    /// The rate (1/s) of one component in `mode` at the measured stress `sigma` (Pa). A
    /// non-finite measurement gives no motion rather than a non-finite rate (the run's guard
    /// reports the state that produced it).
    pub fn rate(&self, mode: Mode, sigma: f64) -> f64 {
        match mode {
            Mode::Rate(r) => r,
            Mode::Stress(target) => {
                let error = (sigma - target) / (self.band * self.reference);
                if error.is_nan() {
                    return 0.0;
                }
                self.max_rate * error.clamp(-1.0, 1.0)
            }
        }
    }

    /// The velocity gradient for `modes[i][j]` (row `i`, column `j`: `L_ij`) at the measured
    /// stress `stress` (`σ_ij` is column `j`'s component `i`, as `Simulation::stress`). A
    /// shear component is held against the symmetric part of the stress, `(σ_ij + σ_ji) / 2`:
    /// the antisymmetric part is the spheres' unbalanced moments (Cundall's local damping,
    /// which takes from torques, leaves some while the cell deforms), which no deformation of
    /// the cell relieves.
    pub fn velocity_gradient(&self, modes: &[[Mode; 3]; 3], stress: DMat3) -> DMat3 {
        let symmetric = (stress + stress.transpose()) * 0.5;
        let mut l = DMat3::ZERO;
        for (i, row) in modes.iter().enumerate() {
            for (j, &mode) in row.iter().enumerate() {
                l.col_mut(j)[i] = self.rate(mode, symmetric.col(j)[i]);
            }
        }
        l
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn servo() -> CellServo {
        CellServo {
            max_rate: 1.0,
            band: 0.05,
            reference: 1e5,
        }
    }

    /// A linear elastic specimen, `σ = σ₀ − E ε` along one axis (`ε` the log strain, growing
    /// with `L`), under the servo from far below and far above its target: it reaches the
    /// target and holds it within 1e-9 relative, the rate never above `max_rate`, and never
    /// crosses it (no overshoot: one interval closes 4 % of the error here).
    #[test]
    fn an_elastic_specimen_is_brought_to_its_target_without_overshoot() {
        let s = servo();
        let (modulus, dt, target) = (2e7, 1e-5, 1e5);
        for start in [0.0, 3e5] {
            let mut sigma: f64 = start;
            let side = (sigma - target).signum();
            for _ in 0..200_000 {
                let rate = s.rate(Mode::Stress(target), sigma);
                assert!(rate.abs() <= s.max_rate);
                sigma -= modulus * rate * dt;
                assert!((sigma - target) * side >= 0.0, "overshoot to {sigma}");
            }
            assert!(
                (sigma - target).abs() <= 1e-9 * target,
                "from {start}: {sigma}"
            );
        }
    }

    /// A stress that keeps moving at a steady rate (a dilating specimen) is held with the lag
    /// the module docs give: the fraction `ṙ / r_max` of the band.
    #[test]
    fn a_steady_disturbance_is_held_within_its_predicted_lag() {
        let s = servo();
        let (modulus, dt, target, drift) = (2e7, 1e-5, 1e5, 0.2);
        let mut sigma = target;
        for _ in 0..200_000 {
            // The specimen would relax at `drift` 1/s of strain; the servo compresses it back.
            sigma -= modulus * (s.rate(Mode::Stress(target), sigma) + drift) * dt;
        }
        let lag = (target - sigma) / (s.band * s.reference);
        assert!((lag - drift / s.max_rate).abs() < 1e-6, "lag {lag}");
    }

    #[test]
    fn modes_set_their_components_and_bounds_hold_at_the_extremes() {
        let s = servo();
        let mut modes = [[Mode::Rate(0.0); 3]; 3];
        modes[0][0] = Mode::Rate(-0.01);
        modes[1][1] = Mode::Stress(1e5);
        modes[2][2] = Mode::Stress(1e5);
        modes[0][2] = Mode::Rate(0.3);
        let mut stress = DMat3::from_diagonal(glam::DVec3::new(2e5, 1e5, 0.0));
        stress.z_axis.x = 7.0;
        let l = s.velocity_gradient(&modes, stress);
        assert_eq!(l.x_axis.x, -0.01);
        assert_eq!(l.y_axis.y, 0.0);
        assert_eq!(l.z_axis.z, -1.0);
        assert_eq!(l.z_axis.x, 0.3);
        assert_eq!(l.x_axis.z, 0.0);
        for sigma in [
            f64::MAX,
            f64::INFINITY,
            -f64::MAX,
            f64::NEG_INFINITY,
            f64::NAN,
        ] {
            let r = s.rate(Mode::Stress(1e5), sigma);
            assert!(r.is_finite() && r.abs() <= s.max_rate, "{sigma:e}: {r}");
        }
        // A target near f64's range: the error overflows to ±∞ and is clamped, not NaN.
        assert_eq!(s.rate(Mode::Stress(f64::MAX), -f64::MAX), -1.0);
    }

    #[test]
    fn constants_that_cannot_control_are_refused_by_name() {
        for (bad, name) in [
            (
                CellServo {
                    max_rate: 0.0,
                    ..servo()
                },
                "max_rate",
            ),
            (
                CellServo {
                    band: f64::NAN,
                    ..servo()
                },
                "band",
            ),
            (
                CellServo {
                    reference: f64::INFINITY,
                    ..servo()
                },
                "reference",
            ),
            (
                CellServo {
                    max_rate: -1.0,
                    ..servo()
                },
                "max_rate",
            ),
        ] {
            let e = bad.check().expect_err("refused");
            assert!(e.starts_with(name), "{e}");
        }
        assert!(servo().check().is_ok());
    }
}
