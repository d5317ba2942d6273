// ranges.wgsl — [start, end) of every bucket in the sorted keys. CPU twin: the `start` array of
// `broadphase::pairs_within`.

import package::shared::{WG};
import package::common::{SimParams};

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> sorted_keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> ranges: array<vec2<u32>>;

@compute @workgroup_size(WG)
fn clear(@builtin(global_invocation_id) gid: vec3<u32>) {
    let b = gid.x + gid.y * 65535u * WG;
    if b < (1u << params.table_bits) {
        ranges[b] = vec2<u32>(0u, 0u);
    }
}

@compute @workgroup_size(WG)
fn mark(@builtin(global_invocation_id) gid: vec3<u32>) {
    let s = gid.x;
    if s >= params.n {
        return;
    }
    let k = sorted_keys[s];
    if s == 0u || sorted_keys[s - 1u] != k {
        ranges[k].x = s;
    }
    if s + 1u == params.n || sorted_keys[s + 1u] != k {
        ranges[k].y = s + 1u;
    }
}
