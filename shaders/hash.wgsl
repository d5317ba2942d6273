// hash.wgsl — cell and bucket of every particle; the values to sort are the particle indices.
// CPU twin: the cell/bucket closures of `broadphase::pairs_within`.

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> pos: array<Position>;
@group(0) @binding(2) var<storage, read_write> cells: array<vec4<i32>>;
@group(0) @binding(3) var<storage, read_write> keys: array<u32>;
@group(0) @binding(4) var<storage, read_write> vals: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= params.n {
        return;
    }
    let c = cell_of(pos[i], params.cell_size);
    cells[i] = vec4<i32>(c, 0);
    keys[i] = bucket_of(c, params.table_bits);
    vals[i] = i;
}
