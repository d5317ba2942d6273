// permute.wgsl — reorders particle data by cell (the order `radix` sorted the particles into),
// on the rebuilds that `rebuild.plan` marks for it, so that particles close in space sit close
// in memory. Every per-particle array is gathered through a scratch copy; neighbour slots move
// with their particle (between slot chunks if need be) and their partner indices are remapped;
// stable ids travel with the particles, so outputs and the canonical order of each pair (which
// fixes the sign of its stored history) are unaffected.
// CPU twin: none (the CPU reference never reorders; its index is the stable id).

struct Permute {
    stride: u32,        // u32 words per element of the array being permuted
    src_first: u32,     // slot gathers: first particle of the source chunk
    src_count: u32,     //               particles in the source chunk
    _p0: u32,
}

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<uniform> perm_info: Permute;
@group(0) @binding(2) var<storage, read> order: array<u32>;        // new index → old index
@group(0) @binding(3) var<storage, read> new_index: array<u32>;    // old index → new index
@group(0) @binding(4) var<storage, read_write> data: array<u32>;
@group(0) @binding(5) var<storage, read_write> scratch: array<u32>;
@group(0) @binding(6) var<uniform> chunk: Chunk;                   // destination chunk (slots)

// scratch ← data (whole array).
@compute @workgroup_size(64)
fn save(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = gid.x;
    if p >= params.n {
        return;
    }
    for (var k = 0u; k < perm_info.stride; k++) {
        scratch[p * perm_info.stride + k] = data[p * perm_info.stride + k];
    }
}

// data[p] ← scratch[order[p]].
@compute @workgroup_size(64)
fn gather(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = gid.x;
    if p >= params.n {
        return;
    }
    let q = order[p];
    for (var k = 0u; k < perm_info.stride; k++) {
        data[p * perm_info.stride + k] = scratch[q * perm_info.stride + k];
    }
}

// The inverse permutation: new_index[order[p]] = p (bound as `data`).
@compute @workgroup_size(64)
fn invert(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = gid.x;
    if p >= params.n {
        return;
    }
    data[order[p]] = p;
}

// After the reorder the sorted order is the identity (bound as `data`).
@compute @workgroup_size(64)
fn identity(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = gid.x;
    if p >= params.n {
        return;
    }
    data[p] = p;
}

// Neighbour slots of the destination chunk (`data`, its current table) from the saved slots
// of one source chunk (`scratch`, a copy of that chunk's table), partners remapped. Dispatched
// once per (destination, source) pair of chunks; a particle whose old index lies in another
// source chunk is left to that chunk's dispatch.
@compute @workgroup_size(64)
fn gather_slots(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x >= chunk.count {
        return;
    }
    let p = chunk.first + gid.x;
    let q = order[p];
    if q < perm_info.src_first || q >= perm_info.src_first + perm_info.src_count {
        return;
    }
    let k = params.slots;
    let dst = gid.x * k * SLOT_WORDS;
    let src = (q - perm_info.src_first) * k * SLOT_WORDS;
    for (var s = 0u; s < k; s++) {
        for (var w = 0u; w < SLOT_WORDS; w++) {
            data[dst + SLOT_WORDS * s + w] = scratch[src + SLOT_WORDS * s + w];
        }
        // Word 3 is the partner index.
        data[dst + SLOT_WORDS * s + 3u] = new_index[scratch[src + SLOT_WORDS * s + 3u]];
    }
}

// Whole-chunk copy of slots into the chunk's scratch table (bound as `data` → `scratch`).
@compute @workgroup_size(64)
fn save_slots(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x >= chunk.count {
        return;
    }
    let words = params.slots * SLOT_WORDS;
    for (var w = 0u; w < words; w++) {
        scratch[gid.x * words + w] = data[gid.x * words + w];
    }
}
