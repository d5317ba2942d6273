// rebuild.wgsl — decides on the GPU, without a host round trip, whether this step rebuilds the
// neighbour lists, and stops a batch in place when a table overflows.
// - `integrate` (integrate.wgsl) flags any particle that has moved more than half the skin
//   since the last build (so no pair can have closed the skin in between: the lists stay
//   exact), as it moves it: the flag is set for the next step's `plan`;
// - `plan` adds any wall that has moved more than half the skin (so the walls within a
//   particle's skin at the build are the only ones it can touch before the next), and turns
//   the flags into the indirect dispatch sizes of the step: the rebuild kernels full or zero,
//   every other kernel full — or everything zero once a table has overflowed;
// - `walls_near` (at a rebuild) marks each particle's walls within its radius plus the skin,
//   the only walls it can touch until the next build (`contact_forces` visits just those),
//   and flags a particle whose wall slots cannot hold them all; the slot of a wall is its rank
//   among them, so when they change the row's slots move to their walls' new ranks; a
//   particle with no wall within its skin gives its row of wall slots back (emptied) to the
//   free stack;
// - `walls_alloc` (at a rebuild, after `walls_near`) gives a row of wall slots to each
//   particle that has a wall within its skin and no row: from the free stack, else the next
//   unused row. Only the particles near a wall hold rows, so the table is a fraction of one
//   row per particle; a full table sets bit 3 of `counters.failed`, and the host regrows it;
// - `halt`, after the lists are built and before
//   anything of the step is committed: if a table overflowed, zero every remaining dispatch
//   of the batch. The state is then exactly that at the start of the failed step; the host
//   regrows the table and continues from it;
// - `lean_plan` stands for `plan` in a lean step, one recorded without the rebuild's passes
//   (engine/step.rs, `record_batch`): the step is taken unless a rebuild is due, which the
//   next full step makes; `close` ends such a batch, short where it lost more steps than it
//   had spare.
// `integrate` then records the positions of the build (`state.built`, set by `plan`).
// CPU twin: `Simulation::update_neighbours` (crates/wgdem-core/src/cpu/neighbours.rs).

import package::shared::{
    ARGS_REBUILD_BUCKETS, ARGS_REBUILD_CHUNKS, ARGS_REBUILD_ONE, ARGS_REBUILD_PARTICLES,
    ARGS_REBUILD_TILES, ARGS_STEP_CHUNKS, ARGS_STEP_PARTICLES,
    FAILED_SHORT, FAILED_WALL_ROWS, FAILED_WALL_SLOTS, NO_ROW, WALL_PLANE, WG,
};
import package::common::{
    Cell, Counters, Position, PositionWords, RebuildState, SimParams, Wall, WallSlot,
    cell_entry, empty_wall_slot, plate_gap, position_of, wall_moved,
};

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read> pos: array<PositionWords>;
@group(0) @binding(2) var<storage, read_write> state: RebuildState;
@group(0) @binding(3) var<storage, read_write> args: array<u32>;
@group(0) @binding(4) var<storage, read> walls: array<Wall>;
// Wall points at the last build, double-single: [2w] high part, [2w + 1] low part.
@group(0) @binding(5) var<storage, read_write> walls_built: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> counters: Counters;
// Per particle, bit w set for each wall w within its skin at the last build.
@group(0) @binding(7) var<storage, read_write> wall_mask: array<u32>;
// Per particle, its row in `wall_slots` (`wall_slots` slots from row × wall_slots), or NO_ROW.
@group(0) @binding(8) var<storage, read_write> wall_row: array<u32>;
// Rows given back, a stack of `alloc.top` entries.
@group(0) @binding(9) var<storage, read_write> wall_free: array<u32>;
@group(0) @binding(10) var<storage, read_write> alloc: WallAlloc;
@group(0) @binding(11) var<storage, read_write> wall_slots: array<WallSlot>;
// The periodic cell (common.wgsl `Cell`): a build records the cell of its step, which
// `hash` and `neighbours` bin and image with and `integrate` measures the cell's drift from.
@group(0) @binding(12) var<storage, read_write> cell: Cell;

