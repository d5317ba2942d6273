//! Jäger's contact for elastic–frictional spheres, as Kuhn describes it for DEM
//! (`shared/papers/kuhn_jaeger_contact_model.md`): the exact Cattaneo–Mindlin–Deresiewicz
//! tangential force for any sequence of finite movements, from an equivalent load history.
//!
//! The paper's pseudo-code figures are missing from the text, so the algorithm is rebuilt here
//! from its equations:
//!
//! - Variables are the half-overlap ζ and the half tangential shift ξ (Eq. 10–11). The normal
//!   force is Hertz's, `F_n = Ē √(ζ³ R)` (Eq. 1) with `Ē = 8G/(3(1 − ν))`, `κ = (2 − ν)/(2(1 −
//!   ν))`, and `R = 2 R₁R₂/(R₁ + R₂)` (exact Hertz for equal spheres, the pair's mean otherwise).
//! - The equivalent history is a stack of points `(ζ*_k, F*_k, p*_k)`, `k = 0 … i`, with
//!   `(0, 0, ·)` at the bottom and the current state on top; `p*_k` (a 2-vector in the contact
//!   frame, |p| ≤ f) is the slope of the segment from `ζ*_{k−1}` to `ζ*_k`. The state it stands
//!   for is `ξ = κ Σ p*_k (ζ*_k − ζ*_{k−1})` and `F_t = Σ p*_k (F*_k − F*_{k−1})`.
//! - A movement with `Δζ > 0` and `|Δξ| < κ f Δζ` is elastic (Eq. 4, first case): push
//!   `p = Δξ/(κΔζ)`; `ΔF_t = p (F_n − F_n,old)` (Eq. 8).
//! - Otherwise it slips (Eq. 4, second case): the history above an indentation ζ* is replaced by
//!   one segment of slope |p| = f from ζ* to ζ. With `Δe' = Δξ/κ − p*_i (ζ − ζ_old)` (Eq. 6),
//!   ζ* solves `|Δe' + p*_i (ζ − ζ*)| = f (ζ − ζ*)`: Eq. 5 when |p*_i| < f, Eq. 7 when the top
//!   segment already slips and the movement unloads it. When the top segment slips and the
//!   movement keeps loading it, or when ζ* falls below the top segment, the top point is
//!   removed, the movement is re-based on the point below, and the solve repeats (the paper's
//!   repeated elimination). Falling through to the origin is gross sliding: `p = f ξ̂`.
//!   `ΔF_t` follows Eq. 8, second case.
//! - Memory (Section 3.1): after each step, the two top segments merge while both are elastic
//!   and their slopes differ by less than `|Δp_max|`; the merged slope is the force-weighted mean,
//!   so the current force is unchanged and only the history is approximated. A stack at its
//!   fixed capacity merges the adjacent pair with the closest slopes (counted in
//!   [`JagerState::forced_merges`]).
//! - Contact frame (Section 3.2, Eq. 12–20): the history lives in a frame carried by a
//!   quaternion. Each step the frame is tilted onto the new normal (the `n × Δn` term of Eq. 12,
//!   with Δn measured from the geometry rather than Eq. 14–15's kinematic estimate) and twirled
//!   with the pair's mean spin about the normal (Eq. 13); movements go in and forces come out
//!   through it (Eq. 18–20).
//!
//! Forces: `F_t` is the force on body p (= A), as in the paper; [`JagerOutcome::force`] is the
//! force on B.

use glam::{DQuat, DVec2, DVec3};
use serde::{Deserialize, Serialize};

/// Constants of one Jäger contact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JagerParams {
    /// `Ē = 8G/(3(1 − ν))` (Pa).
    pub e_bar: f64,
    /// `κ = (2 − ν)/(2(1 − ν))`.
    pub kappa: f64,
    /// Friction coefficient f.
    pub friction: f64,
    /// Radius R of Eq. 1 (m).
    pub radius: f64,
    /// `|Δp_max|` of Section 3.1, in [0, 2f]; 0 keeps the history exact.
    pub dp_max: f64,
    /// Most history points a contact may hold (≥ 3).
    pub capacity: usize,
}

