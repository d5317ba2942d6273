//! What each pass of a step (`step.rs`) binds: one row per WGSL global, in binding order
//! (`@binding(0)` first), naming the global, how the kernels access it and the buffer that fills it. The pipeline
//! layouts (`kernels.rs`) and the bind groups (`bind_groups.rs`) are built from these tables
//! alone, and `shader_validation.rs` checks every row against its kernels' WGSL by name,
//! binding and access, without a GPU.

use super::bindings::{Bind, Buf, Row, Table, read, uniform, unused, write};

/// `rebuild.*`: `args` is the indirect-argument buffer (a stand-in for
/// `rebuild.walls_near`, which is itself dispatched from it).
pub const REBUILD: Table = &[
    uniform("params", Buf::Params),
    read("pos", Buf::Position),
    write("state", Buf::RebuildState),
    write("args", Buf::DispatchArgs),
    read("walls", Buf::Walls),
    write("walls_built", Buf::WallsBuilt),
    write("counters", Buf::Counters),
    write("wall_mask", Buf::WallMask),
    write("wall_row", Buf::WallRow),
    write("wall_free", Buf::WallFree),
    write("alloc", Buf::WallAlloc),
    write("wall_slots", Buf::WallSlots),
    write("cell", Buf::Cell),
];

/// `hash.clear`, `hash` and `hash.order`: cells and (bucket or Morton) keys of every particle,
/// into the first key/value pair of the sorts; `hash` counts each bucket's particles.
pub const HASH: Table = &[
    uniform("params", Buf::Params),
    read("pos", Buf::Position),
    write("cells", Buf::Cells),
    write("keys", Buf::Keys(0)),
    write("vals", Buf::Vals(0)),
    write("bucket_count", Buf::BucketCount),
    read("cell", Buf::Cell),
];

/// `radix.*` (the reorder's sort by Morton code), one bind group per pass: from one key/value
/// pair of arrays into the other. The inputs are bound writable: they share the force array
/// with the outputs (`BuildScratch`), which a read-only binding may not.
pub const RADIX: Table = &[
    uniform("params", Buf::Params),
    uniform("pass_info", Buf::RadixShift),
    write("keys_in", Buf::KeysIn),
    write("vals_in", Buf::ValsIn),
    write("keys_out", Buf::KeysOut),
    write("vals_out", Buf::ValsOut),
    write("tile_hist", Buf::TileHist),
];

/// `buckets.*`: the particles sorted by the buckets `hash` wrote, and each bucket's range
/// (`keys` bound writable: it shares the force array with `bucket_count`).
pub const BUCKETS: Table = &[
    uniform("params", Buf::Params),
    write("keys", Buf::Keys(0)),
    write("bucket_count", Buf::BucketCount),
    write("bucket_start", Buf::BucketStart),
    write("sorted_vals", Buf::SortedVals),
];

/// `neighbours`, one bind group per slot chunk.
pub const NEIGHBOURS: Table = &[
    uniform("params", Buf::Params),
    read("pos", Buf::Position),
    read("cells", Buf::Cells),
    read("sorted_vals", Buf::SortedVals),
    read("bucket_start", Buf::BucketStart),
    write("count", Buf::NeighbourCount),
    write("slots", Buf::ChunkSlots),
    write("counters", Buf::Counters),
    uniform("chunk", Buf::ChunkRange),
    read("ids", Buf::StableIds),
    write("link", Buf::ChunkLink),
    read("cell", Buf::Cell),
];

/// `moisture`, one bind group per slot chunk.
pub const MOISTURE: Table = &[
    uniform("params", Buf::Params),
    read("pos", Buf::Position),
    read("material", Buf::Material),
    read("pair_table", Buf::PairTable),
    read("count", Buf::NeighbourCount),
    write("slots", Buf::ChunkSlots),
    uniform("chunk", Buf::ChunkRange),
    uniform("action", Buf::MoistureAction),
];

/// `contact_forces`, one bind group per slot chunk.
pub const CONTACTS: Table = &[
    uniform("params", Buf::Params),
    read("pos", Buf::Position),
    read("vel", Buf::Velocity),
    read("pred", Buf::Predicted),
    read("material", Buf::Material),
    read("pair_table", Buf::PairTable),
    read("walls", Buf::Walls),
    read("count", Buf::NeighbourCount),
    write("slots", Buf::ChunkSlots),
    write("wall_slots", Buf::WallSlots),
    write("wall_partial", Buf::WallPartial),
    write("ft", Buf::ForceTorque),
    write("stats", Buf::ContactStats),
    uniform("chunk", Buf::ChunkRange),
    write("counters", Buf::Counters),
    write("work", Buf::ContactWork),
    read("wall_mask", Buf::WallMask),
    read("wall_row", Buf::WallRow),
    read("fine", Buf::LowParts),
    // 19–27: `integrate`'s own (its kernels are built on this module).
    unused(),
    unused(),
    unused(),
    unused(),
    unused(),
    unused(),
    unused(),
    unused(),
    unused(),
    write("hand", Buf::ChunkHand),
    read("link", Buf::ChunkLink),
    read("cell", Buf::Cell),
    write("cell_stress", Buf::CellStress),
];

