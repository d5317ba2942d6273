// cell_reduce.wgsl — the periodic cell's stress sums for the host's servo, from the last step a
// batch took (steps past a batch's end do nothing, so the buffers hold that step): Σ f ⊗ d over
// the pairs and wall contacts (`contact_forces` leaves each particle's in `cell_stress`) and
// Σ m v ⊗ v over the particles (v the fluctuation about the affine field, both parts of the
// double-single velocity). Each is summed in f32 in a fixed order — a tree in each workgroup
// of WG particles (`partials`), then one workgroup over those partials, strided then a tree
// (`total`) — so the result is reproducible bit for bit, as `wall_reduce`'s wall forces are.
// 96 bytes come back with each batch's readout instead of the particles' state.
// CPU twin: `Simulation::stress` (the contact part summed in `compute_forces`); the host divides
// by the cell's volumes.

import package::shared::{WG};
import package::common::{PositionWords, SimParams, Vec4Words, position_of, vec4_of};

// Σ f ⊗ d (column j is Σ f d_j) and Σ m v ⊗ v.
struct Sums {
    contact: mat3x3<f32>,
    kinetic: mat3x3<f32>,
}

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> pos: array<PositionWords>;
@group(0) @binding(2) var<storage, read> vel: array<Vec4Words>;
@group(0) @binding(3) var<storage, read> fine: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> cell_stress: array<mat3x3<f32>>;
@group(0) @binding(5) var<storage, read_write> partial: array<Sums>;  // per workgroup of WG
@group(0) @binding(6) var<storage, read_write> total: Sums;

var<workgroup> contact_acc: array<mat3x3<f32>, WG>;
var<workgroup> kinetic_acc: array<mat3x3<f32>, WG>;

// Halves the workgroup's sums into element 0, in the same order every time.
fn tree(li: u32) {
    workgroupBarrier();
    for (var half = WG / 2u; half > 0u; half = half / 2u) {
        if li < half {
            contact_acc[li] = contact_acc[li] + contact_acc[li + half];
            kinetic_acc[li] = kinetic_acc[li] + kinetic_acc[li + half];
        }
        workgroupBarrier();
    }
}

@compute @workgroup_size(WG)
fn partials(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = wg.x * WG + li;
    var contact = mat3x3<f32>();
    var kinetic = mat3x3<f32>();
    if i < params.n {
        contact = cell_stress[i];
        let m = position_of(pos[i]).lo.w;
        let v = vec4_of(vel[i]).xyz + fine[i].xyz;
        let mv = m * v;
        kinetic = mat3x3<f32>(mv * v.x, mv * v.y, mv * v.z);
    }
    contact_acc[li] = contact;
    kinetic_acc[li] = kinetic;
    tree(li);
    if li == 0u {
        partial[wg.x] = Sums(contact_acc[0], kinetic_acc[0]);
    }
}

@compute @workgroup_size(WG)
fn total_main(@builtin(local_invocation_index) li: u32) {
    var contact = mat3x3<f32>();
    var kinetic = mat3x3<f32>();
    let groups = (params.n + WG - 1u) / WG;
    for (var g = li; g < groups; g += WG) {
        contact = contact + partial[g].contact;
        kinetic = kinetic + partial[g].kinetic;
    }
    contact_acc[li] = contact;
    kinetic_acc[li] = kinetic;
    tree(li);
    if li == 0u {
        total = Sums(contact_acc[0], kinetic_acc[0]);
    }
}
