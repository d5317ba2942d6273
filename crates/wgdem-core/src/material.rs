//! Materials and the parameters of a contact between two materials.
//!
//! A material gives its contact stiffness in one of two ways (all materials of a scene use the
//! same way):
//!
//! - **Direct**: `kn`, `kt`, `gamma_n`, `gamma_t` of Fleischmann Eq. 1, as He, Zheng & Li (2020)
//!   Table 1 list them. Two different materials in contact use the arithmetic mean of each.
//! - **Elastic**: Young's modulus E, Poisson's ratio ν and restitution coefficient e. The pair's
//!   effective moduli are (Potyondy 2016 memo, hill model, Eq. for `E_e`, `G_e`)
//!   `E* = ((1−ν₁²)/E₁ + (1−ν₂²)/E₂)⁻¹`, `G* = (2(1+ν₁)(2−ν₁)/E₁ + 2(1+ν₂)(2−ν₂)/E₂)⁻¹`, and:
//!   - Hertz: `k_n = 4/3 E*` (so `F_n = 4/3 E* √R̄ δ^{3/2}`, Hertz) and `k_t = 8 G*`
//!     (Mindlin: tangential stiffness `8 G* a` with contact radius `a = √(R̄δ)`);
//!   - Hooke: the linear spring with the same maximum overlap as the Hertz contact at the
//!     characteristic impact velocity v_c, `k_n = m̄ v_c² / δ_max²`,
//!     `δ_max = (15 m̄ v_c² / (16 E* √R̄))^{2/5}` (Hertz energy balance, Johnson 1985 §11.1),
//!     and `k_t = (4 G*/E*) k_n` (the Hertz–Mindlin ratio of tangent stiffnesses);
//!   - damping from e: Hooke `γ_n = 2ζ √(k_n/m̄)` with ζ from
//!     [`damping_ratio_from_restitution`] (exact for the linear law); Hertz `γ_n = β v_c /
//!     (√R̄ δ*^{3/2})` with β from [`hertz_beta_from_restitution`] (exact at v_c);
//!     `γ_t = γ_n` in both;
//!   - with `[contact] damping = "tsuji"`, the Hertz dashpot of Tsuji et al. (1992) instead
//!     (see [`Damping::Tsuji`]): `γ_n = b √(4 k_n / (5 m̄))` with b from
//!     [`tsuji_b_from_restitution`], the same restitution at every impact speed, and Tsuji's
//!     tangential `η_t = α √(m̄ S_t)` with `S_t = 8G*√(R̄δ)`, so `γ_t = γ_n √(4G*/E*)`. The
//!     Hooke law's dashpot is linear either way.
//!
//! Friction and restitution of a pair are the smaller of the two materials' values.

use crate::contact::model::{ContactKind, PairModel};
use crate::contact::rolling::{Rolling, RollingParams};
use crate::contact::{
    ContactLaw, ContactParams, Damping, damping_ratio_from_restitution,
    hertz_beta_from_restitution, tsuji_b_from_restitution,
};

/// How a material specifies its contact stiffness and damping.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stiffness {
    /// Elastic constants; stiffness and damping are derived per contact.
    Elastic {
        /// Young's modulus E (Pa).
        young_modulus: f64,
        /// Poisson's ratio ν (−).
        poisson_ratio: f64,
        /// Normal restitution coefficient e (−), 0 < e ≤ 1.
        restitution: f64,
    },
    /// Stiffness and damping of Fleischmann Eq. 1 given directly.
    Direct {
        /// `k_n` (N/m Hooke, N/m² Hertz).
        kn: f64,
        /// `k_t` (N/m Hooke, N/m² Hertz).
        kt: f64,
        /// `γ_n` (1/s Hooke, 1/(m·s) Hertz).
        gamma_n: f64,
        /// `γ_t` (1/s Hooke, 1/(m·s) Hertz).
        gamma_t: f64,
    },
}

/// A validated material.
#[derive(Debug, Clone, PartialEq)]
pub struct Material {
    /// Name used by particle groups and walls.
    pub name: String,
    /// Density ρ (kg/m³); required for materials that particles use.
    pub density: Option<f64>,
    /// Coulomb friction coefficient μ (−).
    pub friction: f64,
    /// Stiffness specification.
    pub stiffness: Stiffness,
}

/// Mixed parameters of a material pair; per-contact values come from
/// [`PairParams::contact_params`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairParams {
    law: ContactLaw,
    dashpot: Damping,
    friction: f64,
    kind: PairKind,
    model: PairModel,
    rolling: Option<Rolling>,
}