impl JagerParams {
    /// From the spheres' shear modulus G (Pa), Poisson's ratio ν and radii (m; a wall's is
    /// infinite).
    ///
    /// The pair's radius is `R = 2 R₁R₂/(R₁ + R₂)`, R for equal spheres (Eq. 1). Against a wall
    /// of the same elastic constants, an elastic half-space, it is `2R`: Hertz gives
    /// `F = 4/3 E* √R* δ^{3/2}` with `E* = E/(2(1−ν²))` and `R* = R`, which Eq. 1's
    /// `Ē √R ζ^{3/2}` with `ζ = δ/2` (each body indents by half the overlap, as both have the
    /// same constants) matches for the radius `2R*`; so does Mindlin's tangential compliance.
    pub fn new(
        shear_modulus: f64,
        poisson_ratio: f64,
        radii: (f64, f64),
        friction: f64,
        dp_max: f64,
        capacity: usize,
    ) -> Self {
        let nu = poisson_ratio;
        Self {
            e_bar: 8.0 * shear_modulus / (3.0 * (1.0 - nu)),
            kappa: (2.0 - nu) / (2.0 * (1.0 - nu)),
            friction,
            radius: if radii.0.is_infinite() {
                2.0 * radii.1
            } else if radii.1.is_infinite() {
                2.0 * radii.0
            } else {
                2.0 * radii.0 * radii.1 / (radii.0 + radii.1)
            },
            dp_max,
            capacity: capacity.max(3),
        }
    }

    /// Hertz force at half-overlap ζ (Eq. 1).
    pub fn normal_force(&self, zeta: f64) -> f64 {
        if zeta > 0.0 {
            self.e_bar * (zeta * zeta * zeta * self.radius).sqrt()
        } else {
            0.0
        }
    }
}

/// One point of the equivalent load history.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct HistoryPoint {
    /// Indentation ζ* (m).
    pub zeta: f64,
    /// Normal force F*_n at ζ* (N).
    pub force: f64,
    /// Slope p* of the segment ending here (contact frame).
    pub slope: DVec2,
}

/// What a Jäger contact carries between steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JagerState {
    /// The equivalent load history, bottom (the origin) first; empty while apart.
    pub history: Vec<HistoryPoint>,
    /// Tangential force on A in the contact frame (N).
    pub tangential: DVec2,
    /// Contact frame: rotates frame vectors (normal = local z) into the global frame.
    pub frame: DQuat,
    /// Merges forced by the capacity so far.
    pub forced_merges: u64,
}

impl Default for JagerState {
    fn default() -> Self {
        Self {
            history: Vec::new(),
            tangential: DVec2::ZERO,
            frame: DQuat::IDENTITY,
            forced_merges: 0,
        }
    }
}

/// One step's kinematics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JagerStep {
    /// Overlap `2ζ` at the end of the step (m).
    pub overlap: f64,
    /// Unit normal from A to B at the end of the step.
    pub normal: DVec3,
    /// Movement `Δū` of B's contact point relative to A's over the step (Eq. 9) (m).
    pub movement: DVec3,
    /// The pair's mean spin about the normal over the step (rad), Eq. 13.
    pub twirl: f64,
}

/// Result of one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JagerOutcome {
    /// Normal force (N).
    pub normal_force: f64,
    /// Total force on B (N).
    pub force: DVec3,
    /// Tangential force on A in the contact frame (N).
    pub tangential_local: DVec2,
    /// True when the step slipped (Eq. 4, second case).
    pub slipped: bool,
}

/// One step: updates `state` and returns the forces.
pub fn jager_step(state: &mut JagerState, step: &JagerStep, p: &JagerParams) -> JagerOutcome {
    let zeta = 0.5 * step.overlap;
    let n = step.normal;
    if zeta <= 0.0 {
        let forced = state.forced_merges;
        *state = JagerState {
            forced_merges: forced,
            ..JagerState::default()
        };
        return JagerOutcome {
            normal_force: 0.0,
            force: DVec3::ZERO,
            tangential_local: DVec2::ZERO,
            slipped: false,
        };
    }
    // Contact frame, Eq. 12–17.
    if state.history.is_empty() {
        state.frame = DQuat::from_rotation_arc(DVec3::Z, n);
        state.history.push(HistoryPoint::default());
    } else {
        let tilt = DQuat::from_rotation_arc((state.frame * DVec3::Z).normalize(), n);
        state.frame = (DQuat::from_axis_angle(n, step.twirl) * tilt * state.frame).normalize();
    }
    // Eq. 10–11 and 18: the half shift in the contact frame.
    let dxi_global = 0.5 * (step.movement - n * step.movement.dot(n));
    let dxi = (state.frame.inverse() * dxi_global).truncate();
    let f_n = p.normal_force(zeta);
    let slipped = advance(state, zeta, f_n, dxi, p);
    compact(state, p);
    // Eq. 20: back to the global frame; the force on B is minus the force on A.
    let ft = state.frame * state.tangential.extend(0.0);
    JagerOutcome {
        normal_force: f_n,
        force: n * f_n - ft,
        tangential_local: state.tangential,
        slipped,
    }
}

