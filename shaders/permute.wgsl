// permute.wgsl — reorders particle data by cell (the Morton order that `hash.order` and `radix`
// sorted the particles into), on the rebuilds that `rebuild.plan` marks for it, so that
// particles close in space sit close in memory. Every per-particle array is moved a column
// block of `PERMUTE_BLOCK` words at a time through one scratch array (`PERMUTE_BLOCK` words per particle;
// the engine binds the force and torque array, which `contact_forces` rewrites after every
// reorder): `take` gathers the block of each particle's old row into the scratch at its new
// index, `put` writes it back. Neighbour slots move with their particle (between slot chunks if
// need be) and their partner indices are remapped; stable ids travel with the particles, so
// outputs and the canonical order of each pair (which fixes the sign of its stored history)
// are unaffected.
// CPU twin: none (the CPU reference never reorders; its index is the stable id).

import package::shared::{A_SIDE, PERMUTE_BLOCK, WG};
import package::spec::{SLOT_WORDS};
import package::common::{SimParams, partner_index};

struct Permute {
    stride: u32,        // u32 words per particle of the array being moved
    block: u32,         // its first word this dispatch moves (a multiple of PERMUTE_BLOCK)
    remap: u32,         // 1: neighbour slots, whose word 3 (the partner's index) is remapped
    _p0: u32,
    first: u32,         // `data` holds particles [first, first + count) (a slot chunk, or all)
    count: u32,
    _p1: u32,
    _p2: u32,
}

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> perm_info: Permute;
@group(0) @binding(2) var<storage, read> order: array<u32>;        // new index → old index
// Old index → new index: held by the hash buckets' starts, which the build after the reorder
// writes again (the sorts' keys lie in `scratch`).
@group(0) @binding(3) var<storage, read> new_index: array<u32>;
@group(0) @binding(4) var<storage, read_write> data: array<u32>;
@group(0) @binding(5) var<storage, read_write> scratch: array<u32>;

fn block_width() -> u32 {
    return min(PERMUTE_BLOCK, perm_info.stride - perm_info.block);
}

// scratch[p] ← the block of data[order[p]], for every new index p whose old index lies in
// `data`'s range.
@compute @workgroup_size(WG)
fn take(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = gid.x;
    if p >= params.n {
        return;
    }
    let q = order[p];
    if q < perm_info.first || q >= perm_info.first + perm_info.count {
        return;
    }
    let src = (q - perm_info.first) * perm_info.stride + perm_info.block;
    for (var j = 0u; j < block_width(); j++) {
        scratch[p * PERMUTE_BLOCK + j] = data[src + j];
    }
}

// The block of data[p] ← scratch[p], for the new indices p in `data`'s range.
@compute @workgroup_size(WG)
fn put(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x >= perm_info.count {
        return;
    }
    let p = perm_info.first + gid.x;
    let dst = gid.x * perm_info.stride + perm_info.block;
    for (var j = 0u; j < block_width(); j++) {
        var word = scratch[p * PERMUTE_BLOCK + j];
        if perm_info.remap != 0u && (perm_info.block + j) % SLOT_WORDS == 3u {
            // The partner's index moves; its canonical-order bit stays (common.wgsl `A_SIDE`).
            word = new_index[partner_index(word)] | (word & A_SIDE);
        }
        data[dst + j] = word;
    }
}

// The inverse permutation: new_index[order[p]] = p (bound as `data`).
@compute @workgroup_size(WG)
fn invert(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = gid.x;
    if p >= params.n {
        return;
    }
    data[order[p]] = p;
}