struct WallAlloc {
    top: atomic<i32>,   // entries on the free stack (briefly negative inside `walls_alloc`)
    next: atomic<u32>,  // rows below this have been handed out at some time
    capacity: u32,      // rows in `wall_slots`
    _p0: u32,
}

fn set_args(k: u32, groups: u32) {
    args[3u * k] = groups;
    args[3u * k + 1u] = 1u;
    args[3u * k + 2u] = 1u;
}

// Indirect arguments, three u32 each, at the ARGS_* slots of shared.rs, C = params.chunks slot
// chunks. Rebuild kernels (zero unless a rebuild is due): per particle, per radix tile, one
// group, per hash bucket, per particle of chunk c. Every other kernel of a step, from
// `step_args()` on (zero once a table overflowed, or where a lean step is not taken): per
// particle, per particle of chunk c.
fn step_args() -> u32 {
    return ARGS_REBUILD_CHUNKS + params.chunks;
}

// Whether some wall has moved more than half the skin since the last build.
fn walls_moved() -> bool {
    var moved = false;
    for (var w = 0u; w < params.n_walls; w++) {
        moved = moved || wall_moved(walls[w], walls_built[2u * w], walls_built[2u * w + 1u],
            params.skin);
    }
    return moved;
}

// A table overflowed, or every step of the batch has been begun (`counters.end`): nothing
// more runs in it.
fn batch_over() -> bool {
    return atomicLoad(&counters.failed) != 0u || atomicLoad(&counters.steps) == counters.end;
}

// The dispatch sizes of a step's kernels other than the rebuild's: full where the step is
// taken (`go`), zero otherwise; the contact forces without sums, or with them where the step
// is the batch's last (`last`, known only here: a batch may lose steps to rebuilds or
// overflows). Two dispatches rather than one kernel that tells at run time: a kernel with a
// barrier (the sums', or one making that flag uniform) runs slower on lavapipe, which then
// switches between its subgroups at each barrier.
fn set_step_args(go: bool, last: bool) {
    let step_base = step_args();
    set_args(step_base + ARGS_STEP_PARTICLES, select(0u, (params.n + WG - 1u) / WG, go));
    for (var c = 0u; c < params.chunks; c++) {
        let groups = chunk_groups(c);
        let at = step_base + ARGS_STEP_CHUNKS + c;
        set_args(at, select(0u, groups, go));
        set_args(at + params.chunks, select(0u, groups, go && !last));
        set_args(at + 2u * params.chunks, select(0u, groups, go && last));
    }
}

// Workgroups over the particles of slot chunk `c`.
fn chunk_groups(c: u32) -> u32 {
    let per_chunk = params.chunk_particles;
    return (min(per_chunk, params.n - c * per_chunk) + WG - 1u) / WG;
}

// Whether a step begun now (`steps` not yet counted) is the batch's last.
fn last_step() -> bool {
    return atomicLoad(&counters.steps) + 1u == counters.end;
}

