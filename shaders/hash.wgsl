// hash.wgsl — cell (packed in one word, common.wgsl `pack_cell`) and bucket of every particle,
// each bucket's particles counted for the sort by bucket (`buckets.wgsl`), after `clear` has
// zeroed the counters. Cells, keys, values and counters lie in the force–torque array, which
// nothing reads between a step's `integrate` and the next `contact_forces` (the engine's
// `BuildScratch`): each build begins from whatever the forces left there.
// `order` gives the key of a reorder instead, with the particle indices as the values to sort
// (`radix.wgsl`): the cell's place on a Morton curve, so that particles close in space end up
// close in memory (buckets are scattered on purpose, and an
// order by bucket would put neighbouring cells anywhere in the arrays).
// CPU twin: the cell/bucket closures of `broadphase::pairs_within` (`order`: none; the CPU
// reference never reorders).

import package::shared::{WG};
import package::common::{
    Cell, Position, SimParams, bucket_of, cell_bin, cell_of, from_origin, pack_cell,
};

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> pos: array<Position>;
@group(0) @binding(2) var<storage, read_write> cells: array<u32>;
@group(0) @binding(3) var<storage, read_write> keys: array<u32>;
@group(0) @binding(4) var<storage, read_write> vals: array<u32>;
@group(0) @binding(5) var<storage, read_write> bucket_count: array<atomic<u32>>;
// The periodic cell (common.wgsl `Cell`): in a periodic scene the cells are the bins of the
// cell at this build, along its edges.
@group(0) @binding(6) var<storage, read> cell: Cell;

// The hash cell of particle `i`: a cube of `cell_size` in space, or its periodic bin.
fn hash_cell(i: u32) -> vec3<i32> {
    if params.periodic != 0u {
        let s = cell.built.inv * from_origin(pos[i], cell.head, params.one);
        return cell_bin(s, cell.built.bins);
    }
    return cell_of(pos[i], params.cell_size);
}

// Zeroes bucket b's counter, one invocation per bucket (dispatched as `buckets.settle` is).
@compute @workgroup_size(WG)
fn clear(@builtin(global_invocation_id) gid: vec3<u32>) {
    let b = gid.x + gid.y * 65535u * WG;
    if b < (1u << params.table_bits) {
        atomicStore(&bucket_count[b], 0u);
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= params.n {
        return;
    }
    let c = hash_cell(i);
    cells[i] = pack_cell(c);
    let b = bucket_of(c, params.table_bits);
    keys[i] = b;
    atomicAdd(&bucket_count[b], 1u);
}

// Bit k of the low 9 bits of v moved to bit 3k.
fn spread3(v: u32) -> u32 {
    var x = v & 0x1ffu;
    x = (x | (x << 16u)) & 0x030000ffu;
    x = (x | (x << 8u)) & 0x0300f00fu;
    x = (x | (x << 4u)) & 0x030c30c3u;
    x = (x | (x << 2u)) & 0x09249249u;
    return x;
}

// The Morton code of the cell's coordinates (plus 256) modulo 512: 27 bits, which the engine
// sorts with 7 radix passes. The cells of each aligned 2^k-cube of the grid share a range
// of codes, at every k. Cells 512 apart along an axis share codes, and a scene wider than 512
// cells has a seam: both only cost locality, never correctness.
@compute @workgroup_size(WG)
fn order(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= params.n {
        return;
    }
    // Offset so that a scene around the origin (cells from −256 to 255) has no seam.
    let c = bitcast<vec3<u32>>(cell_of(pos[i], params.cell_size) + vec3<i32>(256));
    keys[i] = spread3(c.x) | (spread3(c.y) << 1u) | (spread3(c.z) << 2u);
    vals[i] = i;
}