/// Eq. 3–8 on the history; returns true for a slip movement.
fn advance(state: &mut JagerState, zeta: f64, f_n: f64, dxi: DVec2, p: &JagerParams) -> bool {
    let f = p.friction;
    let h = &mut state.history;
    let top = *h.last().expect("history has its origin");
    let dzeta = zeta - top.zeta;
    if dxi == DVec2::ZERO && dzeta == 0.0 {
        return false;
    }
    if dzeta > 0.0 && dxi.length() < p.kappa * f * dzeta {
        // Eq. 4 and 8, first case.
        let slope = dxi / (p.kappa * dzeta);
        state.tangential += slope * (f_n - top.force);
        h.push(HistoryPoint {
            zeta,
            force: f_n,
            slope,
        });
        return false;
    }
    // Slip. `d` is the movement, divided by κ, measured from the point `(z_old, f_old)`.
    let mut d = dxi / p.kappa;
    let (mut z_old, mut f_old) = (top.zeta, top.force);
    loop {
        let i = h.len() - 1;
        if i == 0 {
            // Gross sliding: the whole history is overwritten.
            let slope = d.normalize_or_zero() * f;
            state.tangential = slope * f_n;
            h.push(HistoryPoint {
                zeta,
                force: f_n,
                slope,
            });
            return true;
        }
        let p_top = h[i].slope;
        let z_lo = h[i - 1].zeta;
        let de = d - p_top * (zeta - z_old); // Eq. 6
        let scale = d.length().max(p_top.length() * (zeta - z_old).abs());
        let s = if de.length() <= 1e-14 * scale {
            // Moving along the top segment's own slope: it ends at ζ.
            0.0
        } else {
            let a = f * f - p_top.length_squared();
            let b = de.dot(p_top);
            let c = de.length_squared();
            if a > 1e-12 * f * f {
                (b + (b * b + a * c).sqrt()) / a // Eq. 5
            } else if b < 0.0 {
                -c / (2.0 * b) // Eq. 7: unloading inside the top yield cone
            } else {
                f64::INFINITY // continued loading: the cone grows past the top point
            }
        };
        let z_star = zeta - s;
        if z_star >= z_lo {
            if s == 0.0 {
                state.tangential += p_top * (f_n - f_old);
                h[i] = HistoryPoint {
                    zeta,
                    force: f_n,
                    slope: p_top,
                };
                return true;
            }
            let z_star = z_star.min(z_old);
            let f_star = p.normal_force(z_star);
            let slope = (p_top + de / s).normalize_or_zero() * f;
            // Eq. 8, second case.
            state.tangential += slope * (f_n - f_star) - p_top * (f_old - f_star);
            h[i] = HistoryPoint {
                zeta: z_star,
                force: f_star,
                slope: p_top,
            };
            h.push(HistoryPoint {
                zeta,
                force: f_n,
                slope,
            });
            return true;
        }
        // ζ* lies below the top segment: remove it and re-base the movement on the point below.
        let below = h[i - 1];
        state.tangential -= p_top * (f_old - below.force);
        d += p_top * (z_old - z_lo);
        z_old = below.zeta;
        f_old = below.force;
        h.pop();
    }
}

