//! The loading paths of a periodic-cell test as modes of [`crate::cell_servo`]: which
//! components of the velocity gradient `L` are prescribed and which hold a stress, and the
//! measures a path's results are read in (its loading strain, stress ratio and mobilised
//! friction angle). Pure functions of the measured stress; axial compression is along x
//! (Kuhn's x₁), stresses and strains compression positive.

use glam::DMat3;
use serde::{Deserialize, Serialize};

use crate::cell_servo::Mode;

/// How well a servo held a path's stresses ([`LoadingPath::held_errors`]): fractions of the
/// targets, and of the states with the servo at its rate bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeldErrors {
    /// Mean `|σ − σ*| / σ*` over the held components of every state.
    pub mean_fraction: f64,
    /// The largest of the same.
    pub max_fraction: f64,
    /// The fraction of the states with a held component off by the servo's band or more.
    pub at_rate_bound_fraction: f64,
}

/// `loading.path`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadingPath {
    /// Axial compression along x at `strain_rate`, `σ_yy = σ_zz = p₀` held.
    DrainedTriaxial,
    /// Axial compression along x, `σ_yy = σ_zz = (3 p₀ − σ_xx) / 2` held so that the mean
    /// stress stays `p₀` (Kuhn, Suzuki & Daouadji).
    ConstantP,
    /// Plane strain: axial compression along x, `ε_zz = 0`, `σ_yy = p₀` held (Kuhn & Jäger's
    /// biaxial test).
    Biaxial,
    /// Simple shear `L_xz = γ̇` (x moves with z) at constant normal stress `σ_zz = p₀`, the
    /// cell's x and y edges kept (Lees–Edwards in a deforming cell).
    SimpleShear,
}

impl LoadingPath {
    /// Whether the path compresses along x (its strain is axial).
    pub fn compresses(self) -> bool {
        !matches!(self, LoadingPath::SimpleShear)
    }

    /// The normal stresses the path holds at the measured stress `sigma`, with confining
    /// stress `p0`: (component index, 0 = x; target in Pa), one or two of them.
    pub fn held(self, p0: f64, sigma: DMat3) -> impl Iterator<Item = (usize, f64)> {
        let [a, b] = match self {
            LoadingPath::DrainedTriaxial => [Some((1, p0)), Some((2, p0))],
            LoadingPath::ConstantP => {
                let lateral = 0.5 * (3.0 * p0 - sigma.x_axis.x);
                [Some((1, lateral)), Some((2, lateral))]
            }
            LoadingPath::Biaxial => [Some((1, p0)), None],
            LoadingPath::SimpleShear => [Some((2, p0)), None],
        };
        a.into_iter().chain(b)
    }

    /// How well the servo held the path's stresses over the measured stresses `sigmas`:
    /// the mean and largest `|σ − σ*| / σ*` of the held components, and the fraction of the
    /// states in which one of them was off its target by `band` (Pa, the servo's proportional
    /// band) or more, where the servo moves it at its largest rate (`cell_servo`: `L = r_max
    /// clamp((σ − σ*) / band, −1, 1)`), so that a specimen which dilates or contracts faster
    /// than that outruns it. NaN each with no state.
    pub fn held_errors(self, p0: f64, band: f64, sigmas: &[DMat3]) -> HeldErrors {
        let mut errors = Vec::new();
        let mut at_bound = 0usize;
        for &sigma in sigmas {
            let mut beyond = false;
            for (k, target) in self.held(p0, sigma) {
                let s = sigma.col(k)[k];
                errors.push((s / target - 1.0).abs());
                // A NaN stress counts as beyond.
                let off = (s - target).abs();
                beyond |= off >= band || off.is_nan();
            }
            at_bound += usize::from(beyond);
        }
        HeldErrors {
            mean_fraction: errors.iter().sum::<f64>() / errors.len() as f64,
            max_fraction: errors.iter().copied().fold(f64::NAN, f64::max),
            at_rate_bound_fraction: at_bound as f64 / sigmas.len() as f64,
        }
    }

    /// The servo's modes at the measured stress `sigma` (row `i`, column `j`: `L_ij`): the
    /// path's prescribed rate, its held normal stresses, the other normal components fixed
    /// (rate 0); every shear stress held at zero (upper components) with the lower ones at
    /// rate 0, except simple shear's prescribed `L_xz`.
    pub fn modes(self, strain_rate: f64, p0: f64, sigma: DMat3) -> [[Mode; 3]; 3] {
        let mut m = [[Mode::Rate(0.0); 3]; 3];
        for (i, row) in m.iter_mut().enumerate() {
            for (j, mode) in row.iter_mut().enumerate() {
                if j > i {
                    *mode = Mode::Stress(0.0);
                }
            }
        }
        for (k, target) in self.held(p0, sigma) {
            m[k][k] = Mode::Stress(target);
        }
        match self {
            LoadingPath::SimpleShear => m[0][2] = Mode::Rate(strain_rate),
            // Compression positive: the x edge shortens.
            _ => m[0][0] = Mode::Rate(-strain_rate),
        }
        m
    }

