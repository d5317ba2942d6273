// neighbours.wgsl — each particle's list of partners closer than the skin, in a fixed order
// (the partners of which it is the A side, the smaller stable id, first, then the others; each
// part by neighbour cells dx, dy, dz from −1 to 1, then ascending particle index inside a
// bucket: `contact_forces` evaluates a pair on its A side and stops at the first B slot), with
// this side's copy of each pair's tangential history carried over from the previous list by
// partner (index and canonical-order bit, `A_SIDE`). A new contact starts from zero; a pair no
// longer listed is dropped.
//
// The list is rebuilt in place: each invocation reads and rewrites only its own particle's
// row, so no second table is needed. The new list is first enumerated without writing (partner
// ids and where each one sat in the old row, in private arrays of `NEIGHBOUR_SLOTS`, the
// engine's slots per particle, set where the kernel is compiled); only a list that fits is then
// written, its slots moved within the row along the chains and cycles of that old → new map
// (one slot of private scratch for a cycle). A list that needs more than `slots` entries
// leaves its row and count untouched, sets bit 0 of `counters.failed` and records the count
// it needed; `rebuild.halt` then stops the batch. Every row is then either its old list or a
// new one carrying the same histories, so the host can regrow the table and repeat the step:
// nothing is dropped silently, and the repeated build gives the lists and histories a large
// enough table would have given.
// Dispatched once per chunk of particles (slot tables are split to fit binding limits).
// CPU twin: `Simulation::update_neighbours` (crates/wgdem-core/src/cpu/neighbours.rs) with
// `broadphase::pairs_within`.

import package::shared::{A_SIDE, FAILED_NEIGHBOURS, WG};
import package::spec::{JAGER_POINTS, NEIGHBOUR_SLOTS};
import package::common::{
    Cell, Chunk, Counters, Position, SimParams, Slot, StoredSlot, bin_repeats, bucket_of, cell_bin, cell_of,
    ds_diff, from_origin, make_slot, pack_cell, partner_index, unpack_cell_near,
};

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> pos: array<Position>;
@group(0) @binding(2) var<storage, read> cells: array<u32>;    // `hash`'s packed cells
@group(0) @binding(3) var<storage, read> sorted_vals: array<u32>;
@group(0) @binding(4) var<storage, read> bucket_start: array<u32>;  // `buckets.scan`
@group(0) @binding(5) var<storage, read_write> count: array<u32>;
@group(0) @binding(6) var<storage, read_write> slots: array<StoredSlot>;
@group(0) @binding(7) var<storage, read_write> counters: Counters;
@group(0) @binding(8) var<uniform> chunk: Chunk;
@group(0) @binding(9) var<storage, read> ids: array<u32>;  // stable id of each particle
// For each slot of a pair's A side, the index of B's slot of the pair (one chunk only).
@group(0) @binding(10) var<storage, read_write> link: array<u32>;
// The periodic cell (common.wgsl `Cell`): its bins wrap around, and a pair is within the skin
// through its nearest image (CPU twin: `broadphase::periodic_pairs_within`).
@group(0) @binding(11) var<storage, read> cell: Cell;

// After the lists are built, where the slots are one chunk (the host dispatches it only
// then): each A-side slot of each particle finds its pair's slot in the partner's row, where
// `contact_forces` hands B its share of the pair (lists are symmetric: a pair is within the
// skin from both sides or from neither, the distance test being exact under negation).
@compute @workgroup_size(WG)
fn link_pairs(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x >= chunk.count {
        return;
    }
    let i = chunk.first + gid.x;
    let base = gid.x * params.slots;
    let n = min(count[i], params.slots);
    for (var s = 0u; s < n; s++) {
        let w = slots[base + s].partner;
        if (w & A_SIDE) == 0u {
            continue;
        }
        let j = partner_index(w);
        let jb = (j - chunk.first) * params.slots;
        let m = min(count[j], params.slots);
        for (var t = 0u; t < m; t++) {
            if partner_index(slots[jb + t].partner) == i {
                link[base + s] = jb + t;
                break;
            }
        }
    }
}

