// models.wgsl — `package::models`, the contact models beyond Fleischmann's spring–dashpot, in
// f32, imported by the kernels that evaluate them. Each function is the twin of a CPU function in
// `crates/wgdem-core/src/contact/` with the same steps in the same order:
// `kuhn_step` ↔ `kuhn::kuhn_step`, `hill_step` ↔ `hill::hill_step`,
// `jager_step` ↔ `jager::jager_step` (its points where the kernel's `package::slot_tables` keeps
// them).

import package::shared::{MOISTURE_RUPTURED, MOISTURE_WET, ROLLING_CDT};
import package::spec::{JAGER_CAP};
import package::slot_tables::{point, put_point};
import package::common::{sin_cos, two_sum};

// ---- Kuhn, Suzuki & Daouadji: refined linear-frictional contact (Fig. 1) ------------------

struct KuhnParams {
    kn: f32,
    kt: f32,
    friction: f32,
    twirl: u32,          // 1: apply Eq. 23
}

struct KuhnState {
    tangential: vec3<f32>,   // force on A, paper convention
    overlap: f32,            // ζ at the end of the last step (≤ 0: apart)
}

struct KuhnOut {
    force: vec3<f32>,        // on B
    normal_force: f32,
    elastic: f32,            // stored energy (J)
    dissipated: f32,         // this step's dissipated work (J)
    slid: u32,
}

// `lo` is the low part of the tangential force where the caller keeps a two-part history (wall
// contacts; zero otherwise): an elastic step adds its increment with `two_sum`, so a resting
// contact keeps increments below half an ulp of its force. Sliding and new contacts reset it.
fn kuhn_step(s: ptr<function, KuhnState>, lo: ptr<function, vec3<f32>>, zeta1: f32, n: vec3<f32>,
             movement: vec3<f32>, twirl: f32, p: KuhnParams, one: f32) -> KuhnOut {
    if zeta1 < 0.0 {
        *lo = vec3<f32>(0.0);
        (*s).tangential = vec3<f32>(0.0);
        (*s).overlap = zeta1;
        return KuhnOut(vec3<f32>(0.0), 0.0, 0.0, 0.0, 0u);
    }
    let zeta0 = (*s).overlap;
    let start = (*s).tangential;
    var fn0 = p.kn * zeta0;
    var ft0 = start;
    let dzeta_kin = -dot(movement, n);
    var dxi = movement + n * dzeta_kin;
    let fn1 = p.kn * zeta1;
    var work = 0.0;
    var slid = 0u;
    var ft = vec3<f32>(0.0);
    var ft_lo = vec3<f32>(0.0);
    if fn0 <= 0.0 {
        // Eq. 7–8: the contact began inside the step.
        var alpha0 = 0.0;
        if dzeta_kin > 0.0 {
            alpha0 = clamp(1.0 - zeta1 / dzeta_kin, 0.0, 1.0);
        }
        dxi = dxi * (1.0 - alpha0);
        ft = dxi * p.kt;
        let limit = p.friction * fn1;
        let len = length(ft);
        if len > limit {
            ft = ft * (limit / len);
        }
        work = 0.5 * dot(dxi, ft);
        ft0 = vec3<f32>(0.0);
    } else {
        var dzeta = zeta1 - zeta0;
        let trial = two_sum(ft0, dxi * p.kt + *lo, one);
        ft = trial.hi.xyz;
        ft_lo = trial.lo.xyz;
        let limit = p.friction * fn1;
        if length(ft) > limit {
            ft_lo = vec3<f32>(0.0);
            // Eq. 9–15.
            let a = (p.friction * p.kn * dzeta) * (p.friction * p.kn * dzeta) - dot(dxi, dxi) * p.kt * p.kt;
            let b = p.friction * p.friction * p.kn * fn0 * dzeta - p.kt * dot(ft0, dxi);
            let c = (p.friction * fn0) * (p.friction * fn0) - dot(ft0, ft0);
            let root = sqrt(max(b * b - a * c, 0.0));
            var alpha_s = 0.0;
            if c <= 0.0 {
                if b > 0.0 && a < 0.0 {
                    alpha_s = clamp(-2.0 * b / a, 0.0, 1.0);
                }
            } else if b <= 0.0 {
                alpha_s = clamp(c / (root - b), 0.0, 1.0);
            } else if a < 0.0 {
                alpha_s = clamp((-b - root) / a, 0.0, 1.0);
            } else {
                alpha_s = 1.0;
            }
            slid = 1u;
            work = alpha_s * dot(dxi, ft0 + dxi * (0.5 * alpha_s * p.kt));
            fn0 = fn0 + alpha_s * p.kn * dzeta;
            ft0 = ft0 + dxi * (alpha_s * p.kt);
            dzeta = dzeta * (1.0 - alpha_s);
            dxi = dxi * (1.0 - alpha_s);
            // Eq. 16–21, Eq. 18 in closed form.
            let dxi_len = length(dxi);
            let ft0_len = length(ft0);
            var dir = vec3<f32>(0.0);
            if dxi_len > 1e-7 * (ft0_len / p.kt) && ft0_len > 0.0 && fn0 > 0.0 {
                let m_f = ft0 / ft0_len;
                let m_xi = dxi / dxi_len;
                let m_perp = cross(n, m_xi);
                let theta0 = atan2(dot(m_f, m_perp), dot(m_f, m_xi));
                var theta1 = theta0;
                if abs(theta0) >= 1e-7 {
                    let c1 = p.friction * fn0 / (p.kt * dxi_len);
                    let c2 = p.kn * dzeta / fn0;
                    var e = 0.0;
                    if abs(c2) < 1e-6 {
                        e = 1.0 / c1;
                    } else if 1.0 + c2 > 0.0 {
                        e = log(1.0 + c2) / (c1 * c2);
                    } else {
                        e = 1e30;
                    }
                    let half = tan(0.5 * abs(theta0)) * exp(-e);
                    theta1 = sign(theta0) * 2.0 * atan(half);
                }
                dir = m_perp * sin(theta1) + m_xi * cos(theta1);
            } else if ft0_len > 0.0 {
                dir = ft0 / ft0_len;
            } else if dxi_len > 0.0 {
                dir = dxi / dxi_len;
            }
            ft = dir * (p.friction * fn1);
        }
        work = work + 0.5 * dot(dxi, ft0 + ft);
    }
    // Eq. 22, then Eq. 23 as an exact rotation about n.
    ft = ft - n * dot(ft, n);
    ft_lo = ft_lo - n * dot(ft_lo, n);
    if p.twirl != 0u && twirl != 0.0 {
        let turn = sin_cos(twirl);
        ft = ft * turn.y + cross(n, ft) * turn.x;
        ft_lo = ft_lo * turn.y + cross(n, ft_lo) * turn.x;
    }
    *lo = ft_lo;
    let reversible = (dot(ft, ft) - dot(start, start)) / (2.0 * p.kt);
    (*s).tangential = ft;
    (*s).overlap = zeta1;
    return KuhnOut(n * fn1 - ft, fn1, fn1 * fn1 / (2.0 * p.kn) + dot(ft, ft) / (2.0 * p.kt),
        work - reversible, slid);
}

