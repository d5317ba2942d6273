//! Refined 3D linear-frictional contact of Kuhn, Suzuki & Daouadji
//! (`shared/papers/kuhn_suzuki_daouadji_linear_frictional_3d.md`, Fig. 1).
//!
//! `f^n = k^n ζ` (Eq. 1) and an incremental tangential force `Δf^t = k^t Δξ` capped at
//! `μ f^n` (Eq. 2), with the paper's four refinements inside one step:
//!
//! 1. a contact that begins inside the step only counts the movement after first touch
//!    (Eq. 7–8);
//! 2. an elastic contact that reaches the friction limit inside the step is elastic up to the
//!    fraction `α_s` of the step (Eq. 9–15: the root of Eq. 10 taken as `C / (√(B² − AC) − B)`
//!    when B ≤ 0 and `(−B − √(B² − AC))/A` when B > 0, the two algebraically equal forms, each
//!    free of cancellation on its side; Eq. 14 is the first at A = 0);
//! 3. during slip the force direction turns towards the movement as Eq. 16 prescribes. Eq. 18
//!    is solved in closed form: `csc θ − cot θ = tan(θ/2)`, so
//!    `|θ^{t+Δt}| = 2 atan(tan(|θ^t|/2) · exp(−E))` with `E = ln(1 + c₂)/(c₁ c₂)` (`1/c₁` when
//!    `c₂ = 0`). No look-up table is needed; the error is that of `atan`, `tan`, `exp` and `ln`
//!    in f64 (a few ulp), checked against a fine integration in the tests. θ is measured with
//!    `atan2`, which equals the paper's `sin⁻¹` for |θ| ≤ 90° and stays right beyond it;
//! 4. the new force is projected onto the tangent plane (Eq. 22) and twirled with the pair's
//!    mean spin about the normal (Eq. 23).
//!
//! Work (Fig. 1, lines 18, 28, 45, 51–53): the normal work is elastic, `W^n = (f^n)²/(2k^n)`;
//! each step's tangential work `ΔW^t` splits into the reversible
//! `ΔW^{t,rev} = (|f^{t,t+Δt}|² − |f^{t,t}|²)/(2k^t)` and the dissipated remainder.
//!
//! Sign conventions follow the paper inside this module: `n` points from body p (= A) to body q
//! (= B), `Δū` is the movement of q's contact point relative to p's (Eq. 5), and `f^t` is the
//! tangential force on p. [`KuhnOutcome::force`] converts to the engine's convention: the force
//! on B.

use glam::DVec3;
use serde::{Deserialize, Serialize};

/// Constants of one linear-frictional contact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KuhnParams {
    /// Normal stiffness `k^n` (N/m).
    pub kn: f64,
    /// Tangential stiffness `k^t` (N/m).
    pub kt: f64,
    /// Friction coefficient μ.
    pub friction: f64,
    /// Apply the twirl of Eq. 23 (always on in simulations; off only to show what it fixes).
    pub twirl: bool,
    /// Refinements 1–3 (on in simulations). Off, the step is the conventional algorithm the
    /// paper's probes compare against (its Fig. 5c): the whole step's tangential movement
    /// loads the spring, even for a contact that began inside it, and a trial force beyond
    /// `μ f^n` is scaled back onto the limit along itself (radial return). Refinement 4, the
    /// projection and twirl, stays.
    pub refined: bool,
}

/// What a contact carries from one step to the next.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct KuhnState {
    /// Overlap ζ at the end of the last step (m); ≤ 0 when the bodies did not touch.
    pub overlap: f64,
    /// Tangential force on body p (A), paper convention (N).
    pub tangential: DVec3,
    /// Dissipated tangential work accumulated while the contact exists (J).
    pub dissipated: f64,
}

/// One step's kinematics of a contact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KuhnStep {
    /// Overlap `ζ^{t+Δt}` at the end of the step (m); negative when apart.
    pub overlap: f64,
    /// Unit normal from A to B at the end of the step.
    pub normal: DVec3,
    /// Movement `Δū` of B's contact point relative to A's over the step (Eq. 5) (m).
    pub movement: DVec3,
    /// The pair's mean spin about the normal over the step, `½ (Δθ^p + Δθ^q) · n` (rad), for
    /// Eq. 23.
    pub twirl: f64,
}

/// Result of one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KuhnOutcome {
    /// Normal force `f^n` (N), compressive positive.
    pub normal_force: f64,
    /// Total force on body B (N).
    pub force: DVec3,
    /// Elastic energy stored in the contact, `W^n + |f^t|²/(2k^t)` (J).
    pub elastic_work: f64,
    /// Tangential work of this step, `ΔW^t` (J).
    pub tangential_work: f64,
    /// Fraction of the step at which slip began (Eq. 10), when the contact slid.
    pub slip_start: Option<f64>,
    /// Slope angle `θ^{t+Δt}` of Eq. 18–19 when the contact slid with a tangential movement.
    pub final_angle: Option<f64>,
}