/// Section 3.1 merging, then the capacity limit.
fn compact(state: &mut JagerState, p: &JagerParams) {
    let elastic = |q: &HistoryPoint| q.slope.length() < p.friction * (1.0 - 1e-9);
    let h = &mut state.history;
    while h.len() >= 3 {
        let i = h.len() - 1;
        if !(elastic(&h[i])
            && elastic(&h[i - 1])
            && (h[i].slope - h[i - 1].slope).length() < p.dp_max)
        {
            break;
        }
        merge(h, i);
    }
    while h.len() > p.capacity {
        let k = (2..h.len())
            .min_by(|&a, &b| {
                let da = (h[a].slope - h[a - 1].slope).length();
                let db = (h[b].slope - h[b - 1].slope).length();
                da.total_cmp(&db)
            })
            .expect("a full stack has at least two segments");
        merge(h, k);
        state.forced_merges += 1;
    }
}

/// Merges the segments ending at `k − 1` and `k` into one ending at `k`, with the
/// force-weighted mean slope (the current tangential force is unchanged).
fn merge(h: &mut Vec<HistoryPoint>, k: usize) {
    let w1 = h[k - 1].force - h[k - 2].force;
    let w2 = h[k].force - h[k - 1].force;
    let total = w1 + w2;
    if total != 0.0 {
        h[k].slope = (h[k - 1].slope * w1 + h[k].slope * w2) / total;
    }
    h.remove(k - 1);
}

