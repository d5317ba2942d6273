//! Which contact model a material pair uses, its per-contact constants, the history a contact
//! carries, and one evaluation that dispatches to the model.
//!
//! Scenes choose a model per material pair (`[[contact.pairs]]`); pairs not listed use the
//! scene's Fleischmann spring–dashpot (`[contact] law, history`).

use glam::DVec3;
use serde::{Deserialize, Serialize};

use super::hill::{HillParams, HillState, HillStep, Moisture, hill_step};
use super::jager::{JagerParams, JagerState, JagerStep, jager_step};
use super::kuhn::{KuhnParams, KuhnState, KuhnStep, kuhn_step};
use super::rolling::{RollingModel, RollingStep, rolling_torque};
use super::{ContactLaw, ContactModel, ContactParams, HistoryMode, RelativeMotion, contact_force};

/// Stiffness of the linear model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum LinearStiffness {
    /// `k_n`, `k_t` given directly (N/m).
    Direct {
        /// Normal stiffness (N/m).
        kn: f64,
        /// Tangential stiffness (N/m).
        kt: f64,
    },
    /// PFC's deformability: `k_n = π r² E*/L` (`r = min(R₁, R₂)`, `L = R₁ + R₂`, or `R` against
    /// a wall) and `k_t = k_n/κ*`.
    Deformability {
        /// Effective modulus E* (Pa).
        effective_modulus: f64,
        /// Stiffness ratio κ* = k_n/k_t.
        stiffness_ratio: f64,
    },
}

/// The contact model of a material pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum PairModel {
    /// The scene's Fleischmann spring–dashpot law and history mode.
    Spring,
    /// Kuhn, Suzuki & Daouadji's refined linear-frictional contact.
    Linear {
        /// Stiffness.
        stiffness: LinearStiffness,
        /// Apply Eq. 23's twirl.
        twirl: bool,
        /// The paper's refinements 1–3 (false: the conventional elastic predictor and radial
        /// return the paper compares against; CPU reference only).
        refined: bool,
    },
    /// Potyondy's hill model (against a wall: `R_e = R`, `m_e = m`, no liquid bridge).
    Hill {
        /// `E_e` of the pair (Pa).
        e_e: f64,
        /// `G_e` of the pair (Pa).
        g_e: f64,
        /// Damping constant α_h.
        damping_constant: f64,
        /// Suction ψ (Pa).
        suction: f64,
    },
    /// Jäger's history-stack contact (bodies of equal elastic constants; against a wall of
    /// them, the pair radius is 2R).
    Jager {
        /// Shear modulus G of the spheres (Pa).
        shear_modulus: f64,
        /// Poisson's ratio ν of the spheres.
        poisson_ratio: f64,
        /// `|Δp_max|` (Section 3.1).
        dp_max: f64,
        /// History capacity (points).
        capacity: usize,
    },
}

/// Per-contact constants of whichever model the pair uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ContactKind {
    /// Fleischmann spring–dashpot.
    Spring(ContactParams),
    /// Kuhn linear-frictional.
    Linear(KuhnParams),
    /// Hill.
    Hill(HillParams),
    /// Jäger.
    Jager(JagerParams),
}

/// `a b / (a + b)`, with an infinite partner (a wall) leaving the other value.
fn effective(a: f64, b: f64) -> f64 {
    if a.is_infinite() {
        b
    } else if b.is_infinite() {
        a
    } else {
        a * b / (a + b)
    }
}

impl PairModel {
    /// Per-contact constants for bodies of `radii` and `masses` (a wall: infinite), with the
    /// pair's friction and, for the spring model, the spring parameters already evaluated.
    pub fn contact_kind(
        &self,
        spring: impl FnOnce(f64, f64) -> ContactParams,
        friction: f64,
        radii: (f64, f64),
        masses: (f64, f64),
    ) -> ContactKind {
        match *self {
            PairModel::Spring => ContactKind::Spring(spring(
                effective(masses.0, masses.1),
                effective(radii.0, radii.1),
            )),
            PairModel::Linear {
                stiffness,
                twirl,
                refined,
            } => {
                let (kn, kt) = match stiffness {
                    LinearStiffness::Direct { kn, kt } => (kn, kt),
                    LinearStiffness::Deformability {
                        effective_modulus,
                        stiffness_ratio,
                    } => {
                        let r = radii.0.min(radii.1);
                        let l = if radii.0.is_infinite() || radii.1.is_infinite() {
                            r
                        } else {
                            radii.0 + radii.1
                        };
                        let kn = std::f64::consts::PI * r * r * effective_modulus / l;
                        (kn, kn / stiffness_ratio)
                    }
                };
                ContactKind::Linear(KuhnParams {
                    kn,
                    kt,
                    friction,
                    twirl,
                    refined,
                })
            }
            PairModel::Hill {
                e_e,
                g_e,
                damping_constant,
                suction,
            } => ContactKind::Hill(HillParams::new(
                e_e,
                g_e,
                radii,
                masses,
                damping_constant,
                friction,
                suction,
            )),
            PairModel::Jager {
                shear_modulus,
                poisson_ratio,
                dp_max,
                capacity,
            } => ContactKind::Jager(JagerParams::new(
                shear_modulus,
                poisson_ratio,
                radii,
                friction,
                dp_max,
                capacity,
            )),
        }
    }