/// Constants of a material pair as plain data (see [`PairParams::record`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PairRecord {
    /// True when stiffness and damping derive from elastic constants.
    pub elastic: bool,
    /// Direct `k_n`.
    pub kn: f64,
    /// Direct `k_t`.
    pub kt: f64,
    /// Direct `γ_n`.
    pub gamma_n: f64,
    /// Direct `γ_t`.
    pub gamma_t: f64,
    /// Friction coefficient μ.
    pub friction: f64,
    /// Effective Young's modulus E* (Pa), elastic pairs.
    pub e_star: f64,
    /// Effective shear modulus G* (Pa), elastic pairs.
    pub g_star: f64,
    /// ζ (Hooke), β (Hertz) or Tsuji's b (Hertz, `dashpot` Tsuji) for the pair's restitution,
    /// elastic pairs.
    pub damping: f64,
    /// Characteristic impact velocity (m/s), elastic pairs.
    pub v_char: f64,
    /// How the dashpots scale with overlap.
    pub dashpot: Damping,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum PairKind {
    Direct {
        kn: f64,
        kt: f64,
        gamma_n: f64,
        gamma_t: f64,
    },
    Elastic {
        e_star: f64,
        g_star: f64,
        /// ζ (Hooke), β (Hertz) or b (Hertz with Tsuji's dashpot) for the pair's restitution.
        damping: f64,
        v_char: f64,
    },
}

impl PairParams {
    /// Mixes two materials for `law` and `dashpot`; `v_char` is the characteristic impact
    /// velocity (m/s).
    ///
    /// Returns `None` when one material is elastic and the other direct (the scene validation
    /// refuses such scenes before this is reached).
    pub fn new(
        law: ContactLaw,
        dashpot: Damping,
        a: &Material,
        b: &Material,
        v_char: f64,
    ) -> Option<Self> {
        let friction = a.friction.min(b.friction);
        let kind = match (a.stiffness, b.stiffness) {
            (
                Stiffness::Direct {
                    kn: kn1,
                    kt: kt1,
                    gamma_n: gn1,
                    gamma_t: gt1,
                },
                Stiffness::Direct {
                    kn: kn2,
                    kt: kt2,
                    gamma_n: gn2,
                    gamma_t: gt2,
                },
            ) => PairKind::Direct {
                kn: 0.5 * (kn1 + kn2),
                kt: 0.5 * (kt1 + kt2),
                gamma_n: 0.5 * (gn1 + gn2),
                gamma_t: 0.5 * (gt1 + gt2),
            },
            (
                Stiffness::Elastic {
                    young_modulus: e1,
                    poisson_ratio: n1,
                    restitution: r1,
                },
                Stiffness::Elastic {
                    young_modulus: e2,
                    poisson_ratio: n2,
                    restitution: r2,
                },
            ) => {
                let (e_star, g_star) = effective_moduli((e1, n1), (e2, n2));
                let e = r1.min(r2);
                let damping = match (law, dashpot) {
                    (ContactLaw::Hooke, _) => damping_ratio_from_restitution(e),
                    (ContactLaw::Hertz, Damping::Viscoelastic) => hertz_beta_from_restitution(e),
                    (ContactLaw::Hertz, Damping::Tsuji) => tsuji_b_from_restitution(e),
                };
                PairKind::Elastic {
                    e_star,
                    g_star,
                    damping,
                    v_char,
                }
            }
            _ => return None,
        };
        Some(Self {
            law,
            dashpot,
            friction,
            kind,
            model: PairModel::Spring,
            rolling: None,
        })
    }

    /// The same pair with another contact model.
    pub fn with_model(self, model: PairModel) -> Self {
        Self { model, ..self }
    }

    /// The same pair with another friction coefficient.
    pub fn with_friction(self, friction: f64) -> Self {
        Self { friction, ..self }
    }

    /// The pair's contact model.
    pub fn model(&self) -> PairModel {
        self.model
    }

    /// The same pair with rolling resistance (or without, `None`).
    pub fn with_rolling(self, rolling: Option<Rolling>) -> Self {
        Self { rolling, ..self }
    }

    /// The pair's rolling resistance.
    pub fn rolling(&self) -> Option<Rolling> {
        self.rolling
    }

    /// The pair's friction coefficient.
    pub fn friction(&self) -> f64 {
        self.friction
    }