// ---- Potyondy's hill model (memo Section 1.6) ---------------------------------------------

struct HillParams {
    kn: f32,
    ks: f32,
    eta_n: f32,
    eta_s: f32,
    friction: f32,
    suction: f32,
    r_o: f32,
    _p: f32,
}

struct HillState {
    shear: vec3<f32>,        // Hertz–Mindlin shear force on B
    moisture: u32,
}

struct HillOut {
    force: vec3<f32>,        // on B
    surface: f32,            // normal surface force, compressive positive
    moisture_force: f32,     // tension positive
    elastic: f32,
    dissipated: f32,         // this step's dashpot and slip work
    slid: u32,
    is_active: u32,
}

// Table 4 from the pair's effective moduli, radii and masses (a wall: radius and mass 1e30).
fn hill_params(e_e: f32, g_e: f32, r1: f32, r2: f32, m1: f32, m2: f32, alpha: f32,
               friction: f32, suction: f32) -> HillParams {
    let r_e = 1.0 / (1.0 / r1 + 1.0 / r2);
    let m_e = 1.0 / (1.0 / m1 + 1.0 / m2);
    let kn = 4.0 / 3.0 * e_e * sqrt(r_e);
    let ks = 8.0 * g_e * sqrt(r_e);
    return HillParams(kn, ks, alpha * sqrt(m_e * kn), alpha * sqrt(m_e * ks), friction, suction,
        min(r1, r2), 0.0);
}

