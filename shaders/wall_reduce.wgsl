// wall_reduce.wgsl — per-wall force and torque (from the per-workgroup partials of
// `contact_forces`), and contact counts, summed in a fixed order (each thread a strided
// sequence, then a fixed tree), so the result is reproducible bit for bit. One workgroup per
// wall; `stats` runs as one more workgroup.
// CPU twin: the wall.force / wall.torque sums of `Simulation::compute_forces`.

import package::shared::{WG};
import package::common::{ForceTorque, SimParams};

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> wall_partial: array<ForceTorque>;
@group(0) @binding(2) var<storage, read> stats: array<vec4<u32>>;  // per workgroup of `contact_forces`
@group(0) @binding(3) var<storage, read_write> wall_out: array<ForceTorque>;
@group(0) @binding(4) var<storage, read_write> stats_out: array<vec4<u32>>;

const RW: u32 = 256u;
var<workgroup> f_acc: array<vec4<f32>, 256>;
var<workgroup> t_acc: array<vec4<f32>, 256>;
var<workgroup> s_acc: array<vec4<u32>, 256>;

@compute @workgroup_size(256)
fn walls_main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let w = wg.x;
    var f = vec4<f32>(0.0);
    var t = vec4<f32>(0.0);
    let groups = (params.n + WG - 1u) / WG;
    for (var g = li; g < groups; g += RW) {
        let p = wall_partial[g * params.n_walls + w];
        f += p.force;
        t += p.torque;
    }
    f_acc[li] = f;
    t_acc[li] = t;
    workgroupBarrier();
    for (var half = RW / 2u; half > 0u; half = half / 2u) {
        if li < half {
            f_acc[li] += f_acc[li + half];
            t_acc[li] += t_acc[li + half];
        }
        workgroupBarrier();
    }
    if li == 0u {
        wall_out[w] = ForceTorque(f_acc[0], t_acc[0]);
    }
}

@compute @workgroup_size(256)
fn stats_main(@builtin(local_invocation_index) li: u32) {
    var s = vec4<u32>(0u);
    let groups = (params.n + WG - 1u) / WG;
    for (var g = li; g < groups; g += RW) {
        s += stats[g];
    }
    s_acc[li] = s;
    workgroupBarrier();
    for (var half = RW / 2u; half > 0u; half = half / 2u) {
        if li < half {
            s_acc[li] += s_acc[li + half];
        }
        workgroupBarrier();
    }
    if li == 0u {
        stats_out[0] = s_acc[0];
    }
}
