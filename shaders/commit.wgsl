// commit.wgsl — last kernel of a rebuild (dispatched with the size `rebuild.plan` chose, and
// with none once `rebuild.halt` has stopped the batch): records the positions of this build
// for the half-skin check in `integrate`. (The lists themselves are rebuilt in place by
// `neighbours`.)
// CPU twin: the end of `Simulation::update_neighbours` (crates/wgdem-core/src/cpu/neighbours.rs).

import package::shared::{WG};
import package::common::{Position, SimParams};

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> pos: array<Position>;
@group(0) @binding(2) var<storage, read_write> built_at: array<vec4<f32>>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= params.n {
        return;
    }
    let p = pos[i];
    built_at[i] = vec4<f32>(p.hi.xyz + p.lo.xyz, 0.0);
}
