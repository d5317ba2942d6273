// buckets.wgsl — the particles sorted by hash bucket, and each bucket's range, by counting:
// `hash` has counted each bucket's particles (integer atomics, exact in any order); `scan` turns
// the counts into each bucket's first place (an exclusive prefix sum) and clears them;
// `scatter` puts each particle into its bucket's range, at a place drawn from the bucket's
// counter (in no fixed order); `settle` sorts each bucket's range by particle index. The result
// is the stable sort by (bucket, index), the same every time, in five dispatches with
// `hash.clear` and `hash` whatever the table's size (the LSD radix sort
// that `radix.wgsl` still gives the reorder took three per 4 bits of bucket: 12–15 at 10⁴ to
// 10⁶ particles, each a dispatch even in a step that does not rebuild).
// CPU twin: the counting sort in `broadphase::pairs_within`.

import package::shared::{WG};
import package::common::{SimParams, chunks_before, scan_chunk};

@group(0) @binding(0) var<uniform> params: SimParams;
// Each particle's bucket (`hash`). Read only, but bound read_write: it lies in the same buffer
// as `bucket_count` (the force–torque array), and a buffer bound writable in a dispatch may not
// also be bound read-only there.
@group(0) @binding(1) var<storage, read_write> keys: array<u32>;
// Particles per bucket (`hash`), then the places taken (`scatter`).
@group(0) @binding(2) var<storage, read_write> bucket_count: array<atomic<u32>>;
// Bucket b's particles are sorted_vals[bucket_start[b] .. bucket_start[b + 1]] (2^bits + 1).
@group(0) @binding(3) var<storage, read_write> bucket_start: array<u32>;
@group(0) @binding(4) var<storage, read_write> sorted_vals: array<u32>;

// One workgroup: each thread sums a contiguous chunk of buckets, the 256 chunk sums are
// scanned, then each chunk's starts are written.
@compute @workgroup_size(256)
fn scan(@builtin(local_invocation_index) li: u32) {
    let m = 1u << params.table_bits;
    let chunk = scan_chunk(li, m);
    var s = 0u;
    for (var b = chunk.x; b < chunk.y; b++) {
        s += atomicLoad(&bucket_count[b]);
    }
    var acc = chunks_before(li, s);
    for (var b = chunk.x; b < chunk.y; b++) {
        let c = atomicLoad(&bucket_count[b]);
        atomicStore(&bucket_count[b], 0u);
        bucket_start[b] = acc;
        acc += c;
    }
    // The last chunk ends at m (its begin may be m too): acc is every particle.
    if li == 255u {
        bucket_start[m] = acc;
    }
}

@compute @workgroup_size(WG)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= params.n {
        return;
    }
    let b = keys[i];
    sorted_vals[bucket_start[b] + atomicAdd(&bucket_count[b], 1u)] = i;
}

// Insertion sort of one bucket's range: a bucket holds about two particles (2^bits ≥ n
// buckets, a dense packing has about one per cell and a bucket about two cells' worth).
@compute @workgroup_size(WG)
fn settle(@builtin(global_invocation_id) gid: vec3<u32>) {
    let b = gid.x + gid.y * 65535u * WG;
    if b >= (1u << params.table_bits) {
        return;
    }
    let first = bucket_start[b];
    let end = bucket_start[b + 1u];
    for (var s = first + 1u; s < end; s++) {
        let v = sorted_vals[s];
        var t = s;
        while t > first && sorted_vals[t - 1u] > v {
            sorted_vals[t] = sorted_vals[t - 1u];
            t -= 1u;
        }
        sorted_vals[t] = v;
    }
}