@compute @workgroup_size(1)
fn plan() {
    // (Single-workgroup batches: `integrate.steps` may have taken every step of the batch.)
    let failed = batch_over();
    let go = !failed && (atomicLoad(&state.flag) != 0u || params.rebuild_every_step != 0u
        || walls_moved());
    if !failed {
        atomicStore(&state.flag, 0u);
    }
    state.built = select(0u, 1u, go);
    set_args(ARGS_REBUILD_PARTICLES, select(0u, (params.n + WG - 1u) / WG, go));
    set_args(ARGS_REBUILD_TILES, select(0u, params.n_tiles, go));
    set_args(ARGS_REBUILD_ONE, select(0u, 1u, go));
    set_args(ARGS_REBUILD_BUCKETS, select(0u, ((1u << params.table_bits) + WG - 1u) / WG, go));
    for (var c = 0u; c < params.chunks; c++) {
        set_args(ARGS_REBUILD_CHUNKS + c, select(0u, chunk_groups(c), go));
    }
    set_step_args(!failed, last_step());
    if go {
        atomicAdd(&state.builds, 1u);
        if params.periodic != 0u {
            // This step's entry: the step is counted as begun just below.
            let begun = atomicLoad(&counters.steps) + 1u;
            cell.built = cell.steps[cell_entry(counters.base_lo, begun, params.cell_first_lo)];
        }
        for (var w = 0u; w < params.n_walls; w++) {
            walls_built[2u * w] = walls[w].point_hi;
            walls_built[2u * w + 1u] = walls[w].point_lo;
        }
    }
    if !failed {
        atomicAdd(&counters.steps, 1u);
    }
}

// A rebuild forced in this step (a reorder's, which moves the particles within its sort),
// unless the batch is over. Done here rather than by the host writing the flag before the
// batch: a batch that never begins (one stopped before it finished) then forces nothing.
@compute @workgroup_size(1)
fn force() {
    if !batch_over() {
        atomicStore(&state.flag, 1u);
    }
}

// The plan of a lean step (one recorded without the rebuild's passes, `step.rs`): the step is
// taken, with the lists of the last build, unless the batch is over or a rebuild is due (as
// `plan` would find it). A step not taken for a rebuild leaves the flag set, so every lean
// step after it does nothing until the next full step rebuilds and takes it: the rebuilds fall
// at the steps they fall at in a run of full steps, and so do the results, bit for bit. Each
// lean step so lost is counted in `counters.rounds`, from which the host sizes the spare
// steps it records after a batch's own.
@compute @workgroup_size(1)
fn lean_plan() {
    let failed = batch_over();
    let due = atomicLoad(&state.flag) != 0u || params.rebuild_every_step != 0u || walls_moved();
    let go = !failed && !due;
    state.built = 0u;
    set_step_args(go, last_step());
    if go {
        atomicAdd(&counters.steps, 1u);
    } else if !failed {
        counters.rounds += 1u;
    }
}

// The end of a batch of full and lean steps: one that has not begun every step of its own
// (its spare steps were lost to rebuilds too) stops short, as a single-workgroup batch out of
// rounds does, and the host finishes it from the step it reached.
@compute @workgroup_size(1)
fn close() {
    if atomicLoad(&counters.failed) == 0u && atomicLoad(&counters.steps) != counters.end {
        atomicOr(&counters.failed, FAILED_SHORT);
    }
}

// Distance from a particle centre (double-single parts `hi`, `lo`) to a wall: |signed distance|
// for a plane (two-sided, as in `contact_forces`), the distance to the rectangle for a plate.
fn wall_distance(wall: Wall, p: Position) -> f32 {
    let rel = (p.hi.xyz - wall.point_hi.xyz) + (p.lo.xyz - wall.point_lo.xyz);
    if wall.kind == WALL_PLANE {
        return abs(dot(rel, wall.normal.xyz));
    }
    return length(plate_gap(wall, rel));
}