/// Bytes one contact needs on the GPU for a history of `capacity` points stored as f32
/// (ζ*, F*, p*ₓ, p*ᵧ per point) plus the frame quaternion, the tangential force and the count.
pub fn gpu_bytes_per_contact(capacity: usize) -> usize {
    capacity * 16 + 16 + 8 + 8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Glass-like spheres: G = 4e8 Pa... any constants do; f = 0.5.
    fn params() -> JagerParams {
        JagerParams::new(4e8, 0.3, (1e-3, 1e-3), 0.5, 0.0, 1000)
    }

    fn zeta_of(p: &JagerParams, force: f64) -> f64 {
        (force / (p.e_bar * p.radius.sqrt())).powf(2.0 / 3.0)
    }

    /// Mindlin & Deresiewicz (1953) §17 / Johnson (1985) §7.3: the half shift ξ at the point
    /// (N, T) of the proportional path `N₀ → N₁` with dT/dN = β (loading, stick core of force
    /// `N_c = N − T/f`, `ξ = κ f (ζ(N) − ζ(N_c))`), then back with the same ratio (unloading:
    /// a counter-slip annulus of force `N'` with `T = f(N − N_c1) − 2f(N − N')`, or, once it
    /// reaches the loading's stick core, a fully reversed annulus `T = −f(N − N'')`).
    fn closed_form_shift(p: &JagerParams, n: f64, t: f64, unloading: Option<(f64, f64)>) -> f64 {
        let f = p.friction;
        let z = |force: f64| zeta_of(p, force);
        match unloading {
            None => p.kappa * f * (z(n) - z(n - t / f)),
            Some((n1, t1)) => {
                let core = n1 - t1 / f;
                let reverse = n - (f * (n - core) - t) / (2.0 * f);
                if reverse >= core {
                    p.kappa * f * (z(n) - z(core)) - 2.0 * p.kappa * f * (z(n) - z(reverse))
                } else {
                    -p.kappa * f * (z(n) - z(n + t / f))
                }
            }
        }
    }

    fn drive(state: &mut JagerState, p: &JagerParams, zeta: (f64, f64), xi: (f64, f64)) -> f64 {
        let out = jager_step(
            state,
            &JagerStep {
                overlap: 2.0 * zeta.1,
                normal: DVec3::Z,
                movement: DVec3::new(2.0 * (xi.1 - xi.0), 0.0, -2.0 * (zeta.1 - zeta.0)),
                twirl: 0.0,
            },
            p,
        );
        out.tangential_local.x
    }

    #[test]
    fn four_large_steps_reproduce_mindlin_deresiewicz() {
        let p = params();
        let f = p.friction;
        let beta = 4.0;
        let n0 = 1.0;
        let n1 = beta * n0 / (beta - 0.9 * f); // T = 0.9 f N at the turning point
        let t1 = 0.9 * f * n1;
        let n2 = (beta * n1 - t1) / (beta + 0.9 * f); // T = −0.9 f N at the end
        let t_load = |n: f64| beta * (n - n0);
        let t_unload = |n: f64| t1 + beta * (n - n1);
        let checkpoints = [
            (0.5 * (n0 + n1), t_load(0.5 * (n0 + n1)), None),
            (n1, t1, None),
            (0.5 * (n1 + n2), t_unload(0.5 * (n1 + n2)), Some((n1, t1))),
            (n2, t_unload(n2), Some((n1, t1))),
        ];
        let mut state = JagerState::default();
        let mut zeta = 0.0;
        let mut xi = 0.0;
        let z0 = zeta_of(&p, n0);
        drive(&mut state, &p, (zeta, z0), (0.0, 0.0));
        zeta = z0;
        for (k, (n, t, unloading)) in checkpoints.into_iter().enumerate() {
            let z = zeta_of(&p, n);
            let x = closed_form_shift(&p, n, t, unloading);
            let ft = drive(&mut state, &p, (zeta, z), (xi, x));
            assert!(
                (ft - t).abs() <= 1e-9 * t.abs().max(0.1 * n),
                "step {}: F_t {ft} against the closed form {t}",
                k + 1
            );
            zeta = z;
            xi = x;
        }
        // The path ends fully reversed: only the origin, the untouched core and the slip
        // segment remain.
        assert_eq!(state.history.len(), 3);
    }

    #[test]
    fn history_sums_match_the_tangential_force_and_merging_keeps_it() {
        // A wandering elastic–slip path, with and without merging.
        for dp_max in [0.0, 0.1] {
            let p = JagerParams {
                dp_max,
                capacity: 12,
                ..params()
            };
            let mut state = JagerState::default();
            let mut zeta = 0.0;
            let mut x = DVec2::ZERO;
            for k in 0..400 {
                let t = k as f64 * 0.05;
                let z = 2e-6 * (1.2 + (0.7 * t).sin() * 0.3 + (0.13 * t).cos() * 0.2);
                let nx = DVec2::new((0.9 * t).sin(), (0.37 * t).cos()) * 3e-7;
                let out = jager_step(
                    &mut state,
                    &JagerStep {
                        overlap: 2.0 * z,
                        normal: DVec3::Z,
                        movement: (2.0 * (nx - x)).extend(-2.0 * (z - zeta)),
                        twirl: 0.0,
                    },
                    &p,
                );
                zeta = z;
                x = nx;
                let h = &state.history;
                let sum: DVec2 = (1..h.len())
                    .map(|i| h[i].slope * (h[i].force - h[i - 1].force))
                    .sum();
                assert!((sum - out.tangential_local).length() <= 1e-9 * out.normal_force);
                assert!(
                    out.tangential_local.length() <= p.friction * out.normal_force * (1.0 + 1e-9)
                );
                assert!(h.len() <= p.capacity);
                assert!(
                    h.windows(2).all(|w| w[0].zeta <= w[1].zeta),
                    "ζ* must increase"
                );
            }
        }
    }

    #[test]
    fn a_rigidly_turning_loaded_pair_keeps_its_force_in_the_contact_frame() {
        let p = params();
        let mut state = JagerState::default();
        let z = 2e-6;
        drive(&mut state, &p, (0.0, z), (0.0, 0.0));
        let ft = drive(
            &mut state,
            &p,
            (z, z * 1.05),
            (0.0, 0.6 * p.kappa * p.friction * z),
        );
        assert!(ft > 0.0);
        let before = state.tangential;
        let global_before = state.frame * before.extend(0.0);
        // Tumble and twirl 2 rad about an oblique axis in 500 steps: no relative movement.
        let axis = DVec3::new(0.3, 0.5, 0.8).normalize();
        let steps = 500;
        let dphi = 2.0 / steps as f64;
        let mut normal = DVec3::Z;
        for _ in 0..steps {
            normal = DQuat::from_axis_angle(axis, dphi) * normal;
            jager_step(
                &mut state,
                &JagerStep {
                    overlap: 2.0 * z * 1.05,
                    normal,
                    movement: DVec3::ZERO,
                    twirl: dphi * axis.dot(normal),
                },
                &p,
            );
        }
        assert!((state.tangential - before).length() <= 1e-12 * before.length());
        let expected = DQuat::from_axis_angle(axis, 2.0) * global_before;
        let global_after = state.frame * state.tangential.extend(0.0);
        assert!(
            (global_after - expected).length() <= 1e-5 * expected.length(),
            "global force {global_after} against the rotated {expected}"
        );
    }
}
