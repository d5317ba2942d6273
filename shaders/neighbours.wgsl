// neighbours.wgsl — each particle's list of partners closer than the skin, in a fixed order
// (neighbour cells dx, dy, dz from −1 to 1, then ascending particle index inside a bucket), with
// this side's copy of each pair's tangential history carried over from the previous list by
// partner id. A new contact starts from zero; a pair no longer listed is dropped. A list that
// needs more than `slots` entries sets bit 0 of `counters.failed` and records the count it
// needed; `rebuild.halt` then stops the batch before the lists are committed, so the host can
// regrow the table and continue from that step: nothing is dropped silently.
// Dispatched once per chunk of particles (slot tables are split to fit binding limits).
// CPU twin: `Simulation::update_neighbours` with `broadphase::pairs_within`.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> pos: array<Position>;
@group(0) @binding(2) var<storage, read> cells: array<vec4<i32>>;
@group(0) @binding(3) var<storage, read> sorted_vals: array<u32>;
@group(0) @binding(4) var<storage, read> ranges: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read> old_count: array<u32>;
@group(0) @binding(6) var<storage, read> old_slots: array<Slot>;
@group(0) @binding(7) var<storage, read_write> new_count: array<u32>;
@group(0) @binding(8) var<storage, read_write> new_slots: array<Slot>;
@group(0) @binding(9) var<storage, read_write> counters: Counters;
@group(0) @binding(10) var<uniform> chunk: Chunk;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x >= chunk.count {
        return;
    }
    let i = chunk.first + gid.x;
    let k = params.slots;
    let base = gid.x * k;
    let pi = pos[i];
    let c = cells[i].xyz;
    let n_old = min(old_count[i], k);
    var count = 0u;
    for (var dx = -1; dx <= 1; dx++) {
        for (var dy = -1; dy <= 1; dy++) {
            for (var dz = -1; dz <= 1; dz++) {
                let nc = c + vec3<i32>(dx, dy, dz);
                let r = ranges[bucket_of(nc, params.table_bits)];
                for (var s = r.x; s < r.y; s++) {
                    let j = sorted_vals[s];
                    if j == i || any(cells[j].xyz != nc) {
                        continue;
                    }
                    let pj = pos[j];
                    let reach = pi.hi.w + pj.hi.w + params.skin + params.extra.y;
                    let d = ds_diff(pi, pj, params.one);
                    if dot(d, d) >= reach * reach {
                        continue;
                    }
                    if count < k {
                        var slot = make_slot(vec3<f32>(0.0), j);
                        for (var o = 0u; o < n_old; o++) {
                            let old = old_slots[base + o];
                            if old.partner == j {
                                slot = old;
                                break;
                            }
                        }
                        new_slots[base + count] = slot;
                    }
                    count += 1u;
                }
            }
        }
    }
    new_count[i] = count;
    // Only an overflowing list reports: atomics on one address serialise.
    if count > k {
        atomicOr(&counters.failed, 1u);
        atomicMax(&counters.max_neighbours, count);
    }
}