    /// True for models that account their contacts' elastic and dissipated work (linear, hill).
    pub fn accounts_work(&self) -> bool {
        matches!(self, PairModel::Linear { .. } | PairModel::Hill { .. })
    }

    /// True for models whose contacts act across a gap (a hill model with suction).
    pub fn acts_across_gaps(&self) -> bool {
        matches!(self, PairModel::Hill { suction, .. } if *suction > 0.0)
    }
}

/// What one contact carries between steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SlotHistory {
    /// Fleischmann: tangential displacement `u_t`.
    Spring(DVec3),
    /// Kuhn: previous overlap, tangential force, dissipated work.
    Linear(KuhnState),
    /// Hill: shear force, moisture state, dissipated work.
    Hill(HillState),
    /// Jäger: the equivalent load history and contact frame.
    Jager(Box<JagerState>),
    /// Fleischmann with type C rolling resistance: `u_t` and the rolling spring torque on B
    /// (N·m).
    SpringRolling(DVec3, DVec3),
}

impl Default for SlotHistory {
    fn default() -> Self {
        SlotHistory::Spring(DVec3::ZERO)
    }
}

impl SlotHistory {
    /// The history of a contact that has just formed.
    pub fn fresh(kind: &ContactKind) -> Self {
        match kind {
            ContactKind::Spring(p)
                if p.rolling
                    .is_some_and(|r| r.rolling.model == RollingModel::Epsd) =>
            {
                SlotHistory::SpringRolling(DVec3::ZERO, DVec3::ZERO)
            }
            ContactKind::Spring(_) => SlotHistory::Spring(DVec3::ZERO),
            ContactKind::Linear(_) => SlotHistory::Linear(KuhnState {
                overlap: f64::NEG_INFINITY,
                ..KuhnState::default()
            }),
            ContactKind::Hill(_) => SlotHistory::Hill(HillState::default()),
            ContactKind::Jager(_) => SlotHistory::Jager(Box::default()),
        }
    }

    /// True when nothing is remembered (a fresh contact would carry the same).
    pub fn is_blank(&self) -> bool {
        match self {
            SlotHistory::Spring(u) => *u == DVec3::ZERO,
            SlotHistory::SpringRolling(u, m) => *u == DVec3::ZERO && *m == DVec3::ZERO,
            SlotHistory::Linear(s) => s.overlap == f64::NEG_INFINITY || s.overlap < 0.0,
            SlotHistory::Hill(s) => *s == HillState::default(),
            SlotHistory::Jager(s) => s.history.is_empty(),
        }
    }

    /// True for a wet hill contact (its liquid bridge holds across a gap).
    pub fn is_wet(&self) -> bool {
        matches!(self, SlotHistory::Hill(s) if s.moisture == Moisture::Wet)
    }

    /// Length of a Jäger history (0 for the other models).
    pub fn history_points(&self) -> usize {
        match self {
            SlotHistory::Jager(s) => s.history.len(),
            _ => 0,
        }
    }
}

/// Geometry and motion of one contact for one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kinematics {
    /// Overlap (m); negative is a gap.
    pub overlap: f64,
    /// Unit normal from A to B.
    pub normal: DVec3,
    /// Relative motion of B's contact point (see [`RelativeMotion`]).
    pub motion: RelativeMotion,
    /// The pair's mean spin about the normal over the step (rad).
    pub twirl: f64,
    /// Angular velocity of B relative to A at the current time (rad/s), for rolling
    /// resistance (a wall does not turn).
    pub spin: DVec3,
    /// Rotation of B relative to A over the last step, `(ω_B − ω_A)_{n−1/2} Δt` (rad).
    pub rotation: DVec3,
}

/// The result of one evaluation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evaluation {
    /// Force on B (N).
    pub force: DVec3,
    /// Normal force (N), positive when repulsive.
    pub normal_force: f64,
    /// The contact slid this step.
    pub sliding: bool,
    /// Elastic energy stored in the contact after the step (J); linear and hill models only
    /// (0 for the others, which do not account their work).
    pub elastic: f64,
    /// Work dissipated in the contact during the step (J); linear and hill models only.
    pub dissipated: f64,
    /// Rolling resistance torque on B (N·m); A receives its negative.
    pub torque: DVec3,
}