/// Relative tolerance of the degenerate cases (Fig. 1's ε).
const EPS: f64 = 1e-12;

/// One step of Fig. 1: returns the forces and updates `state`.
pub fn kuhn_step(state: &mut KuhnState, step: &KuhnStep, p: &KuhnParams) -> KuhnOutcome {
    let n = step.normal;
    let zeta1 = step.overlap;
    if zeta1 < 0.0 {
        // Lines 4–5: apart, no force; the history ends.
        *state = KuhnState {
            overlap: zeta1,
            ..KuhnState::default()
        };
        return KuhnOutcome {
            normal_force: 0.0,
            force: DVec3::ZERO,
            elastic_work: 0.0,
            tangential_work: 0.0,
            slip_start: None,
            final_angle: None,
        };
    }
    let zeta0 = state.overlap;
    let mut fn0 = p.kn * zeta0; // line 7
    let mut ft0 = state.tangential;
    // Lines 8–9, Eq. 6.
    let dzeta_kin = -step.movement.dot(n);
    let mut dxi = step.movement + n * dzeta_kin;
    let fn1 = p.kn * zeta1; // Eq. 1
    let mut work = 0.0;
    let mut slip_start = None;
    let mut final_angle = None;
    let ft1 = if !p.refined {
        let start = if fn0 <= 0.0 { DVec3::ZERO } else { ft0 };
        let mut ft = start + dxi * p.kt;
        let limit = p.friction * fn1;
        if ft.length() > limit {
            slip_start = Some(0.0);
            ft *= limit / ft.length();
        }
        // The trapezoid of the step's force against its movement.
        work = 0.5 * dxi.dot(start + ft);
        ft
    } else if fn0 <= 0.0 {
        // Lines 10–17: contact began inside the step (Eq. 7–8).
        let alpha0 = if dzeta_kin > 0.0 {
            (1.0 - zeta1 / dzeta_kin).clamp(0.0, 1.0)
        } else {
            0.0
        };
        dxi *= 1.0 - alpha0;
        let mut ft = dxi * p.kt;
        let limit = p.friction * fn1;
        if ft.length() > limit {
            ft *= limit / ft.length();
        }
        work = 0.5 * dxi.dot(ft); // line 18
        ft
    } else {
        // Lines 19–45: previously touching. The normal increment is the geometric one, so
        // that f^n(α) of Eq. 17 ends exactly at k^n ζ^{t+Δt}.
        let mut dzeta = zeta1 - zeta0;
        let mut ft = ft0 + dxi * p.kt; // Eq. 2
        let limit = p.friction * fn1;
        if ft.length() > limit {
            // Eq. 9–13.
            let a = (p.friction * p.kn * dzeta).powi(2) - (dxi * p.kt).length_squared();
            let b = p.friction * p.friction * p.kn * fn0 * dzeta - p.kt * ft0.dot(dxi);
            let c = (p.friction * fn0).powi(2) - ft0.length_squared();
            // The root of A α² + 2Bα + C = 0 where |f^t| reaches the limit, in the form
            // without cancellation for either sign of B (Eq. 10 and Eq. 14 are its cases).
            let root = (b * b - a * c).max(0.0).sqrt();
            let alpha_s = if c <= 0.0 {
                // Already at the limit: slides at once unless the movement first unloads.
                if b > 0.0 && a < 0.0 {
                    (-2.0 * b / a).clamp(0.0, 1.0)
                } else {
                    0.0
                }
            } else if b <= 0.0 {
                (c / (root - b)).clamp(0.0, 1.0)
            } else if a < 0.0 {
                ((-b - root) / a).clamp(0.0, 1.0)
            } else {
                // A ≥ 0, B > 0, C > 0 never reaches the limit inside the step; the limit is
                // exceeded only by rounding: slide from the end.
                1.0
            };
            slip_start = Some(alpha_s);
            // Lines 28–30, Eq. 15.
            work = alpha_s * dxi.dot(ft0 + dxi * (0.5 * alpha_s * p.kt));
            fn0 += alpha_s * p.kn * dzeta;
            ft0 += dxi * (alpha_s * p.kt);
            dzeta *= 1.0 - alpha_s;
            dxi *= 1.0 - alpha_s;
            // Lines 31–43, Eq. 16–21.
            let dxi_len = dxi.length();
            let ft0_len = ft0.length();
            let direction = if dxi_len > EPS * (ft0_len / p.kt).max(f64::MIN_POSITIVE)
                && ft0_len > 0.0
                && fn0 > 0.0
            {
                let m_f = ft0 / ft0_len;
                let m_xi = dxi / dxi_len;
                let m_perp = n.cross(m_xi);
                let theta0 = m_f.dot(m_perp).atan2(m_f.dot(m_xi));
                let theta1 = if theta0.abs() < EPS {
                    theta0
                } else {
                    let c1 = p.friction * fn0 / (p.kt * dxi_len);
                    let c2 = p.kn * dzeta / fn0;
                    let e = if c2.abs() < EPS {
                        1.0 / c1
                    } else if 1.0 + c2 > 0.0 {
                        (1.0 + c2).ln() / (c1 * c2)
                    } else {
                        f64::INFINITY
                    };
                    let half = (0.5 * theta0.abs()).tan() * (-e).exp();
                    theta0.signum() * 2.0 * half.atan()
                };
                final_angle = Some(theta1);
                m_perp * theta1.sin() + m_xi * theta1.cos() // Eq. 20
            } else if ft0_len > 0.0 {
                ft0 / ft0_len
            } else {
                dxi.normalize_or_zero()
            };
            ft = direction * (p.friction * fn1); // Eq. 21
        }
        // Line 45 (elastic steps: ft0 and Δξ are still the step's own).
        work += 0.5 * dxi.dot(ft0 + ft);
        ft
    };
    // Eq. 22, then Eq. 23 as an exact rotation by the twirl angle about n (Eq. 23 is its
    // first-order form; the exact one keeps |f^t| over many steps).
    let mut ft = ft1 - n * ft1.dot(n);
    if p.twirl && step.twirl != 0.0 {
        let (s, c) = step.twirl.sin_cos();
        ft = ft * c + n.cross(ft) * s;
    }
    // Lines 51–53, with the reversible part measured from the force the step started from.
    let reversible = (ft.length_squared() - state.tangential.length_squared()) / (2.0 * p.kt);
    let dissipated = state.dissipated + (work - reversible);
    *state = KuhnState {
        overlap: zeta1,
        tangential: ft,
        dissipated,
    };
    KuhnOutcome {
        normal_force: fn1,
        force: n * fn1 - ft,
        elastic_work: fn1 * fn1 / (2.0 * p.kn) + ft.length_squared() / (2.0 * p.kt),
        tangential_work: work,
        slip_start,
        final_angle,
    }
}