const NONE: u32 = 0xffffffffu;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x >= chunk.count {
        return;
    }
    let i = chunk.first + gid.x;
    let k = min(params.slots, NEIGHBOUR_SLOTS);
    let base = gid.x * params.slots;
    let pi = pos[i];
    let id_i = ids[i];
    // This particle's cell as `hash` found it: recomputed, then corrected to the stored word,
    // so that a division rounded differently in this kernel cannot move the search window.
    let periodic = params.periodic != 0u;
    let bins = vec3<i32>(cell.built.bins.xyz);
    var near = cell_of(pi, params.cell_size);
    if periodic {
        near = cell_bin(cell.built.inv * from_origin(pi, cell.head, params.one), cell.built.bins);
    }
    let c = unpack_cell_near(cells[i], near);
    let n_old = min(count[i], k);
    var old_ids: array<u32, NEIGHBOUR_SLOTS>;
    for (var o = 0u; o < n_old; o++) {
        old_ids[o] = slots[base + o].partner;
    }
    // new_ids[t]: partner of new slot t; src[t]: its old slot, or NONE for a new contact;
    // needed[o]: old slot o is carried into the new list.
    var new_ids: array<u32, NEIGHBOUR_SLOTS>;
    var src: array<u32, NEIGHBOUR_SLOTS>;
    var needed: array<bool, NEIGHBOUR_SLOTS>;
    var n = 0u;
    var n_a = 0u;  // A sides listed so far
    for (var dx = -1; dx <= 1; dx++) {
        for (var dy = -1; dy <= 1; dy++) {
            for (var dz = -1; dz <= 1; dz++) {
                var nc = c + vec3<i32>(dx, dy, dz);
                if periodic {
                    // The distinct bins around, wrapped across the cell's faces.
                    if bin_repeats(vec3<i32>(dx, dy, dz), bins) {
                        continue;
                    }
                    nc = ((nc % bins) + bins) % bins;
                }
                let packed = pack_cell(nc);
                let b = bucket_of(nc, params.table_bits);
                let end = bucket_start[b + 1u];
                for (var s = bucket_start[b]; s < end; s++) {
                    let j = sorted_vals[s];
                    // A particle of another cell in the same bucket is skipped, so each
                    // partner is listed once. (One whose cell only packs like `nc` lies 1024
                    // cells or more away and fails the distance test below.)
                    if j == i || cells[j] != packed {
                        continue;
                    }
                    let pj = pos[j];
                    let reach = pi.hi.w + pj.hi.w + params.skin + params.bridge_reach;
                    var d = ds_diff(pi, pj, params.one);
                    if periodic {
                        // The nearest image (exact under negation, as the test below).
                        d -= cell.built.h_hi * round(cell.built.inv * d);
                    }
                    if dot(d, d) >= reach * reach {
                        continue;
                    }
                    if n < k {
                        // The partner word (common.wgsl `A_SIDE`): the same for the same
                        // partner, so an old slot is found by comparing whole words.
                        let word = j | select(0u, A_SIDE, id_i < ids[j]);
                        // An A side goes after those listed so far, the B sides found so far
                        // moving up one place.
                        var t = n;
                        if (word & A_SIDE) != 0u {
                            t = n_a;
                            for (var u = n; u > n_a; u--) {
                                new_ids[u] = new_ids[u - 1u];
                                src[u] = src[u - 1u];
                            }
                            n_a += 1u;
                        }
                        new_ids[t] = word;
                        src[t] = NONE;
                        for (var o = 0u; o < n_old; o++) {
                            if old_ids[o] == word {
                                src[t] = o;
                                needed[o] = true;
                                break;
                            }
                        }
                    }
                    n += 1u;
                }
            }
        }
    }
    if n > k {
        // Only an overflowing list reports: atomics on one address serialise.
        atomicOr(&counters.failed, FAILED_NEIGHBOURS);
        atomicMax(&counters.max_neighbours, n);
        return;
    }
    // Move the carried slots to their new places. In the map t ← src[t] every old slot feeds
    // at most one new one, so its pieces are chains and cycles. A chain starts at a new slot
    // whose old content nobody needs; filling it frees its source, which is filled next, and so
    // on until a new contact (zeroed) or a source beyond the new list ends it. What is left are
    // cycles, each turned once with its first slot saved aside.
    var done: array<bool, NEIGHBOUR_SLOTS>;
    for (var t = 0u; t < n; t++) {
        if done[t] || (t < n_old && needed[t]) {
            continue;
        }
        var p = t;
        loop {
            done[p] = true;
            let q = src[p];
            if q == NONE {
                put_head(base + p, make_slot(vec3<f32>(0.0), new_ids[p]));
                break;
            }
            move_slot(base + p, base + q);
            if q >= n {
                break;
            }
            p = q;
        }
    }
    for (var t = 0u; t < n; t++) {
        if done[t] {
            continue;
        }
        done[t] = true;
        if src[t] == t {
            continue;
        }
        let first = head(base + t);
        var p = t;
        loop {
            let q = src[p];
            if q == t {
                put_head(base + p, first);
                break;
            }
            put_head(base + p, head(base + q));
            p = q;
            done[p] = true;
        }
        turn_points(base, t, src);
    }
    count[i] = n;
}