fn hill_step(s: ptr<function, HillState>, gap: f32, n: vec3<f32>, velocity: vec3<f32>,
             displacement: vec3<f32>, twirl: f32, p: HillParams) -> HillOut {
    let wet = (*s).moisture == MOISTURE_WET;
    if !wet && gap > 0.0 {
        (*s).shear = vec3<f32>(0.0);
        return HillOut(vec3<f32>(0.0), 0.0, 0.0, 0.0, 0.0, 0u, 0u);
    }
    let f_max = p.suction * 3.14159265 * p.r_o * p.r_o;
    var fm = 0.0;
    if wet {
        if gap < 0.0 {
            fm = f_max;
        } else if gap <= 2.0 * p.r_o {
            fm = f_max * exp(-gap / (2.0 * p.r_o));
        } else {
            (*s).moisture = MOISTURE_RUPTURED;
        }
    }
    let overlap = -gap;
    if overlap <= 0.0 {
        (*s).shear = vec3<f32>(0.0);
        return HillOut(-n * fm, 0.0, fm, 0.0, 0.0, 0u, select(0u, 1u, (*s).moisture == MOISTURE_WET));
    }
    let root = sqrt(overlap);
    let quarter = sqrt(root);
    let rate = -dot(velocity, n);
    let hertz_n = p.kn * overlap * root;
    let damp_n = p.eta_n * quarter * rate;
    let surface = hertz_n + damp_n;
    let strength = max(p.friction * surface, 0.0);
    let v_s = velocity - n * dot(velocity, n);
    let d_s = displacement - n * dot(displacement, n);
    var carried = (*s).shear - n * dot((*s).shear, n);
    if twirl != 0.0 {
        let turn = sin_cos(twirl);
        carried = carried * turn.y + cross(n, carried) * turn.x;
    }
    let k_tangent = p.ks * root;
    let trial = carried - d_s * k_tangent;
    let trial_len = length(trial);
    var hm = trial;
    var dissipated = 0.0;
    var slid = 0u;
    if trial_len > strength {
        dissipated = strength * (trial_len - strength) / k_tangent;
        hm = trial * (strength / trial_len);
        slid = 1u;
    }
    let total = hm - v_s * (p.eta_s * quarter);
    let total_len = length(total);
    var shear = total;
    if total_len > strength {
        shear = total * (strength / total_len);
        slid = 1u;
    }
    dissipated = dissipated + damp_n * -dot(displacement, n) + dot(shear - hm, -d_s);
    (*s).shear = hm;
    let elastic = 0.4 * p.kn * overlap * overlap * root + dot(hm, hm) / (2.0 * k_tangent);
    return HillOut(n * (surface - fm) + shear, surface, fm, elastic, dissipated, slid, 1u);
}

// ---- Jäger's history-stack contact (Kuhn & Jäger, Eq. 1–20, Section 3.1) ------------------

// JAGER_CAP (points of the working history) comes from `package::spec`, set where the kernel
// is compiled.

struct JagerParams {
    e_bar: f32,
    kappa: f32,
    friction: f32,
    radius: f32,
    dp_max: f32,
    capacity: u32,
    _p0: u32,
    _p1: u32,
}

// One contact: the count of its history points (ζ*, F*, p*ₓ, p*ᵧ; 0: apart), where they lie
// (`at`, for `package::slot_tables`: the contact kernels keep them in the contact's slot, the
// probe in a working array), the tangential force on A in the contact frame, the frame
// quaternion (x, y, z, w; frame → global), and the working history's last point (`spare`,
// index JAGER_CAP − 1): a step may add one point past a full slot before merging.
struct JagerState {
    count: u32,
    at: u32,
    tangential: vec2<f32>,
    frame: vec4<f32>,
    spare: vec4<f32>,
}

// Point m of the history, and writing it.
fn get_point(s: ptr<function, JagerState>, m: u32) -> vec4<f32> {
    if m + 1u == JAGER_CAP {
        return (*s).spare;
    }
    return point((*s).at, m);
}
fn set_point(s: ptr<function, JagerState>, m: u32, v: vec4<f32>) {
    if m + 1u == JAGER_CAP {
        (*s).spare = v;
    } else {
        put_point((*s).at, m, v);
    }
}

fn q_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}

fn q_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let t = 2.0 * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}

fn q_conj(q: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(-q.xyz, q.w);
}

fn q_axis_angle(axis: vec3<f32>, angle: f32) -> vec4<f32> {
    let half = sin_cos(0.5 * angle);
    return vec4<f32>(axis * half.x, half.y);
}

// Shortest rotation taking unit `a` to unit `b` (glam's from_rotation_arc).
fn q_arc(a: vec3<f32>, b: vec3<f32>) -> vec4<f32> {
    let d = dot(a, b);
    if d < -1.0 + 1e-6 {
        var axis = cross(vec3<f32>(1.0, 0.0, 0.0), a);
        if dot(axis, axis) < 1e-12 {
            axis = cross(vec3<f32>(0.0, 1.0, 0.0), a);
        }
        return vec4<f32>(normalize(axis), 0.0);
    }
    return normalize(vec4<f32>(cross(a, b), 1.0 + d));
}