    /// The modes of an isotropic compaction to `target`: every normal stress held, every shear
    /// stress held at zero (upper components), the lower ones at rate 0.
    pub fn isotropic(target: f64) -> [[Mode; 3]; 3] {
        let mut m = [[Mode::Rate(0.0); 3]; 3];
        for (i, row) in m.iter_mut().enumerate() {
            for (j, mode) in row.iter_mut().enumerate() {
                if j > i {
                    *mode = Mode::Stress(0.0);
                } else if j == i {
                    *mode = Mode::Stress(target);
                }
            }
        }
        m
    }

    /// The path's stress ratio: `q/p` with `q = √(3 J₂)` for the compressions, `τ / σ_zz` for
    /// simple shear, `τ = −σ_xz` the shear stress resisting the imposed `γ̇ > 0` (compression
    /// positive, a specimen sheared by `L_xz > 0` pulls back with `σ_xz < 0`); of the symmetric
    /// part of `sigma`.
    pub fn stress_ratio(self, sigma: DMat3) -> f64 {
        match self {
            LoadingPath::SimpleShear => -0.5 * (sigma.z_axis.x + sigma.x_axis.z) / sigma.z_axis.z,
            _ => {
                let (p, q) = crate::analysis::invariants(sigma);
                q / p
            }
        }
    }

    /// The mobilised friction angle (deg): triaxial compression `sin φ = 3η / (6 + η)` with
    /// `η = (σ_xx − (σ_yy + σ_zz)/2) / p`; plane strain `sin φ = (σ_xx − σ_yy) / (σ_xx +
    /// σ_yy)`; simple shear `tan φ = τ / σ_zz`. NaN where the stress is no compression.
    pub fn friction_angle_deg(self, sigma: DMat3) -> f64 {
        let (sxx, syy, szz) = (sigma.x_axis.x, sigma.y_axis.y, sigma.z_axis.z);
        let s = match self {
            LoadingPath::DrainedTriaxial | LoadingPath::ConstantP => {
                let p = (sxx + syy + szz) / 3.0;
                let eta = (sxx - 0.5 * (syy + szz)) / p;
                3.0 * eta / (6.0 + eta)
            }
            LoadingPath::Biaxial => (sxx - syy) / (sxx + syy),
            LoadingPath::SimpleShear => {
                return self.stress_ratio(sigma).atan().to_degrees();
            }
        };
        if (-1.0..=1.0).contains(&s) {
            s.asin().to_degrees()
        } else {
            f64::NAN
        }
    }

    /// The loading strain of the accumulated strain `strain` (compression positive, `−∫ D
    /// dt`) and the accumulated `∫ L_xz dt`: axial `ε_xx` for the compressions, `γ` for simple
    /// shear.
    pub fn loading_strain(self, strain: DMat3, gamma: f64) -> f64 {
        match self {
            LoadingPath::SimpleShear => gamma,
            _ => strain.x_axis.x,
        }
    }