// Slot k's head, and writing one: whole slots, or a Jäger slot's fields but its points (a new
// contact's count is 0, and points past the count are not read). Moving slot q to slot p (a
// chain's step) moves its head and then a Jäger slot's points it holds (its count in
// `tangential.z`'s bits; a spring contact's displacement there reads as many, and at most all
// are moved); turning a cycle turns the heads, then a Jäger slot's points one index at a time
// (`turn_points`). Moved whole, a Jäger slot is half a kilobyte, which lavapipe compiled into
// a very long kernel at every copy.
@if(!slot_jager)
fn head(k: u32) -> Slot {
    return slots[k];
}
@if(!slot_jager)
fn put_head(k: u32, s: Slot) {
    slots[k] = s;
}
@if(!slot_jager)
fn move_slot(p: u32, q: u32) {
    slots[p] = slots[q];
}
@if(!slot_jager)
fn turn_points(base: u32, t: u32, src: array<u32, NEIGHBOUR_SLOTS>) {
}
@if(slot_jager)
fn head(k: u32) -> Slot {
    let w = &slots[k];
    return Slot((*w).tangential, (*w).partner, (*w).aux, (*w).frame);
}
@if(slot_jager)
fn put_head(k: u32, s: Slot) {
    let w = &slots[k];
    (*w).tangential = s.tangential;
    (*w).partner = s.partner;
    (*w).aux = s.aux;
    (*w).frame = s.frame;
}
@if(slot_jager)
fn move_slot(p: u32, q: u32) {
    put_head(p, head(q));
    let n = min(bitcast<u32>(slots[q].tangential.z), JAGER_POINTS);
    for (var m = 0u; m < n; m++) {
        slots[p].points[m] = slots[q].points[m];
    }
}
// The cycle through slot t of the map p ← src[p], turned once for each point index.
@if(slot_jager)
fn turn_points(base: u32, t: u32, src: array<u32, NEIGHBOUR_SLOTS>) {
    for (var m = 0u; m < JAGER_POINTS; m++) {
        let first = slots[base + t].points[m];
        var p = t;
        loop {
            let q = src[p];
            if q == t {
                slots[base + p].points[m] = first;
                break;
            }
            slots[base + p].points[m] = slots[base + q].points[m];
            p = q;
        }
    }
}
