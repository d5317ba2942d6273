// rebuild.wgsl — decides on the GPU, without a host round trip, whether this step rebuilds the
// neighbour lists: `check` flags any particle that has moved more than half the skin since the
// last build (so no pair can have closed the skin in between: the lists stay exact), `plan`
// turns the flag into the indirect dispatch sizes of the rebuild kernels (full or zero); the
// rebuild ends with `commit.wgsl`.
// CPU twin: `Simulation::update_neighbours`.

struct RebuildState {
    flag: atomic<u32>,
    builds: atomic<u32>,
    _p0: u32,
    _p1: u32,
}

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> pos: array<Position>;
@group(0) @binding(2) var<storage, read> built_at: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> state: RebuildState;
@group(0) @binding(4) var<storage, read_write> args: array<u32>;

@compute @workgroup_size(64)
fn check(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= params.n {
        return;
    }
    let p = pos[i];
    let d = (p.hi.xyz - built_at[i].xyz) + p.lo.xyz;
    let limit = 0.5 * params.skin;
    if dot(d, d) > limit * limit {
        atomicOr(&state.flag, 1u);
    }
}

// Indirect arguments, three u32 each: [0] per particle, [1] per radix tile, [2] one group,
// [3] per hash bucket, [4 + c] per particle of chunk c.
@compute @workgroup_size(1)
fn plan() {
    let go = atomicLoad(&state.flag) != 0u || params.flags.x != 0u;
    atomicStore(&state.flag, 0u);
    var sizes = array<u32, 4>(
        (params.n + WG - 1u) / WG,
        params.n_tiles,
        1u,
        ((1u << params.table_bits) + WG - 1u) / WG,
    );
    for (var k = 0u; k < 4u; k++) {
        args[3u * k] = select(0u, sizes[k], go);
        args[3u * k + 1u] = 1u;
        args[3u * k + 2u] = 1u;
    }
    let per_chunk = params.flags.y;
    for (var c = 0u; c < params.flags.z; c++) {
        let count = min(per_chunk, params.n - c * per_chunk);
        args[3u * (4u + c)] = select(0u, (count + WG - 1u) / WG, go);
        args[3u * (4u + c) + 1u] = 1u;
        args[3u * (4u + c) + 2u] = 1u;
    }
    if go {
        atomicAdd(&state.builds, 1u);
    }
}