@compute @workgroup_size(WG)
fn walls_near(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= params.n {
        return;
    }
    let p = position_of(pos[i]);
    // Both distances are 1-Lipschitz in the particle and wall positions, and neither moves
    // more than half the skin before the next build, so a wall beyond R + skin now stays
    // beyond R until then (f32 rounding here is ~1e-7 R, far inside that margin).
    let reach = p.hi.w + params.skin;
    var near = 0u;
    var mask = 0u;
    for (var w = 0u; w < params.n_walls; w++) {
        if wall_distance(walls[w], p) < reach {
            near += 1u;
            mask |= 1u << w;
        }
    }
    let ws = params.wall_slots;
    if near > ws {
        // The batch stops before this step's contacts; the rows are regrown and the step is
        // taken again, this particle's mask and slots moved then.
        atomicOr(&counters.failed, FAILED_WALL_SLOTS);
        atomicMax(&counters.max_wall_contacts, near);
        return;
    }
    let old_mask = wall_mask[i];
    wall_mask[i] = mask;
    let row = wall_row[i];
    if mask != 0u && row != NO_ROW && mask != old_mask {
        move_wall_slots(row * ws, old_mask, mask);
    }
    // No wall can reach this particle before the next build, so it touches none now and
    // its slots are empty already; they are emptied again so the row's next holder starts
    // clean whatever happened.
    if mask == 0u && row != NO_ROW {
        for (var k = 0u; k < params.wall_slots; k++) {
            wall_slots[row * params.wall_slots + k] = empty_wall_slot();
        }
        wall_free[atomicAdd(&alloc.top, 1)] = row;
        wall_row[i] = NO_ROW;
    }
}

// Rank of wall `w` among the walls of `mask` (its slot in the particle's row).
fn wall_rank(mask: u32, w: u32) -> u32 {
    return countOneBits(mask & ((1u << w) - 1u));
}

// Moves the slots of a row from the ranks of their walls in `old_mask` to those in `mask`, in
// place, and empties those of walls new to the skin (slots past the last rank are never read
// before a later move or emptying writes them). A wall that left the skin was not touching (it
// is farther than the radius), so its slot is empty and is dropped. Ranks keep the walls'
// order, so a slot moving down never lands on one that has yet to move down if those are taken
// in ascending order, nor one moving up if those are taken in descending order, and no slot
// moving one way lands on one moving the other (no private copy of the row, which lavapipe
// keeps in memory).
fn move_wall_slots(base: u32, old_mask: u32, mask: u32) {
    let kept = old_mask & mask;
    var m = kept;
    while m != 0u {
        let w = firstTrailingBit(m);
        m &= m - 1u;
        let was = wall_rank(old_mask, w);
        let now = wall_rank(mask, w);
        if now < was {
            wall_slots[base + now] = wall_slots[base + was];
        }
    }
    m = kept;
    while m != 0u {
        let w = firstLeadingBit(m);
        m &= ~(1u << w);
        let was = wall_rank(old_mask, w);
        let now = wall_rank(mask, w);
        if now > was {
            wall_slots[base + now] = wall_slots[base + was];
        }
    }
    let empty = empty_wall_slot();
    var k = 0u;
    m = mask;
    while m != 0u {
        let w = firstTrailingBit(m);
        m &= m - 1u;
        if (kept & (1u << w)) == 0u {
            wall_slots[base + k] = empty;  // a wall new to the skin: no contact yet
        }
        k += 1u;
    }
}

// Rows are addresses only: which particle gets which row depends on the order the atomics
// run in, but what a row holds, and so every result, does not.
@compute @workgroup_size(WG)
fn walls_alloc(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= params.n || wall_mask[i] == 0u || wall_row[i] != NO_ROW {
        return;
    }
    let top = atomicSub(&alloc.top, 1) - 1;
    var row = 0u;
    if top >= 0 {
        row = wall_free[top];
    } else {
        row = atomicAdd(&alloc.next, 1u);
        if row >= alloc.capacity {
            // The host reads `next` for the rows needed, and regrows.
            atomicOr(&counters.failed, FAILED_WALL_ROWS);
            return;
        }
    }
    wall_row[i] = row;
}

@compute @workgroup_size(1)
fn halt() {
    // `walls_alloc` takes from the free stack before it knows whether it is empty.
    if atomicLoad(&alloc.top) < 0 {
        atomicStore(&alloc.top, 0);
    }
    if atomicLoad(&counters.failed) == 0u {
        return;
    }
    for (var k = 0u; k < step_args() + ARGS_STEP_CHUNKS + 3u * params.chunks; k++) {
        args[3u * k] = 0u;
    }
}
