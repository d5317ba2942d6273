// moisture.wgsl — the moisture events of the hill model (Potyondy memo, Table 6) due at one
// step, on the listed pairs of one chunk of particles: `make_dry` marks every hill pair dry,
// then `make_wet` marks every hill pair whose gap is at most the moisture gap g_m wet.
// Dispatched in the first step of a batch (the host ends batches before event steps), right
// after the neighbour lists are brought up to date and before the contact forces, as the CPU
// applies an event; the lists hold every pair within the liquid-bridge reach
// (`params.bridge_reach`). Both sides of a pair compute the same gap (the difference of their
// positions is exactly negated), so their copies of the state agree.
// CPU twin: `Simulation::apply_moisture` (crates/wgdem-core/src/cpu/moisture.rs).

import package::shared::{MODEL_HILL, MOISTURE_DRY, MOISTURE_WET, WG};
import package::common::{
    Chunk, PairRecord, Position, SimParams, StoredSlot, ds_diff, partner_index, slot_aux, slot_head,
};

struct MoistureAction {
    dry: u32,       // 1: make_dry first
    wet: u32,       // 1: then make_wet with `gap`
    gap: f32,       // g_m (m)
    _p0: u32,
}

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> pos: array<Position>;
@group(0) @binding(2) var<storage, read> material: array<u32>;
@group(0) @binding(3) var<storage, read> pair_table: array<PairRecord>;
@group(0) @binding(4) var<storage, read> count: array<u32>;
@group(0) @binding(5) var<storage, read_write> slots: array<StoredSlot>;  // this chunk's table
@group(0) @binding(6) var<uniform> chunk: Chunk;
@group(0) @binding(7) var<uniform> action: MoistureAction;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x >= chunk.count {
        return;
    }
    let i = chunk.first + gid.x;
    let base = gid.x * params.slots;
    let pi = pos[i];
    for (var s = 0u; s < min(count[i], params.slots); s++) {
        let slot = slot_head(slots[base + s]);
        let j = partner_index(slot.partner);
        if pair_table[material[i] * params.n_materials + material[j]].model != MODEL_HILL {
            continue;
        }
        let pj = pos[j];
        let gap = length(ds_diff(pi, pj, params.one)) - (pi.hi.w + pj.hi.w);
        var aux = slot_aux(slot);
        if action.dry != 0u {
            aux.x = bitcast<f32>(MOISTURE_DRY);
        }
        if action.wet != 0u && gap <= action.gap {
            aux.x = bitcast<f32>(MOISTURE_WET);
        }
        set_aux(base + s, aux);
    }
}

// Slot k's model state (`aux`; narrow slots have none, and no hill contact).
@if(slot_wide || slot_jager)
fn set_aux(k: u32, aux: vec4<f32>) {
    slots[k].aux = aux;
}
@if(!slot_wide && !slot_jager)
fn set_aux(k: u32, aux: vec4<f32>) {
}
