//! The hill contact model: Hertz–Mindlin springs with dashpots, Coulomb friction and a liquid
//! bridge (Potyondy 2016, `shared/papers/potyondy2016_pfc_hill_contact_model.md`).
//!
//! - Properties (Table 4): `k̃_n = 4/3 E_e √R_e`, `k̃_s = 8 G_e √R_e`,
//!   `η̃_n = α_h √(m_e k̃_n)`, `η̃_s = α_h √(m_e k̃_s)`.
//! - Moisture force (Eq. 12): `F^m = ψ π R_o²` while overlapping, decaying as
//!   `exp(−g/(2 s_cr))` across the gap, zero and ruptured beyond `2 s_cr`, `s_cr = R_o =
//!   min(R₁, R₂)`.
//! - Normal surface force (Eq. 13): `k̃_n δ^{3/2} + η̃_n δ^{1/4} δ̇` (compressive positive here;
//!   the memo writes tension positive).
//! - Shear (Eq. 14–18, Appendix A): the Hertz–Mindlin shear force is updated incrementally,
//!   `F_s^h ← F_s^h − k̃_s δ^{1/2} Δδ_s`, kept within `μ F_n^s`, then the dashpot
//!   `−η̃_s δ^{1/4} δ̇_s` is added and the total capped again. The stored `F_s^h` is carried in
//!   the global frame; each step it is projected onto the new contact plane and turned with
//!   the pair's twirl, as PFC rotates a contact's shear force with its contact plane.
//! - Activity (Section 1.5): a contact acts while wet or overlapping.
//! - Time step (Section 1.9, Eq. 19–21): [`hill_stiffness`].
//!
//! Forces are those on body B (end 2); the normal points from A to B.

use glam::DVec3;
use serde::{Deserialize, Serialize};

/// Moisture state `M` of Table 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Moisture {
    /// Dry (`M = 0`).
    #[default]
    Dry,
    /// Dry after the bridge ruptured (`M = 1`).
    Ruptured,
    /// Wet: a liquid bridge pulls the grains together (`M = 2`).
    Wet,
}

/// Constants of one hill contact (Table 4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HillParams {
    /// Normal stiffness coefficient `k̃_n` (N/m^{3/2}).
    pub kn: f64,
    /// Shear stiffness coefficient `k̃_s` (N/m^{3/2}).
    pub ks: f64,
    /// Normal damping coefficient `η̃_n` (kg m^{−1/4} s^{−1}).
    pub eta_n: f64,
    /// Shear damping coefficient `η̃_s` (kg m^{−1/4} s^{−1}).
    pub eta_s: f64,
    /// Friction coefficient μ.
    pub friction: f64,
    /// Suction ψ (Pa).
    pub suction: f64,
    /// `R_o = s_cr = min(R₁, R₂)` (m).
    pub r_o: f64,
    /// Damping constant `α_h` (for the time-step estimate).
    pub damping_constant: f64,
}

impl HillParams {
    /// Table 4's mapping from the grains' elastic constants, radii and masses; `e_e` and
    /// `g_e` are the pair's effective moduli `E_e`, `G_e` (`material` computes them).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        e_e: f64,
        g_e: f64,
        radii: (f64, f64),
        masses: (f64, f64),
        damping_constant: f64,
        friction: f64,
        suction: f64,
    ) -> Self {
        let r_e = 1.0 / (1.0 / radii.0 + 1.0 / radii.1);
        let m_e = 1.0 / (1.0 / masses.0 + 1.0 / masses.1);
        let kn = 4.0 / 3.0 * e_e * r_e.sqrt();
        let ks = 8.0 * g_e * r_e.sqrt();
        Self {
            kn,
            ks,
            eta_n: damping_constant * (m_e * kn).sqrt(),
            eta_s: damping_constant * (m_e * ks).sqrt(),
            friction,
            suction,
            r_o: radii.0.min(radii.1),
            damping_constant,
        }
    }

    /// Largest moisture force `F^m_max = ψ π R_o²` (N), Eq. 12.
    pub fn max_moisture_force(&self) -> f64 {
        self.suction * std::f64::consts::PI * self.r_o * self.r_o
    }
}