/// The conventional elastic-predictor / radial-return update of one step's proportional
/// movement (Eq. 4) in `n` sub-steps, from tangential force `ft0` and normal force `fn0` with
/// tangential movement `dxi` and normal approach `dzeta`: as `n` grows it converges to the
/// solution of Eq. 16, which makes it the reference the closed form is checked against.
/// Returns the first fraction of the step at which it slid (1 if never) and the final force.
pub fn sub_stepped(
    p: &KuhnParams,
    ft0: DVec3,
    fn0: f64,
    dxi: DVec3,
    dzeta: f64,
    n: usize,
) -> (f64, DVec3) {
    let mut f = ft0;
    let mut first = None;
    for k in 1..=n {
        let alpha = k as f64 / n as f64;
        let limit = p.friction * (fn0 + alpha * p.kn * dzeta);
        f += dxi * (p.kt / n as f64);
        if f.length() > limit {
            first.get_or_insert(alpha);
            f *= limit / f.length();
        }
    }
    (first.unwrap_or(1.0), f)
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: KuhnParams = KuhnParams {
        kn: 1e6,
        kt: 8e5,
        friction: 0.5,
        twirl: true,
        refined: true,
    };

    fn fine(ft0: DVec3, fn0: f64, dxi: DVec3, dzeta: f64, n: usize) -> (f64, DVec3) {
        sub_stepped(&P, ft0, fn0, dxi, dzeta, n)
    }

    fn check_against_fine(ft0: DVec3, dxi: DVec3, dzeta: f64) {
        let zeta0 = 1e-5;
        let mut state = KuhnState {
            overlap: zeta0,
            tangential: ft0,
            dissipated: 0.0,
        };
        let out = kuhn_step(
            &mut state,
            &KuhnStep {
                overlap: zeta0 + dzeta,
                normal: DVec3::Z,
                movement: dxi - DVec3::Z * dzeta,
                twirl: 0.0,
            },
            &P,
        );
        let n = 1_000_000;
        let (alpha_fine, f_fine) = fine(ft0, P.kn * zeta0, dxi, dzeta, n);
        let alpha_s = out.slip_start.expect("the step slides");
        assert!(
            (alpha_s - alpha_fine).abs() <= 2.0 / n as f64,
            "α_s {alpha_s} vs fine {alpha_fine}"
        );
        let angle = state.tangential.angle_between(f_fine);
        // Radial return is first order in the sub-step: 1e6 sub-steps leave ~1e-6 rad.
        assert!(angle < 1e-5, "direction differs by {angle} rad");
        let magnitude = P.friction * P.kn * (zeta0 + dzeta);
        assert!((state.tangential.length() - magnitude).abs() < 1e-12 * magnitude);
    }

    /// `refined = false` is the conventional step: for a sliding step it is the radial
    /// return of the whole step (`sub_stepped` with one sub-step), which the refined step's
    /// direction differs from; an elastic step is the same either way; a contact that begins
    /// inside the step loads the whole step's movement, where the refined one loads only what
    /// follows first touch (Eq. 7–8).
    #[test]
    fn the_conventional_step_is_a_radial_return_of_the_whole_step() {
        let conventional = KuhnParams {
            refined: false,
            ..P
        };
        let zeta0 = 1e-5;
        let step = |ft0: DVec3, dxi: DVec3, dzeta: f64, p: &KuhnParams, overlap0: f64| {
            let mut state = KuhnState {
                overlap: overlap0,
                tangential: ft0,
                dissipated: 0.0,
            };
            kuhn_step(
                &mut state,
                &KuhnStep {
                    overlap: overlap0 + dzeta,
                    normal: DVec3::Z,
                    movement: dxi - DVec3::Z * dzeta,
                    twirl: 0.0,
                },
                p,
            );
            state.tangential
        };
        // Sliding across the force: the radial return of one sub-step, not Eq. 16's turn.
        let (ft0, dxi, dzeta) = (DVec3::new(3.0, 0.0, 0.0), DVec3::new(0.0, 2e-5, 0.0), 2e-6);
        let (_, f1) = sub_stepped(&P, ft0, P.kn * zeta0, dxi, dzeta, 1);
        let f = step(ft0, dxi, dzeta, &conventional, zeta0);
        assert!((f - f1).length() < 1e-12 * f1.length(), "{f} vs {f1}");
        let refined = step(ft0, dxi, dzeta, &P, zeta0);
        assert!(refined.angle_between(f) > 1e-3, "{refined} vs {f}");
        // Elastic: the same bits.
        let small = DVec3::new(0.0, 1e-7, 0.0);
        assert_eq!(
            step(ft0, small, 0.0, &conventional, zeta0),
            step(ft0, small, 0.0, &P, zeta0)
        );
        // First touch halfway through the step: the conventional spring takes the whole
        // movement, the refined one half (the overlap at the end is half the approach).
        let dxi = DVec3::new(1e-7, 0.0, 0.0);
        let full = step(DVec3::ZERO, dxi, 2e-6, &conventional, -1e-6);
        let half = step(DVec3::ZERO, dxi, 2e-6, &P, -1e-6);
        assert!((full.x - P.kt * 1e-7).abs() < 1e-9 * full.x, "{full}");
        assert!((half.x - 0.5 * P.kt * 1e-7).abs() < 1e-9 * half.x, "{half}");
    }

    #[test]
    fn slip_onset_and_final_direction_match_a_fine_integration_of_eq_16() {
        // Elastic, then slip, with the movement across the force and the cone widening.
        check_against_fine(DVec3::new(3.0, 0.0, 0.0), DVec3::new(0.0, 2e-5, 0.0), 2e-6);
        // The cone shrinking, movement partly against the force (|θ| > 90° at slip start).
        check_against_fine(
            DVec3::new(3.0, 1.0, 0.0),
            DVec3::new(-1e-5, 1.5e-5, 0.0),
            -2e-6,
        );
        // Already at the limit: slides from the start of the step.
        check_against_fine(DVec3::new(0.0, 5.0, 0.0), DVec3::new(3e-5, 0.0, 0.0), 0.0);
    }

    #[test]
    fn a_contact_formed_inside_a_step_counts_only_the_movement_after_touch() {
        // Eq. 7–8: apart by 1 µm, approaching 3 µm: in contact for the last 2/3 of the step.
        let mut state = KuhnState {
            overlap: -1e-6,
            ..KuhnState::default()
        };
        let out = kuhn_step(
            &mut state,
            &KuhnStep {
                overlap: 2e-6,
                normal: DVec3::Z,
                movement: DVec3::new(3e-7, 0.0, -3e-6),
                twirl: 0.0,
            },
            &P,
        );
        assert!((out.normal_force - 2.0).abs() < 1e-12);
        assert!((state.tangential.x - P.kt * 2e-7).abs() < 1e-12);
        // The force on B is the negative of the paper's force on A.
        assert!((out.force - DVec3::new(-P.kt * 2e-7, 0.0, 2.0)).length() < 1e-12);
    }
}
