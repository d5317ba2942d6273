// commit.wgsl — last kernel of a rebuild (dispatched with the size `rebuild.plan` chose):
// copies the freshly built lists, with their carried-over history, into the current lists, and
// records the positions of this build for `rebuild.check`.
// CPU twin: the end of `Simulation::update_neighbours`.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> pos: array<Position>;
@group(0) @binding(2) var<storage, read_write> built_at: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> new_count: array<u32>;
@group(0) @binding(4) var<storage, read> new_slots: array<Slot>;
@group(0) @binding(5) var<storage, read_write> count: array<u32>;
@group(0) @binding(6) var<storage, read_write> slots: array<Slot>;
@group(0) @binding(7) var<uniform> chunk: Chunk;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x >= chunk.count {
        return;
    }
    let i = chunk.first + gid.x;
    let c = new_count[i];
    count[i] = c;
    let base = gid.x * params.slots;
    for (var s = 0u; s < min(c, params.slots); s++) {
        slots[base + s] = new_slots[base + s];
    }
    let p = pos[i];
    built_at[i] = vec4<f32>(p.hi.xyz + p.lo.xyz, 0.0);
}