fn jager_force(p: JagerParams, zeta: f32) -> f32 {
    if zeta <= 0.0 {
        return 0.0;
    }
    return p.e_bar * sqrt(zeta * zeta * zeta * p.radius);
}

fn normalize_or_zero2(v: vec2<f32>) -> vec2<f32> {
    let l = length(v);
    if l > 0.0 {
        return v / l;
    }
    return vec2<f32>(0.0);
}

// Eq. 3–8 on the history; returns 1 for a slip movement.
fn jager_advance(s: ptr<function, JagerState>, zeta: f32, f_n: f32, dxi: vec2<f32>,
                 p: JagerParams) -> u32 {
    let f = p.friction;
    let top = get_point(s, (*s).count - 1u);
    let dzeta = zeta - top.x;
    if all(dxi == vec2<f32>(0.0)) && dzeta == 0.0 {
        return 0u;
    }
    if dzeta > 0.0 && length(dxi) < p.kappa * f * dzeta {
        let slope = dxi / (p.kappa * dzeta);
        (*s).tangential = (*s).tangential + slope * (f_n - top.y);
        set_point(s, (*s).count, vec4<f32>(zeta, f_n, slope));
        (*s).count = (*s).count + 1u;
        return 0u;
    }
    var d = dxi / p.kappa;
    var z_old = top.x;
    var f_old = top.y;
    loop {
        let i = (*s).count - 1u;
        if i == 0u {
            let slope = normalize_or_zero2(d) * f;
            (*s).tangential = slope * f_n;
            set_point(s, 1u, vec4<f32>(zeta, f_n, slope));
            (*s).count = 2u;
            return 1u;
        }
        let p_top = get_point(s, i).zw;
        let below = get_point(s, i - 1u);
        let z_lo = below.x;
        let de = d - p_top * (zeta - z_old);
        let scale = max(length(d), length(p_top) * abs(zeta - z_old));
        var sol = 0.0;
        if length(de) > 1e-6 * scale {
            let a = f * f - dot(p_top, p_top);
            let b = dot(de, p_top);
            let c = dot(de, de);
            if a > 1e-5 * f * f {
                sol = (b + sqrt(b * b + a * c)) / a;
            } else if b < 0.0 {
                sol = -c / (2.0 * b);
            } else {
                sol = 1e30;
            }
        }
        let z_star = zeta - sol;
        if z_star >= z_lo {
            if sol == 0.0 {
                (*s).tangential = (*s).tangential + p_top * (f_n - f_old);
                set_point(s, i, vec4<f32>(zeta, f_n, p_top));
                return 1u;
            }
            let zs = min(z_star, z_old);
            let f_star = jager_force(p, zs);
            let slope = normalize_or_zero2(p_top + de / sol) * f;
            (*s).tangential = (*s).tangential + slope * (f_n - f_star) - p_top * (f_old - f_star);
            set_point(s, i, vec4<f32>(zs, f_star, p_top));
            set_point(s, i + 1u, vec4<f32>(zeta, f_n, slope));
            (*s).count = i + 2u;
            return 1u;
        }
        (*s).tangential = (*s).tangential - p_top * (f_old - below.y);
        d = d + p_top * (z_old - z_lo);
        z_old = below.x;
        f_old = below.y;
        (*s).count = i;
    }
    return 1u;  // not reached: the loop returns (naga wants a final return)
}

// Merges the segments ending at k − 1 and k (force-weighted slope) and drops point k − 1.
fn jager_merge(s: ptr<function, JagerState>, k: u32) {
    let before = get_point(s, k - 2u);
    let mid = get_point(s, k - 1u);
    let last = get_point(s, k);
    let w1 = mid.y - before.y;
    let w2 = last.y - mid.y;
    if w1 + w2 != 0.0 {
        set_point(s, k, vec4<f32>(last.xy, (mid.zw * w1 + last.zw * w2) / (w1 + w2)));
    }
    for (var m = k - 1u; m + 1u < (*s).count; m++) {
        set_point(s, m, get_point(s, m + 1u));
    }
    (*s).count = (*s).count - 1u;
}

