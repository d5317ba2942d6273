// radix.wgsl — stable LSD radix sort of (key, value) pairs, 4 bits per pass, three kernels per
// pass: `count` (digit histogram of each tile of RADIX_TILE keys), `scan` (exclusive prefix sum
// over the histograms, digit-major then tile order) and `scatter` (each key to its digit's
// offset plus its rank among the tile's keys of that digit, found with a workgroup scan of
// packed 8-bit digit counters). Ranks follow input order, so the sort is stable; with values
// 0..n in order, equal keys end up by ascending particle index, every time.
// CPU twin: the counting sort in `broadphase::pairs_within`.

import package::shared::{RADIX_TILE};
import package::common::{SimParams, chunks_before, scan_chunk};

struct RadixPass {
    shift: u32,
    _p0: u32,
    _p1: u32,
    _p2: u32,
}

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> pass_info: RadixPass;
// The inputs are only read, but bound read_write: keys and first values lie in the same buffer
// as the outputs (the force–torque array), and a buffer bound writable in a dispatch may not
// also be bound read-only there.
@group(0) @binding(2) var<storage, read_write> keys_in: array<u32>;
@group(0) @binding(3) var<storage, read_write> vals_in: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> vals_out: array<u32>;
@group(0) @binding(6) var<storage, read_write> tile_hist: array<u32>;

var<workgroup> digit_count: array<atomic<u32>, 16>;

fn digit_of(key: u32) -> u32 {
    return (key >> pass_info.shift) & 15u;
}

@compute @workgroup_size(128)
fn count(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if li < 16u {
        atomicStore(&digit_count[li], 0u);
    }
    workgroupBarrier();
    let i = wg.x * RADIX_TILE + li;
    if i < params.n {
        atomicAdd(&digit_count[digit_of(keys_in[i])], 1u);
    }
    workgroupBarrier();
    if li < 16u {
        tile_hist[li * params.n_tiles + wg.x] = atomicLoad(&digit_count[li]);
    }
}

// One workgroup: each thread sums a contiguous chunk, the 256 chunk sums are scanned, then
// each chunk is rewritten as an exclusive prefix sum.
@compute @workgroup_size(256)
fn scan(@builtin(local_invocation_index) li: u32) {
    let chunk = scan_chunk(li, 16u * params.n_tiles);
    var s = 0u;
    for (var k = chunk.x; k < chunk.y; k++) {
        s += tile_hist[k];
    }
    var acc = chunks_before(li, s);
    for (var k = chunk.x; k < chunk.y; k++) {
        let v = tile_hist[k];
        tile_hist[k] = acc;
        acc += v;
    }
}

var<workgroup> ranks: array<vec4<u32>, 128>;

@compute @workgroup_size(128)
fn scatter(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = wg.x * RADIX_TILE + li;
    let valid = i < params.n;
    var key = 0u;
    var d = 0u;
    var one = vec4<u32>(0u);
    if valid {
        key = keys_in[i];
        d = digit_of(key);
        one[d / 4u] = 1u << ((d % 4u) * 8u);
    }
    // Inclusive Hillis–Steele scan of 16 packed 8-bit counters (a tile holds ≤ 128 keys, so
    // no counter overflows).
    ranks[li] = one;
    workgroupBarrier();
    for (var off = 1u; off < RADIX_TILE; off = off * 2u) {
        var add = vec4<u32>(0u);
        if li >= off {
            add = ranks[li - off];
        }
        workgroupBarrier();
        ranks[li] = ranks[li] + add;
        workgroupBarrier();
    }
    if valid {
        let below = ranks[li] - one;
        let rank = (below[d / 4u] >> ((d % 4u) * 8u)) & 255u;
        let dst = tile_hist[d * params.n_tiles + wg.x] + rank;
        keys_out[dst] = key;
        vals_out[dst] = vals_in[i];
    }
}
