//! The critical time step of a scene's stiffest possible contact.

use super::*;

/// Critical time step estimate `Δt_crit = min √(m̄ / k)` over the stiffest contact the scene can
/// form (O'Sullivan & Bray 2004, the bound Fleischmann et al. cite after Eq. 6).
///
/// `smallest` lists, per particle material, the smallest particle `(material, radius, mass)`
/// of that material; `wall_materials` the materials of the walls. For each possible contact the
/// normal stiffness and the tangential stiffness of its model are used, the latter with the 3.5
/// factor of a solid sphere's combined translational and rotational compliance
/// (`1/m + R²/I = 3.5/m`):
/// - spring, Hooke: `k_n`, `k_t`; Hertz: the tangents `3/2 k_n √(R̄ δ)` and `k_t √(R̄ δ)` at
///   `δ = 1 % R̄`;
/// - linear: `k_n`, `k_t`;
/// - hill: Potyondy Section 1.9 (Eq. 19–21) at `δ = 1 % R_e`;
/// - Jäger: the Hertz tangent `dF_n/dδ` at `δ = 1 % R̄` for both (the Mindlin tangential
///   stiffness is never larger, Kuhn & Jäger Section 4.2).
pub fn critical_time_step(
    law: ContactLaw,
    smallest: &[(usize, f64, f64)],
    wall_materials: &[usize],
    pair: impl Fn(usize, usize) -> PairParams,
) -> f64 {
    let mut dt = f64::INFINITY;
    let mut consider = |radii: (f64, f64), masses: (f64, f64), params: PairParams| {
        let m_eff = if masses.0.is_infinite() {
            masses.1
        } else {
            effective(masses.0, masses.1)
        };
        let r_eff = if radii.0.is_infinite() {
            radii.1
        } else {
            effective(radii.0, radii.1)
        };
        let delta = REFERENCE_OVERLAP_FRACTION * r_eff;
        let (kn, kt) = match params.contact_kind(radii, masses) {
            ContactKind::Spring(c) => match law {
                ContactLaw::Hooke => (c.kn, c.kt),
                ContactLaw::Hertz => {
                    let f = (r_eff * delta).sqrt();
                    (1.5 * c.kn * f, c.kt * f)
                }
            },
            ContactKind::Linear(k) => (k.kn, k.kt),
            ContactKind::Hill(h) => crate::contact::hill::hill_stiffness(&h, delta),
            ContactKind::Jager(j) => {
                // F = Ē √R ζ^{3/2} with δ = 2ζ: dF/dδ = 3/4 Ē √R ζ^{1/2}.
                let k = 0.75 * j.e_bar * (j.radius * 0.5 * delta).sqrt();
                (k, k)
            }
        };
        let k = kn.max(3.5 * kt);
        if k > 0.0 {
            dt = dt.min((m_eff / k).sqrt());
        }
    };
    for &(a, ra, ma) in smallest {
        for &(b, rb, mb) in smallest {
            consider((ra, rb), (ma, mb), pair(a, b));
        }
        for &w in wall_materials {
            consider((f64::INFINITY, ra), (f64::INFINITY, ma), pair(w, a));
        }
    }
    dt
}