    /// Per-contact constants of the pair's model for bodies of `radii` and `masses` (m, kg;
    /// a wall is infinite in both).
    pub fn contact_kind(&self, radii: (f64, f64), masses: (f64, f64)) -> ContactKind {
        let rolling = self.rolling.map(|r| RollingParams::new(r, radii, masses));
        self.model.contact_kind(
            |m, r| ContactParams {
                rolling,
                ..self.contact_params(m, r)
            },
            self.friction,
            radii,
            masses,
        )
    }

    /// The pair's constants as plain data, for backends that evaluate
    /// [`PairParams::contact_params`] themselves (the GPU kernels mirror it).
    pub fn record(&self) -> PairRecord {
        match self.kind {
            PairKind::Direct {
                kn,
                kt,
                gamma_n,
                gamma_t,
            } => PairRecord {
                elastic: false,
                kn,
                kt,
                gamma_n,
                gamma_t,
                friction: self.friction,
                dashpot: self.dashpot,
                ..PairRecord::default()
            },
            PairKind::Elastic {
                e_star,
                g_star,
                damping,
                v_char,
            } => PairRecord {
                elastic: true,
                friction: self.friction,
                e_star,
                g_star,
                damping,
                v_char,
                dashpot: self.dashpot,
                ..PairRecord::default()
            },
        }
    }

    /// Parameters of one contact with effective mass `m̄` (kg) and effective radius `R̄` (m).
    pub fn contact_params(&self, eff_mass: f64, eff_radius: f64) -> ContactParams {
        let (kn, kt, gamma_n, gamma_t) = match self.kind {
            PairKind::Direct {
                kn,
                kt,
                gamma_n,
                gamma_t,
            } => (kn, kt, gamma_n, gamma_t),
            PairKind::Elastic {
                e_star,
                g_star,
                damping,
                v_char,
            } => {
                // Undamped Hertz maximum overlap at v_c (see module docs).
                let d_star = (15.0 * eff_mass * v_char * v_char
                    / (16.0 * e_star * eff_radius.sqrt()))
                .powf(0.4);
                match (self.law, self.dashpot) {
                    (ContactLaw::Hertz, Damping::Viscoelastic) => {
                        let g = damping * v_char / (eff_radius.sqrt() * d_star.powf(1.5));
                        (4.0 / 3.0 * e_star, 8.0 * g_star, g, g)
                    }
                    (ContactLaw::Hertz, Damping::Tsuji) => {
                        // γ_n = b √(4 k_n / (5 m̄)) with k_n = 4/3 E*; γ_t = γ_n √(4G*/E*).
                        let g = damping * (16.0 * e_star / (15.0 * eff_mass)).sqrt();
                        (
                            4.0 / 3.0 * e_star,
                            8.0 * g_star,
                            g,
                            g * (4.0 * g_star / e_star).sqrt(),
                        )
                    }
                    (ContactLaw::Hooke, _) => {
                        let kn = eff_mass * v_char * v_char / (d_star * d_star);
                        let g = 2.0 * damping * (kn / eff_mass).sqrt();
                        (kn, 4.0 * g_star / e_star * kn, g, g)
                    }
                }
            }
        };
        ContactParams {
            kn,
            kt,
            gamma_n,
            gamma_t,
            friction: self.friction,
            eff_mass,
            eff_radius,
            damping: self.dashpot,
            rolling: None,
        }
    }
}

/// The pair's effective moduli `(E*, G*)` from each body's `(E, ν)`:
/// `E* = ((1−ν₁²)/E₁ + (1−ν₂²)/E₂)⁻¹`, `G* = (2(1+ν₁)(2−ν₁)/E₁ + 2(1+ν₂)(2−ν₂)/E₂)⁻¹`
/// (Potyondy memo, Table 4's `E_e`, `G_e`).
pub fn effective_moduli(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    let ((e1, n1), (e2, n2)) = (a, b);
    (
        1.0 / ((1.0 - n1 * n1) / e1 + (1.0 - n2 * n2) / e2),
        1.0 / (2.0 * (1.0 + n1) * (2.0 - n1) / e1 + 2.0 * (1.0 + n2) * (2.0 - n2) / e2),
    )
}

/// Effective value `a b / (a + b)` (Fleischmann Eq. 1's m̄ and R̄).
#[inline]
pub fn effective(a: f64, b: f64) -> f64 {
    a * b / (a + b)
}