    /// The name in `cell.csv` and logs.
    pub fn name(self) -> &'static str {
        match self {
            LoadingPath::DrainedTriaxial => "drained_triaxial",
            LoadingPath::ConstantP => "constant_p",
            LoadingPath::Biaxial => "biaxial",
            LoadingPath::SimpleShear => "simple_shear",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell_servo::CellServo;
    use glam::DVec3;

    fn diag(a: f64, b: f64, c: f64) -> DMat3 {
        DMat3::from_diagonal(DVec3::new(a, b, c))
    }

    /// Each path's servo output at a stress on its targets: the prescribed rate where the
    /// path prescribes one, zero elsewhere; and a lateral stress below its target
    /// compresses the lateral edges at the bounded rate.
    #[test]
    fn the_paths_prescribe_their_rate_and_hold_their_stresses() {
        let servo = CellServo {
            max_rate: 0.1,
            band: 0.05,
            reference: 1e5,
        };
        let p0 = 1e5;
        let on_target = [
            (LoadingPath::DrainedTriaxial, diag(1.5e5, p0, p0)),
            (LoadingPath::ConstantP, diag(1.6e5, 0.7e5, 0.7e5)),
            (LoadingPath::Biaxial, diag(1.5e5, p0, 0.8e5)),
            (LoadingPath::SimpleShear, diag(0.9e5, 0.8e5, p0)),
        ];
        for (path, sigma) in on_target {
            let l = servo.velocity_gradient(&path.modes(0.01, p0, sigma), sigma);
            let mut expected = DMat3::ZERO;
            if path == LoadingPath::SimpleShear {
                expected.z_axis.x = 0.01;
            } else {
                expected.x_axis.x = -0.01;
            }
            assert!(
                (l - expected)
                    .abs()
                    .to_cols_array()
                    .iter()
                    .all(|&e| e < 1e-15),
                "{path:?}: {l:?}"
            );
        }
        // Drained triaxial with the lateral stresses 10 % low: the full rate inwards.
        let sigma = diag(1.5e5, 0.9e5, 0.9e5);
        let l =
            servo.velocity_gradient(&LoadingPath::DrainedTriaxial.modes(0.01, p0, sigma), sigma);
        assert_eq!((l.y_axis.y, l.z_axis.z), (-0.1, -0.1));
        // Biaxial keeps ε_zz = 0 whatever σ_zz; simple shear keeps x and y.
        let l = servo.velocity_gradient(&LoadingPath::Biaxial.modes(0.01, p0, sigma), sigma);
        assert_eq!(l.z_axis.z, 0.0);
        let l = servo.velocity_gradient(&LoadingPath::SimpleShear.modes(0.01, p0, sigma), sigma);
        // σ_zz below p₀: the z edge shortens at the full rate.
        assert_eq!((l.x_axis.x, l.y_axis.y, l.z_axis.z), (0.0, 0.0, -0.1));
    }

    /// The held errors of the closed forms: a biaxial test's σ_yy 1 % and 6 % above p₀ with a
    /// band of 5 % (one state of two beyond it: the servo at its rate bound), a drained
    /// triaxial one's two lateral stresses 2 % below and 3 % above; no state gives NaN, and a
    /// NaN stress counts as beyond the band.
    #[test]
    fn held_errors_count_the_states_beyond_the_band() {
        let p0 = 1e5;
        let band = 0.05 * p0;
        let e = LoadingPath::Biaxial.held_errors(
            p0,
            band,
            &[diag(2e5, 1.01e5, 0.7e5), diag(2e5, 1.06e5, 0.7e5)],
        );
        assert!((e.mean_fraction - 0.035).abs() < 1e-12, "{e:?}");
        assert!((e.max_fraction - 0.06).abs() < 1e-12, "{e:?}");
        assert_eq!(e.at_rate_bound_fraction, 0.5);
        let e = LoadingPath::DrainedTriaxial.held_errors(p0, band, &[diag(2e5, 0.98e5, 1.03e5)]);
        assert!((e.mean_fraction - 0.025).abs() < 1e-12, "{e:?}");
        assert!((e.max_fraction - 0.03).abs() < 1e-12, "{e:?}");
        assert_eq!(e.at_rate_bound_fraction, 0.0);
        let e = LoadingPath::SimpleShear.held_errors(p0, band, &[]);
        assert!(e.mean_fraction.is_nan() && e.max_fraction.is_nan());
        assert!(e.at_rate_bound_fraction.is_nan());
        let e = LoadingPath::Biaxial.held_errors(p0, band, &[diag(2e5, f64::NAN, p0)]);
        assert_eq!(e.at_rate_bound_fraction, 1.0);
    }

    /// Constant p: the lateral target keeps `(σ_xx + 2 σ_lat) / 3 = p₀` at any axial stress.
    #[test]
    fn constant_p_targets_keep_the_mean_stress() {
        for sxx in [0.5e5, 1e5, 2.7e5] {
            let held = LoadingPath::ConstantP.held(1e5, diag(sxx, 0.0, 0.0));
            let lateral = held.into_iter().next().expect("a lateral target").1;
            assert!(((sxx + 2.0 * lateral) / 3.0 - 1e5).abs() < 1e-9);
        }
    }

    /// The friction angles of the closed forms: a triaxial state at `η = 1.2` (φ = 30°,
    /// `sin φ = 3·1.2/7.2`), a plane-strain state with `σ₁ = 3 σ₃` (30°), a simple shear at
    /// `τ/σ = 1` (45°, `σ_xz = −τ`); and a state in tension along the axis gives NaN, not a number.
    #[test]
    fn friction_angles_follow_the_closed_forms() {
        let p = 1e5;
        let (a, l) = (p * (1.0 + 2.0 * 1.2 / 3.0), p * (1.0 - 1.2 / 3.0));
        let phi = LoadingPath::DrainedTriaxial.friction_angle_deg(diag(a, l, l));
        assert!((phi - 30.0).abs() < 1e-9, "{phi}");
        let ratio = LoadingPath::DrainedTriaxial.stress_ratio(diag(a, l, l));
        assert!((ratio - 1.2).abs() < 1e-12, "{ratio}");
        let phi = LoadingPath::Biaxial.friction_angle_deg(diag(3e5, 1e5, 2e5));
        assert!((phi - 30.0).abs() < 1e-9, "{phi}");
        let mut shear = diag(1e5, 1e5, 1e5);
        shear.z_axis.x = -1e5;
        shear.x_axis.z = -1e5;
        let phi = LoadingPath::SimpleShear.friction_angle_deg(shear);
        assert!((phi - 45.0).abs() < 1e-9, "{phi}");
        assert!(
            LoadingPath::Biaxial
                .friction_angle_deg(diag(1e5, -3e5, 0.0))
                .is_nan()
        );
    }
}