/// What a hill contact carries between steps.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct HillState {
    /// Hertz–Mindlin shear force `F_s^h` on B (N), global frame.
    pub shear: DVec3,
    /// Moisture state.
    pub moisture: Moisture,
    /// Work dissipated by the dashpots and by slip (J).
    pub dissipated: f64,
}

/// One step's kinematics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HillStep {
    /// Contact gap `g_c` (m), positive when open.
    pub gap: f64,
    /// Unit normal from A to B.
    pub normal: DVec3,
    /// Velocity of B's contact point relative to A's (m/s), for the dashpots.
    pub velocity: DVec3,
    /// Displacement of B's contact point relative to A's over the step (m), for Eq. 15.
    pub displacement: DVec3,
    /// The pair's mean spin about the normal over the step (rad).
    pub twirl: f64,
}

/// Result of one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HillOutcome {
    /// Total force on B (N).
    pub force: DVec3,
    /// Normal surface force (N), compressive positive (the memo's `−F_n^s`).
    pub surface_normal_force: f64,
    /// Moisture force `F^m` (N), tension positive.
    pub moisture_force: f64,
    /// Shear force `F_s` on B (N).
    pub shear_force: DVec3,
    /// Elastic energy in the springs (J).
    pub elastic_work: f64,
    /// False when the contact is inactive (dry and apart): no force.
    pub active: bool,
}

/// One force–displacement update (Section 1.6), mutating `state`.
pub fn hill_step(state: &mut HillState, step: &HillStep, p: &HillParams) -> HillOutcome {
    let n = step.normal;
    let g = step.gap;
    let wet = state.moisture == Moisture::Wet;
    if !wet && g > 0.0 {
        // Section 1.5: inactive.
        state.shear = DVec3::ZERO;
        return HillOutcome {
            force: DVec3::ZERO,
            surface_normal_force: 0.0,
            moisture_force: 0.0,
            shear_force: DVec3::ZERO,
            elastic_work: 0.0,
            active: false,
        };
    }
    // Step 1, Eq. 12.
    let s_cr = p.r_o;
    let moisture_force = if !wet {
        0.0
    } else if g < 0.0 {
        p.max_moisture_force()
    } else if g <= 2.0 * s_cr {
        p.max_moisture_force() * (-g / (2.0 * s_cr)).exp()
    } else {
        state.moisture = Moisture::Ruptured;
        0.0
    };
    let overlap = -g;
    if overlap <= 0.0 {
        state.shear = DVec3::ZERO;
        return HillOutcome {
            force: -n * moisture_force,
            surface_normal_force: 0.0,
            moisture_force,
            shear_force: DVec3::ZERO,
            elastic_work: 0.0,
            active: state.moisture == Moisture::Wet,
        };
    }
    let root = overlap.sqrt();
    let quarter = root.sqrt();
    // Step 2, Eq. 13: δ̇_o > 0 while the overlap grows.
    let overlap_rate = -step.velocity.dot(n);
    let hertz_n = p.kn * overlap * root;
    let damp_n = p.eta_n * quarter * overlap_rate;
    let surface_normal_force = hertz_n + damp_n;
    // Step 3. Eq. 14 (the strength cannot be negative when the dashpot pulls).
    let strength = (p.friction * surface_normal_force).max(0.0);
    let v_s = step.velocity - n * step.velocity.dot(n);
    let d_s = step.displacement - n * step.displacement.dot(n);
    // Carry F_s^h into the new contact plane and twirl it with the pair.
    let mut carried = state.shear - n * state.shear.dot(n);
    if step.twirl != 0.0 {
        let (s, c) = step.twirl.sin_cos();
        carried = carried * c + n.cross(carried) * s;
    }
    let k_tangent = p.ks * root;
    let trial = carried - d_s * k_tangent; // Eq. 15
    let trial_len = trial.length();
    let shear_hm = if trial_len <= strength {
        trial
    } else {
        // Eq. 16: slip; the excess spring stretch is dissipated.
        state.dissipated += strength * (trial_len - strength) / k_tangent;
        trial * (strength / trial_len)
    };
    let damp_s = -v_s * (p.eta_s * quarter); // Eq. 17
    let total = shear_hm + damp_s;
    let total_len = total.length();
    let shear_force = if total_len <= strength {
        total
    } else {
        total * (strength / total_len) // Eq. 18
    };
    // Dashpot work over the step, force times the step's relative displacement.
    let d_n = step.displacement.dot(n);
    state.dissipated += damp_n * -d_n + (shear_force - shear_hm).dot(-d_s);
    state.shear = shear_hm;
    let elastic_work =
        0.4 * p.kn * overlap * overlap * root + shear_hm.length_squared() / (2.0 * k_tangent);
    HillOutcome {
        force: n * (surface_normal_force - moisture_force) + shear_force,
        surface_normal_force,
        moisture_force,
        shear_force,
        elastic_work,
        active: true,
    }
}

