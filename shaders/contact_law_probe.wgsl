// contact_law_probe.wgsl — test entry point: evaluates `contact_force` on many contact states so
// that the WGSL law can be compared with the CPU law (tests/gpu_contact_law.rs).

import package::shared::{WG};
import package::common::{PairRecord, contact_force, contact_params};

struct ProbeIn {
    normal_overlap: vec4<f32>,   // xyz normal, w overlap
    velocity: vec4<f32>,         // xyz relative velocity, w eff_mass
    displacement: vec4<f32>,     // xyz relative displacement, w eff_radius
    u_prev: vec4<f32>,           // xyz previous u_t
    mode: vec4<u32>,             // x material pair index, y law, z history
}

struct ProbeOut {
    force: vec4<f32>,            // xyz force, w normal force
    tangential: vec4<f32>,       // xyz u_t, w sliding
}

@group(0) @binding(0) var<storage, read> pair_table: array<PairRecord>;
@group(0) @binding(1) var<storage, read> inputs: array<ProbeIn>;
@group(0) @binding(2) var<storage, read_write> outputs: array<ProbeOut>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= arrayLength(&inputs) {
        return;
    }
    let s = inputs[i];
    let law = s.mode.y;
    let history = s.mode.z;
    let p = contact_params(pair_table[s.mode.x], law, s.velocity.w, s.displacement.w);
    let out = contact_force(law, history, s.normal_overlap.w, s.normal_overlap.xyz, s.velocity.xyz,
        s.displacement.xyz, s.u_prev.xyz, vec3<f32>(0.0), 1.0, p);  // single-f32 history
    outputs[i] = ProbeOut(vec4<f32>(out.force, out.normal_force), vec4<f32>(out.tangential, f32(out.sliding)));
}
