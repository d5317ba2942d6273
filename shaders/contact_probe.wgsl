// contact_probe.wgsl — drives contacts through given per-step kinematics with the models of
// models.wgsl, one invocation per contact looping over its steps, the state kept in a storage
// buffer between dispatches. Used by `wgdem contact --backend gpu` and the GPU model tests.
// CPU twin: `contact_case::CpuEvaluator` (the same model functions in f64).

import package::shared::{
    DAMPING_VISCOELASTIC, LAW_HERTZ, LAW_HISTORY_SHIFT, MODEL_HILL, MODEL_LINEAR, MODEL_SPRING,
    MOISTURE_DRY, MOISTURE_WET, WG,
};
import package::common::{ContactParams, contact_force, law_factor};
import package::models::{
    HillParams, HillState, JagerParams, JagerState, KuhnParams, KuhnState, hill_step, jager_step,
    kuhn_step,
};
import package::spec::{JAGER_CAP};
import package::slot_tables::{work_points};

// Fleischmann et al.'s spring–dashpot (Eq. 1–6): `ContactParams` and the mode.
struct SpringProbe {
    kn: f32,
    kt: f32,
    gamma_n: f32,
    gamma_t: f32,
    friction: f32,
    eff_mass: f32,
    eff_radius: f32,
    law_history: u32,    // law + 256 × history mode
}

struct ProbeSetup {
    model: u32,          // 0 spring–dashpot, 1 linear (Kuhn), 2 hill, 3 Jäger
    action: u32,         // before the first step: 0 none, 1 make_wet, 2 make_dry (hill)
    steps: u32,          // steps per contact in this dispatch
    contacts: u32,
    moisture_gap: f32,   // g_m of make_wet (m)
    gap_now: f32,        // the contact's gap when the action applies (m)
    _p1: u32,
    _p2: u32,
    kuhn: KuhnParams,
    hill: HillParams,
    jager: JagerParams,
    spring: SpringProbe,
}

struct ProbeStep {
    normal_overlap: vec4<f32>,   // unit normal A→B, overlap at the end of the step (m)
    movement_twirl: vec4<f32>,   // movement of B's contact point relative to A's (m), twirl (rad)
    velocity: vec4<f32>,         // relative velocity of the contact points (m/s)
}

struct ProbeOut {
    force: vec4<f32>,            // force on B (N), normal force (N)
    energy: vec4<f32>,           // elastic energy (J), dissipated work so far (J), surface and moisture force (N)
    extra: vec4<u32>,            // history points (Jäger), slid, active
}

struct ProbeState {
    spring: vec4<f32>,   // u_t of the spring–dashpot
    kuhn: KuhnState,
    hill: HillState,
    jager_points: array<vec4<f32>, JAGER_CAP - 1u>,  // the history but its spare point
    jager: JagerState,
    dissipated: f32,
}

@group(0) @binding(0) var<storage, read> setup: ProbeSetup;
@group(0) @binding(1) var<storage, read> steps: array<ProbeStep>;
@group(0) @binding(2) var<storage, read_write> states: array<ProbeState>;
@group(0) @binding(3) var<storage, read_write> outputs: array<ProbeOut>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = gid.x;
    if c >= setup.contacts {
        return;
    }
    var st = states[c];
    var kst = st.kuhn;
    var hst = st.hill;
    var jst = st.jager;
    work_points = st.jager_points;
    var u_t = st.spring.xyz;
    if setup.action == 1u && setup.gap_now <= setup.moisture_gap {
        hst.moisture = MOISTURE_WET;
    } else if setup.action == 2u {
        hst.moisture = MOISTURE_DRY;
    }
    for (var s = 0u; s < setup.steps; s++) {
        let k = steps[c * setup.steps + s];
        let n = k.normal_overlap.xyz;
        let overlap = k.normal_overlap.w;
        var out = ProbeOut(vec4<f32>(0.0), vec4<f32>(0.0), vec4<u32>(0u));
        if setup.model == MODEL_SPRING {
            // CPU twin: `contact_case::evaluator::spring_dashpot_step`.
            let sp = setup.spring;
            let law = sp.law_history & ((1u << LAW_HISTORY_SHIFT) - 1u);
            if overlap <= 0.0 {
                u_t = vec3<f32>(0.0);
            } else {
                let p = ContactParams(sp.kn, sp.kt, sp.gamma_n, sp.gamma_t, sp.friction,
                    sp.eff_mass, sp.eff_radius, DAMPING_VISCOELASTIC);
                let o = contact_force(law, sp.law_history >> LAW_HISTORY_SHIFT, overlap, n, k.velocity.xyz,
                    k.movement_twirl.xyz, u_t, vec3<f32>(0.0), 1.0, p);
                u_t = o.tangential;
                let f = law_factor(law, sp.eff_radius, overlap);
                var normal_energy = 0.5 * sp.kn * overlap * overlap;
                if law == LAW_HERTZ {
                    normal_energy = 0.4 * sp.kn * sqrt(sp.eff_radius) * overlap * overlap
                        * sqrt(overlap);
                }
                let elastic = normal_energy + 0.5 * sp.kt * f * dot(u_t, u_t);
                out.force = vec4<f32>(o.force, o.normal_force);
                out.energy = vec4<f32>(elastic, 0.0, o.normal_force, 0.0);
                out.extra = vec4<u32>(0u, o.sliding, 1u, 0u);
            }
        } else if setup.model == MODEL_LINEAR {
            // A single-f32 history, as the engine's neighbour slots keep.
            var lo = vec3<f32>(0.0);
            let o = kuhn_step(&kst, &lo, overlap, n, k.movement_twirl.xyz, k.movement_twirl.w,
                setup.kuhn, 1.0);
            st.dissipated = st.dissipated + o.dissipated;
            out.force = vec4<f32>(o.force, o.normal_force);
            out.energy = vec4<f32>(o.elastic, st.dissipated, o.normal_force, 0.0);
            out.extra = vec4<u32>(0u, o.slid, 1u, 0u);
        } else if setup.model == MODEL_HILL {
            let o = hill_step(&hst, -overlap, n, k.velocity.xyz, k.movement_twirl.xyz,
                k.movement_twirl.w, setup.hill);
            st.dissipated = st.dissipated + o.dissipated;
            out.force = vec4<f32>(o.force, dot(o.force, n));
            out.energy = vec4<f32>(o.elastic, st.dissipated, o.surface, o.moisture_force);
            out.extra = vec4<u32>(0u, o.slid, o.is_active, 0u);
        } else {
            let o = jager_step(&jst, overlap, n, k.movement_twirl.xyz, k.movement_twirl.w, setup.jager);
            let zeta = 0.5 * max(overlap, 0.0);
            let elastic = 0.8 * setup.jager.e_bar * sqrt(setup.jager.radius) * zeta * zeta * sqrt(zeta);
            out.force = vec4<f32>(o.force, o.normal_force);
            out.energy = vec4<f32>(elastic, 0.0, o.normal_force, 0.0);
            out.extra = vec4<u32>(jst.count, o.slid, 1u, 0u);
        }
        outputs[c * setup.steps + s] = out;
    }
    st.spring = vec4<f32>(u_t, 0.0);
    st.kuhn = kst;
    st.hill = hst;
    st.jager = jst;
    st.jager_points = work_points;
    states[c] = st;
}