/// `make_wet` (Table 6): wets the contact when its gap is at most the moisture gap `g_m` (m).
pub fn make_wet(state: &mut HillState, gap: f64, moisture_gap: f64) {
    if gap <= moisture_gap {
        state.moisture = Moisture::Wet;
    }
}

/// `make_dry` (Table 6).
pub fn make_dry(state: &mut HillState) {
    state.moisture = Moisture::Dry;
}

/// Translational stiffnesses `(k_n, k_s)` for the time-step estimate (Section 1.9): Eq. 19 at
/// the overlap, at `δ = 2·10⁻⁴ R_o` when apart, raised by Eq. 20 for the dashpots with the
/// critical damping ratios of Eq. 21, `β = α_h / 2`.
pub fn hill_stiffness(p: &HillParams, overlap: f64) -> (f64, f64) {
    let delta = if overlap > 0.0 { overlap } else { 2e-4 * p.r_o };
    let kn = 1.5 * p.kn * delta.sqrt();
    let ks = p.ks * delta.sqrt();
    let beta = 0.5 * p.damping_constant;
    let f = (1.0 + beta * beta).sqrt() - beta;
    (kn / (f * f), ks / (f * f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_step_stiffness_follows_eq_19_to_21() {
        let p = HillParams::new(1e9, 4e8, (1e-3, 1e-3), (1e-5, 1e-5), 0.0, 0.5, 0.0);
        let (kn, ks) = hill_stiffness(&p, 1e-6);
        assert!((kn - 1.5 * p.kn * 1e-3).abs() < 1e-9 * kn);
        assert!((ks - p.ks * 1e-3).abs() < 1e-9 * ks);
        // Apart: evaluated at 2e-4 R_o; dashpots raise both by 1/F(β)².
        let damped = HillParams {
            damping_constant: 0.2,
            ..p
        };
        let (kn_d, _) = hill_stiffness(&damped, -1.0);
        let f: f64 = (1.0f64 + 0.01).sqrt() - 0.1;
        assert!((kn_d - 1.5 * p.kn * (2e-7f64).sqrt() / (f * f)).abs() < 1e-9 * kn_d);
    }

    #[test]
    fn a_bridge_ruptures_beyond_twice_the_critical_gap() {
        let p = HillParams::new(1e9, 4e8, (1e-3, 2e-3), (1e-5, 1e-5), 0.0, 0.5, 1e3);
        let mut s = HillState {
            moisture: Moisture::Wet,
            ..HillState::default()
        };
        let step = |gap| HillStep {
            gap,
            normal: DVec3::Z,
            velocity: DVec3::ZERO,
            displacement: DVec3::ZERO,
            twirl: 0.0,
        };
        let o = hill_step(&mut s, &step(1e-3), &p);
        let expected = p.max_moisture_force() * (-0.5f64).exp();
        assert!((o.moisture_force - expected).abs() < 1e-12 * expected);
        assert!((o.force.z + expected).abs() < 1e-12 * expected);
        let o = hill_step(&mut s, &step(2.1e-3), &p);
        assert_eq!(o.moisture_force, 0.0);
        assert_eq!(s.moisture, Moisture::Ruptured);
        // Once ruptured, the contact is inactive until it touches again.
        assert!(!hill_step(&mut s, &step(1e-3), &p).active);
    }
}
