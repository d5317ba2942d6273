// cell_probe.wgsl — test entry point: packs cells into one word and unpacks them near a given
// cell (common.wgsl `pack_cell`, `unpack_cell_near`), so that the round trip can be checked
// against integer arithmetic on the host (tests/gpu_broadphase.rs).

import package::shared::{WG};
import package::common::{pack_cell, unpack_cell_near};

struct CellCase {
    cell: vec4<i32>,             // xyz the cell to pack
    near: vec4<i32>,             // xyz the cell to unpack near
}

struct CellOut {
    packed: vec4<u32>,           // x the packed word
    unpacked: vec4<i32>,         // xyz the cell nearest `near` with that word
}

@group(0) @binding(0) var<storage, read> inputs: array<CellCase>;
@group(0) @binding(1) var<storage, read_write> outputs: array<CellOut>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= arrayLength(&inputs) {
        return;
    }
    let c = inputs[i];
    let packed = pack_cell(c.cell.xyz);
    outputs[i] = CellOut(vec4<u32>(packed, 0u, 0u, 0u),
        vec4<i32>(unpack_cell_near(packed, c.near.xyz), 0));
}