fn jager_compact(s: ptr<function, JagerState>, p: JagerParams) {
    let elastic = p.friction * (1.0 - 1e-6);
    let cap = min(p.capacity, JAGER_CAP - 1u);
    // First the top points while they are elastic and close in slope, then, once one is not,
    // the closest pair of slopes while the history is longer than its capacity: one merge a
    // turn, so that the merge is compiled once.
    var elastic_phase = true;
    loop {
        let c = (*s).count;
        var k = c - 1u;
        if elastic_phase && c >= 3u {
            let a = get_point(s, c - 1u).zw;
            let b = get_point(s, c - 2u).zw;
            elastic_phase = length(a) < elastic && length(b) < elastic && length(a - b) < p.dp_max;
        } else {
            elastic_phase = false;
        }
        if !elastic_phase {
            if c <= cap {
                break;
            }
            k = 2u;
            var best_d = 1e30;
            var below = get_point(s, 1u);
            for (var m = 2u; m < c; m++) {
                let here = get_point(s, m);
                let dm = length(here.zw - below.zw);
                below = here;
                if dm < best_d {
                    best_d = dm;
                    k = m;
                }
            }
        }
        jager_merge(s, k);
    }
}

struct JagerOut {
    force: vec3<f32>,        // on B
    normal_force: f32,
    slid: u32,
}

fn jager_step(s: ptr<function, JagerState>, overlap: f32, n: vec3<f32>, movement: vec3<f32>,
              twirl: f32, p: JagerParams) -> JagerOut {
    let zeta = 0.5 * overlap;
    if zeta <= 0.0 {
        (*s).count = 0u;
        (*s).tangential = vec2<f32>(0.0);
        return JagerOut(vec3<f32>(0.0), 0.0, 0u);
    }
    if (*s).count == 0u {
        (*s).frame = q_arc(vec3<f32>(0.0, 0.0, 1.0), n);
        set_point(s, 0u, vec4<f32>(0.0));
        (*s).count = 1u;
        (*s).tangential = vec2<f32>(0.0);
    } else {
        let tilt = q_arc(normalize(q_rotate((*s).frame, vec3<f32>(0.0, 0.0, 1.0))), n);
        (*s).frame = normalize(q_mul(q_axis_angle(n, twirl), q_mul(tilt, (*s).frame)));
    }
    let dxi_g = 0.5 * (movement - n * dot(movement, n));
    let dxi = q_rotate(q_conj((*s).frame), dxi_g).xy;
    let f_n = jager_force(p, zeta);
    let slid = jager_advance(s, zeta, f_n, dxi, p);
    jager_compact(s, p);
    let ft = q_rotate((*s).frame, vec3<f32>((*s).tangential, 0.0));
    return JagerOut(n * f_n - ft, f_n, slid);
}

// ---- Rolling resistance (Ai, Chen, Rotter & Ooi 2011) ----------------------------------------
// Twin of `contact::rolling::rolling_torque`: the torque on B against the rolling of B relative
// to A (`spin` at t_n, `rotation` over the last step), type A (ROLLING_CDT) or type C
// (ROLLING_EPSD, its spring torque `spring` carried in the slot's aux words).

struct RollingOut {
    torque: vec3<f32>,   // on B
    spring: vec3<f32>,   // type C's new spring torque
}

fn rolling_torque(model: u32, mu_r: f32, k_given: f32, eta_r: f32, radius: f32, inertia: f32,
                  spring: vec3<f32>, n: vec3<f32>, spin: vec3<f32>, rotation: vec3<f32>,
                  normal_force: f32, normal_stiffness: f32) -> RollingOut {
    let omega = spin - n * dot(n, spin);
    let limit = mu_r * radius * max(normal_force, 0.0);
    if model == ROLLING_CDT {
        let len = length(omega);
        if len > 0.0 {
            return RollingOut(-omega * (limit / len), vec3<f32>(0.0));
        }
        return RollingOut(vec3<f32>(0.0), vec3<f32>(0.0));
    }
    var kr = k_given;
    if kr == 0.0 {
        kr = 2.25 * normal_stiffness * mu_r * mu_r * radius * radius;
    }
    let turn = rotation - n * dot(n, rotation);
    var m = spring - n * dot(n, spring) - turn * kr;
    let len = length(m);
    var torque = m;
    if len >= limit {
        // Full mobilisation: limited, no dashpot.
        if len > 0.0 {
            m = m * (limit / len);
        }
        torque = m;
    } else {
        let c = eta_r * 2.0 * sqrt(inertia * kr);
        torque = torque - omega * c;
    }
    return RollingOut(torque, m);
}

// `I + m R²` of a solid sphere, inverted; 0 for a wall (radius 1e30).
fn inv_rolling_inertia(r: f32, m: f32) -> f32 {
    if r >= 1e29 {
        return 0.0;
    }
    return 1.0 / (1.4 * m * r * r);
}