/// Evaluates one contact, updating its history. Returns `None` when the contact exerts no
/// force this step (apart, and not held by a liquid bridge); the history is then reset, except
/// for the moisture state of a hill contact.
pub fn evaluate(
    spring_model: ContactModel,
    kind: &ContactKind,
    history: &mut SlotHistory,
    k: &Kinematics,
) -> Option<Evaluation> {
    if k.overlap <= 0.0 && !history.is_wet() {
        *history = match history {
            // A ruptured or dry hill contact stays dry; every other history ends.
            SlotHistory::Hill(s) if s.moisture == Moisture::Ruptured => {
                SlotHistory::Hill(HillState {
                    moisture: Moisture::Ruptured,
                    ..HillState::default()
                })
            }
            _ => SlotHistory::fresh(kind),
        };
        if let SlotHistory::Linear(s) = history {
            s.overlap = k.overlap;
        }
        return None;
    }
    if !matches!(
        (kind, &*history),
        (
            ContactKind::Spring(_),
            SlotHistory::Spring(_) | SlotHistory::SpringRolling(..)
        ) | (ContactKind::Linear(_), SlotHistory::Linear(_))
            | (ContactKind::Hill(_), SlotHistory::Hill(_))
            | (ContactKind::Jager(_), SlotHistory::Jager(_))
    ) {
        *history = SlotHistory::fresh(kind);
    }
    // A spring–dashpot history that has to carry a rolling spring from now on (checked on the
    // kind, not through `SlotHistory::fresh`, which allocates for Jäger contacts).
    if let (ContactKind::Spring(p), SlotHistory::Spring(u)) = (kind, &*history)
        && p.rolling
            .is_some_and(|r| r.rolling.model == RollingModel::Epsd)
    {
        *history = SlotHistory::SpringRolling(*u, DVec3::ZERO);
    }
    Some(match (kind, history) {
        (
            ContactKind::Spring(p),
            history @ (SlotHistory::Spring(_) | SlotHistory::SpringRolling(..)),
        ) => {
            // Type A rolling resistance keeps no history; type C its spring torque.
            let mut no_spring = DVec3::ZERO;
            let (u, spring) = match history {
                SlotHistory::SpringRolling(u, m) => (u, m),
                SlotHistory::Spring(u) => (u, &mut no_spring),
                _ => unreachable!("matched above"),
            };
            let o = contact_force(spring_model, k.overlap, k.normal, k.motion, *u, p);
            *u = o.tangential_displacement;
            if spring_model.history != HistoryMode::True {
                *u = DVec3::ZERO;
            }
            let torque = spring_rolling(spring_model, p, k, o.normal_force, spring);
            Evaluation {
                force: o.force,
                normal_force: o.normal_force,
                sliding: o.sliding,
                elastic: 0.0,
                dissipated: 0.0,
                torque,
            }
        }
        (ContactKind::Linear(p), SlotHistory::Linear(s)) => {
            let before = s.dissipated;
            let o = kuhn_step(
                s,
                &KuhnStep {
                    overlap: k.overlap,
                    normal: k.normal,
                    movement: k.motion.displacement,
                    twirl: k.twirl,
                },
                p,
            );
            Evaluation {
                force: o.force,
                normal_force: o.normal_force,
                sliding: o.slip_start.is_some(),
                elastic: o.elastic_work,
                dissipated: s.dissipated - before,
                torque: DVec3::ZERO,
            }
        }
        (ContactKind::Hill(p), SlotHistory::Hill(s)) => {
            let before = s.dissipated;
            let o = hill_step(
                s,
                &HillStep {
                    gap: -k.overlap,
                    normal: k.normal,
                    velocity: k.motion.velocity,
                    displacement: k.motion.displacement,
                    twirl: k.twirl,
                },
                p,
            );
            let strength = p.friction * o.surface_normal_force;
            Evaluation {
                force: o.force,
                normal_force: o.force.dot(k.normal),
                sliding: o.shear_force.length() >= strength * (1.0 - 1e-12) && strength > 0.0,
                elastic: o.elastic_work,
                dissipated: s.dissipated - before,
                torque: DVec3::ZERO,
            }
        }
        (ContactKind::Jager(p), SlotHistory::Jager(s)) => {
            let o = jager_step(
                s,
                &JagerStep {
                    overlap: k.overlap,
                    normal: k.normal,
                    movement: k.motion.displacement,
                    twirl: k.twirl,
                },
                p,
            );
            Evaluation {
                force: o.force,
                normal_force: o.normal_force,
                sliding: o.tangential_local.length() >= p.friction * o.normal_force * (1.0 - 1e-12),
                elastic: 0.0,
                dissipated: 0.0,
                torque: DVec3::ZERO,
            }
        }
        _ => unreachable!("history matched to the kind above"),
    })
}

/// The rolling resistance torque on B of a spring–dashpot contact (zero without it), with its
/// spring torque `m` (type C). The normal stiffness is `dF_n/dδ`: `k_n` (Hooke), `3/2 k_n f`
/// (Hertz, `f = √(R̄δ)`).
fn spring_rolling(
    model: ContactModel,
    p: &ContactParams,
    k: &Kinematics,
    normal_force: f64,
    m: &mut DVec3,
) -> DVec3 {
    let Some(r) = p.rolling else {
        return DVec3::ZERO;
    };
    let normal_stiffness = match model.law {
        ContactLaw::Hooke => p.kn,
        ContactLaw::Hertz => 1.5 * p.kn * model.law.factor(p.eff_radius, k.overlap),
    };
    rolling_torque(
        &r,
        m,
        &RollingStep {
            normal: k.normal,
            spin: k.spin,
            rotation: k.rotation,
            normal_force,
            normal_stiffness,
        },
    )
}