/// `wall_reduce.*`: per-workgroup wall sums and contact counts into totals.
pub const REDUCE: Table = &[
    uniform("params", Buf::Params),
    read("wall_partial", Buf::WallPartial),
    read("stats", Buf::ContactStats),
    write("wall_out", Buf::WallForce),
    write("stats_out", Buf::ContactStatsTotal),
];

/// `cell_reduce.*`: a periodic cell's Σ f ⊗ d and Σ m v ⊗ v, per workgroup then in all.
pub const CELL_REDUCE: Table = &[
    uniform("params", Buf::Params),
    read("pos", Buf::Position),
    read("vel", Buf::Velocity),
    read("fine", Buf::LowParts),
    read("cell_stress", Buf::CellStress),
    write("partial", Buf::CellPartial),
    write("total", Buf::CellSums),
];

/// `row_reduce.*`: a direct shear row's sums (kinetic energy, highest sphere, touching pairs
/// and Σ n ⊗ n), per workgroup of each slot chunk, then in all.
pub const ROW_REDUCE: Table = &[
    uniform("params", Buf::Params),
    read("pos", Buf::Position),
    read("vel", Buf::Velocity),
    read("pred", Buf::Predicted),
    read("fine", Buf::LowParts),
    read("built_at", Buf::BuiltAt),
    unused(),
    read("count", Buf::NeighbourCount),
    write("slots", Buf::ChunkSlots),
    unused(),
    uniform("chunk", Buf::ChunkRange),
    write("partial", Buf::RowPartial),
    write("total", Buf::RowSums),
];

/// `integrate` (particles and walls), with the first slot chunk's slots and handed forces
/// (read only where that chunk is the only one: `with_handed` in contact_forces.wgsl).
pub const INTEGRATE: Table = &[
    uniform("params", Buf::Params),
    write("pos", Buf::Position),
    write("vel", Buf::Velocity),
    write("pred", Buf::Predicted),
    unused(),
    unused(),
    write("walls", Buf::Walls),
    read("count", Buf::NeighbourCount),
    write("slots", Buf::ChunkSlots),
    unused(),
    unused(),
    write("ft", Buf::ForceTorque),
    unused(),
    uniform("chunk", Buf::ChunkRange),
    write("counters", Buf::Counters),
    write("work", Buf::ContactWork),
    unused(),
    unused(),
    write("fine", Buf::LowParts),
    unused(),
    write("orientation", Buf::Orientation),
    write("built_at", Buf::BuiltAt),
    write("state", Buf::RebuildState),
    read("ids", Buf::StableIds),
    read("drive_of", Buf::DriveOf),
    read("drives", Buf::Drives),
    read("points", Buf::SchedulePoints),
    unused(),
    write("hand", Buf::ChunkHand),
    unused(),
    read("cell", Buf::Cell),
    unused(),
    write("images", Buf::Images),
];

/// `integrate.steps`: the integration's bindings where it has them, the contact pass's in its
/// gaps (on one slot chunk), and the wall points of the last build (binding 27).
pub const STEPS: Table = &steps_table();

const STEPS_ROWS: usize = if CONTACTS.len() > INTEGRATE.len() {
    CONTACTS.len()
} else {
    INTEGRATE.len()
};

const fn steps_table() -> [Row; STEPS_ROWS] {
    let mut rows = [unused(); STEPS_ROWS];
    let mut k = 0;
    while k < STEPS_ROWS {
        rows[k] = if k < INTEGRATE.len() && !matches!(INTEGRATE[k].access, Bind::Unused) {
            INTEGRATE[k]
        } else if k < CONTACTS.len() {
            CONTACTS[k]
        } else {
            unused()
        };
        k += 1;
    }
    rows[WALLS_BUILT] = read("walls_built", Buf::WallsBuilt);
    rows
}

/// `integrate.steps`' binding of the wall points of the last build.
const WALLS_BUILT: usize = 27;

/// `permute.*`, one bind group per (array, column block, slot chunk): a block of `data`
/// through the scratch (the force–torque buffer, free between steps), in the sorted order.
pub const PERMUTE: Table = &[
    uniform("params", Buf::Params),
    uniform("perm_info", Buf::PermuteInfo),
    read("order", Buf::SortedVals),
    read("new_index", Buf::PermuteNewIndex),
    write("data", Buf::PermuteData),
    write("scratch", Buf::ForceTorque),
];

/// Every table, with a name for messages (the test checks that each kernel's is here).
pub const ALL: &[(&str, Table)] = &[
    ("REBUILD", REBUILD),
    ("HASH", HASH),
    ("RADIX", RADIX),
    ("BUCKETS", BUCKETS),
    ("NEIGHBOURS", NEIGHBOURS),
    ("MOISTURE", MOISTURE),
    ("CONTACTS", CONTACTS),
    ("REDUCE", REDUCE),
    ("CELL_REDUCE", CELL_REDUCE),
    ("ROW_REDUCE", ROW_REDUCE),
    ("INTEGRATE", INTEGRATE),
    ("STEPS", STEPS),
    ("PERMUTE", PERMUTE),
];
