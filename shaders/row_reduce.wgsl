// row_reduce.wgsl — what a row of a direct shear test measures of the particles, summed on the
// device from the state after a batch's last step, so that a row reads back 48 bytes instead of
// the whole state and the host finds no contacts: the kinetic energy Σ ½ m |v|² + ½ I |ω|²,
// the highest sphere top max(z + r), the touching pairs and their Σ n ⊗ n (the fabric tensor
// times the pairs, He, Zheng & Li 2020 Eq. 32). A pair touches where its spheres overlap at the
// present positions (overlap > 0, as `analysis::touching` finds them on the host), counted once,
// on its A side (`A_SIDE`); every touching pair is listed, since no sphere has moved half the
// skin since the lists were built. Summed in a fixed order — a tree in each workgroup of WG
// particles (`partials`, dispatched per slot chunk), then one workgroup over the partials
// (`total_main`) — so a row is reproducible bit for bit; the maximum is exact in any order.
// CPU twin: `ShearRun::measure` (crates/wgdem-core/src/shear/measure.rs), from the particles.

import package::shared::{A_SIDE, WG};
import package::common::{
    Chunk, PositionWords, PredictedWords, SimParams, Vec4Words, partner_index, position_of,
    predicted_of, slot_of, sphere_gap, spin_of, vec4_of,
};
import package::slot_tables::{slots};

// Σ n ⊗ n's diagonal (xyz) and the kinetic energy (w); its xy, xz, yz (xyz) and the highest
// sphere top (w); the touching pairs (x).
struct RowSums {
    diagonal: vec4<f32>,
    off: vec4<f32>,
    pairs: vec4<u32>,
}

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> pos: array<PositionWords>;  // lo.w = mass
@group(0) @binding(2) var<storage, read> vel: array<Vec4Words>;  // w = ω_x
@group(0) @binding(3) var<storage, read> pred: array<PredictedWords>;  // v.w = ω_y, w.w = ω_z
@group(0) @binding(4) var<storage, read> fine: array<vec4<f32>>;
// w: the inverse moment of inertia (0 where the spin is fixed, which keeps ω at zero).
@group(0) @binding(5) var<storage, read> built_at: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read> count: array<u32>;
// (Binding 8, the chunk's neighbour slots, is `package::slot_tables`'s.)
@group(0) @binding(10) var<uniform> chunk: Chunk;
@group(0) @binding(11) var<storage, read_write> partial: array<RowSums>;  // per workgroup of WG
@group(0) @binding(12) var<storage, read_write> total: RowSums;

var<workgroup> diagonal_acc: array<vec4<f32>, WG>;
var<workgroup> off_acc: array<vec4<f32>, WG>;
var<workgroup> pairs_acc: array<u32, WG>;

// Halves the workgroup's sums into element 0, in the same order every time: sums, but the
// maximum for the highest top.
fn tree(li: u32) {
    workgroupBarrier();
    for (var half = WG / 2u; half > 0u; half = half / 2u) {
        if li < half {
            diagonal_acc[li] += diagonal_acc[li + half];
            let a = off_acc[li];
            let b = off_acc[li + half];
            off_acc[li] = vec4<f32>(a.xyz + b.xyz, max(a.w, b.w));
            pairs_acc[li] += pairs_acc[li + half];
        }
        workgroupBarrier();
    }
}

// The partner word of neighbour slot `k` (Jäger slots keep their struct form).
@if(!slot_jager)
fn partner_word(k: u32) -> u32 {
    return slot_of(slots[k]).partner;
}
@if(slot_jager)
fn partner_word(k: u32) -> u32 {
    return slots[k].partner;
}

// A top below any sphere's, for the invocations past the last particle.
const NO_TOP: f32 = -3.0e38;

// The row's sums of the particles of this chunk in this workgroup (chunks start at multiples of
// the workgroup size, so `chunk.first / WG + wg.x` is the global group).
@compute @workgroup_size(WG)
fn partials(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
) {
    var diagonal = vec4<f32>(0.0);
    var off = vec4<f32>(0.0, 0.0, 0.0, NO_TOP);
    var pairs = 0u;
    if gid.x < chunk.count {
        let i = chunk.first + gid.x;
        let pi = position_of(pos[i]);
        let fi = fine[i];
        let vi = vec4_of(vel[i]);
        let v = vi.xyz + fi.xyz;
        let w = spin_of(vi, predicted_of(pred[i]));
        let inv_inertia = built_at[i].w;
        var spin_energy = 0.0;
        if inv_inertia > 0.0 {
            spin_energy = 0.5 * dot(w, w) / inv_inertia;
        }
        diagonal.w = 0.5 * pi.lo.w * dot(v, v) + spin_energy;
        off.w = (pi.hi.z + pi.lo.z) + (pi.hi.w + fi.w);
        let base = gid.x * params.slots;
        let n_slots = min(count[i], params.slots);
        for (var s = 0u; s < n_slots; s++) {
            let partner = partner_word(base + s);
            if (partner & A_SIDE) == 0u {
                continue;  // counted on the pair's A side
            }
            let j = partner_index(partner);
            let pj = position_of(pos[j]);
            let gap = sphere_gap(pi, pj, pi.hi.w, pj.hi.w, fi.w + fine[j].w, params.one);
            if gap.overlap > 0.0 && gap.dist > 0.0 {
                let n = gap.d / gap.dist;
                diagonal += vec4<f32>(n * n, 0.0);
                off += vec4<f32>(n.x * n.y, n.x * n.z, n.y * n.z, 0.0);
                pairs += 1u;
            }
        }
    }
    diagonal_acc[li] = diagonal;
    off_acc[li] = off;
    pairs_acc[li] = pairs;
    tree(li);
    if li == 0u {
        partial[chunk.first / WG + wg.x] = RowSums(diagonal_acc[0], off_acc[0],
            vec4<u32>(pairs_acc[0], 0u, 0u, 0u));
    }
}

// The partials of every workgroup into `total`: each invocation a strided sequence, then the
// tree.
@compute @workgroup_size(WG)
fn total_main(@builtin(local_invocation_index) li: u32) {
    var diagonal = vec4<f32>(0.0);
    var off = vec4<f32>(0.0, 0.0, 0.0, NO_TOP);
    var pairs = 0u;
    let groups = (params.n + WG - 1u) / WG;
    for (var g = li; g < groups; g += WG) {
        let p = partial[g];
        diagonal += p.diagonal;
        off = vec4<f32>(off.xyz + p.off.xyz, max(off.w, p.off.w));
        pairs += p.pairs.x;
    }
    diagonal_acc[li] = diagonal;
    off_acc[li] = off;
    pairs_acc[li] = pairs;
    tree(li);
    if li == 0u {
        total = RowSums(diagonal_acc[0], off_acc[0], vec4<u32>(pairs_acc[0], 0u, 0u, 0u));
    }
}
