//! Bindings by name: a pass's table ([`Table`], one per pass in `tables.rs`) lists
//! each WGSL global it binds with its access and the buffer ([`Buf`]) that fills it; the
//! pipeline layout of every kernel of the pass and each of its bind groups are built from the
//! table alone, so that a buffer cannot land in another's slot, and a test checks every row
//! against the kernels' WGSL by name.

use super::state::{Buffers, InForces, SORTED, SlotChunk};

/// How a kernel binds one buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bind {
    /// `var<uniform>`.
    Uniform,
    /// `var<storage, read>`.
    Read,
    /// `var<storage, read_write>`.
    Write,
    /// Nothing at this binding: a gap in a pass's numbering (its kernels share a module whose
    /// other kernels bind more, see `tables::INTEGRATE`).
    Unused,
}

/// One binding of a pass: the WGSL global at the row's index (`@binding(i)`, group 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The global's name in the kernel's WGSL.
    pub name: &'static str,
    /// How the kernel accesses it.
    pub access: Bind,
    /// The buffer that fills it.
    pub buffer: Buf,
}

/// A pass's bindings, binding 0 first.
pub type Table = &'static [Row];

/// A uniform row.
pub const fn uniform(name: &'static str, buffer: Buf) -> Row {
    Row {
        name,
        access: Bind::Uniform,
        buffer,
    }
}

/// A read-only storage row.
pub const fn read(name: &'static str, buffer: Buf) -> Row {
    Row {
        name,
        access: Bind::Read,
        buffer,
    }
}

/// A gap in the numbering: no global of the pass's kernels at this binding.
pub const fn unused() -> Row {
    Row {
        name: "",
        access: Bind::Unused,
        buffer: Buf::Params,
    }
}

/// A read-write storage row.
pub const fn write(name: &'static str, buffer: Buf) -> Row {
    Row {
        name,
        access: Bind::Write,
        buffer,
    }
}

/// The engine's buffers, by role. Most are one buffer (its label in brackets); the rest depend
/// on which bind group of the pass is built ([`At`]): the slot chunk, the radix pass, the
/// reorder's array and block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buf {
    /// `SimParams` (`dem.params`).
    Params,
    /// Positions, radius and mass in double-single (`dem.position`).
    Position,
    /// Velocities, and the angular velocity's x in w (`dem.velocity`).
    Velocity,
    /// Orientations (`dem.orientation`).
    Orientation,
    /// Predicted velocities (`dem.predicted_velocity`).
    Predicted,
    /// Low parts of velocities and radii (`dem.low_parts`).
    LowParts,
    /// Material of each particle (`dem.material`).
    Material,
    /// Material-pair records (`dem.pair_table`).
    PairTable,
    /// Walls (`dem.walls`).
    Walls,
    /// Force and torque per particle (`dem.force_torque`); also the reorder's scratch.
    ForceTorque,
    /// Contact work per particle (`dem.contact_work`).
    ContactWork,
    /// Contact counts per workgroup (`dem.contact_stats`).
    ContactStats,
    /// Packed cell of each particle (in the force–torque buffer, from `hash` to the list build).
    Cells,
    /// Key array `k` of the sorts' pairs (both in the force–torque buffer).
    Keys(usize),
    /// Value array `k` of the sorts' pairs (the first in the force–torque buffer, the second
    /// `dem.sorted`).
    Vals(usize),
    /// The radix pass's input keys, values and its outputs (by the pass's parity).
    KeysIn,
    /// See [`Buf::KeysIn`].
    ValsIn,
    /// See [`Buf::KeysIn`].
    KeysOut,
    /// See [`Buf::KeysIn`].
    ValsOut,
    /// The radix pass's digit shift (`dem.radix.pass`).
    RadixShift,
    /// Per-tile digit histograms (`dem.radix.tile_hist`).
    TileHist,
    /// The particle indices in the order both sorts end in (by bucket, or by Morton code
    /// during a reorder): value buffer [`SORTED`].
    SortedVals,
    /// Each bucket's first place in the sorted order, and the end (`dem.bucket_start`).
    BucketStart,
    /// Particles per bucket while sorting (in the force–torque buffer; `hash.clear` zeroes
    /// them first).
    BucketCount,
    /// Neighbours per particle (`dem.neighbour_count`).
    NeighbourCount,
    /// The bind group's slot chunk: its slots and its `Chunk` uniform.
    ChunkSlots,
    /// See [`Buf::ChunkSlots`].
    ChunkRange,
    /// The slot chunk's forces handed to B sides (`dem.handed_forces`).
    ChunkHand,
    /// The slot chunk's links from A slots to B slots (`dem.pair_link`).
    ChunkLink,
    /// Positions at the last build and inverse inertia (`dem.built_at`).
    BuiltAt,
    /// Wall positions at the last build (`dem.walls_built`).
    WallsBuilt,
    /// The rebuild flag and counts (`dem.rebuild_state`).
    RebuildState,
    /// Stable id of each particle (`dem.stable_id`).
    StableIds,
    /// Drive of each particle, by stable id (`dem.drive_of`).
    DriveOf,
    /// Drives (`dem.drives`).
    Drives,
    /// Points of the velocity schedules (`dem.schedule_points`).
    SchedulePoints,
    /// The moisture event to apply (`dem.moisture.action`).
    MoistureAction,
    /// The indirect dispatch arguments (`dem.dispatch_args`), or a stand-in where the kernel
    /// is itself dispatched from them ([`At::args_stand_in`]).
    DispatchArgs,
    /// Wall slots (`dem.wall_history`).
    WallSlots,
    /// Row of wall slots of each particle (`dem.wall_row`).
    WallRow,
    /// Free rows of wall slots (`dem.wall_free`).
    WallFree,
    /// The wall rows' allocator (`dem.wall_alloc`).
    WallAlloc,
    /// Walls within each particle's skin (`dem.wall_mask`).
    WallMask,
    /// Per-workgroup wall sums (`dem.wall_partial`).
    WallPartial,
    /// Force and torque per wall (`dem.wall_force`).
    WallForce,
    /// Contact counts in all (`dem.contact_stats.total`).
    ContactStatsTotal,
    /// Counters and failure bits (`dem.counters`).
    Counters,
    /// The reorder's `Permute` uniform, inverse order and array of the bind group.
    PermuteInfo,
    /// See [`Buf::PermuteInfo`].
    PermuteNewIndex,
    /// See [`Buf::PermuteInfo`].
    PermuteData,
    /// The periodic cell: its constants, the cell at the last build and at every step of the
    /// run (`dem.cell`; `Cell` in common.wgsl).
    Cell,
    /// Per particle, its pairs' Σ f ⊗ d in a periodic cell (`dem.cell_stress`).
    CellStress,
    /// Per workgroup, its particles' Σ f ⊗ d and Σ m v ⊗ v (`dem.cell_partial`).
    CellPartial,
    /// The cell's Σ f ⊗ d and Σ m v ⊗ v after a batch, for the host's servo (`dem.cell_sums`).
    CellSums,
    /// Per stable id, the whole-cell shifts of its wraps (`dem.images`).
    Images,
    /// Per workgroup, a shear row's sums of its particles (`dem.row_partial`).
    RowPartial,
    /// A shear row's sums of all particles (`dem.row_sums`; `RowSums` in row_reduce.wgsl).
    RowSums,
}

/// Which bind group of a pass is built: what the buffers that vary between a pass's groups
/// resolve to.
#[derive(Clone, Copy, Default)]
pub(super) struct At<'a> {
    /// The slot chunk ([`Buf::ChunkSlots`], [`Buf::ChunkRange`]).
    pub(super) chunk: Option<&'a SlotChunk>,
    /// The radix pass (its parity picks [`Buf::KeysIn`] and the rest).
    pub(super) radix_pass: usize,
    /// Bind the stand-in buffer as [`Buf::DispatchArgs`].
    pub(super) args_stand_in: bool,
    /// The reorder's `Permute` uniform, inverse order and array.
    pub(super) permute: Option<[&'a wgpu::Buffer; 3]>,
}

impl Buffers {
    /// The buffer that fills `buf` in the bind group `at`, whole or (the neighbour build's own
    /// arrays, [`super::state::BuildScratch`]) the part of the force–torque buffer that holds it.
    ///
    /// # Panics
    /// Where `at` lacks what `buf` varies by (a table used for a bind group it was not
    /// written for: a programming error, caught by the first engine built).
    pub(super) fn resolve<'a>(&'a self, buf: Buf, at: &At<'a>) -> wgpu::BufferBinding<'a> {
        let (input, output) = (at.radix_pass % 2, 1 - at.radix_pass % 2);
        let vals = |k: usize| (k != SORTED).then_some(InForces::FirstVals);
        let part = match buf {
            Buf::Cells => Some(InForces::Cells),
            Buf::BucketCount => Some(InForces::BucketCount),
            Buf::Keys(k) => Some(InForces::Keys(k)),
            Buf::KeysIn => Some(InForces::Keys(input)),
            Buf::KeysOut => Some(InForces::Keys(output)),
            Buf::Vals(k) => vals(k),
            Buf::ValsIn => vals(input),
            Buf::ValsOut => vals(output),
            _ => None,
        };
        match part {
            Some(part) => {
                let (offset, size) = self.scratch.range(part);
                wgpu::BufferBinding {
                    buffer: &self.ft,
                    offset,
                    size: wgpu::BufferSize::new(size),
                }
            }
            None => self.whole(buf, at).as_entire_buffer_binding(),
        }
    }

    /// The buffer that fills `buf` in the bind group `at`, for the buffers bound whole.
    fn whole<'a>(&'a self, buf: Buf, at: &At<'a>) -> &'a wgpu::Buffer {
        let chunk = || at.chunk.expect("a per-chunk binding needs the slot chunk");
        let permute = |k: usize| at.permute.expect("a reorder binding needs its array")[k];
        match buf {
            Buf::Params => &self.params,
            Buf::Position => &self.pos,
            Buf::Velocity => &self.vel,
            Buf::Orientation => &self.orientation,
            Buf::Predicted => &self.pred,
            Buf::LowParts => &self.fine,
            Buf::Material => &self.material,
            Buf::PairTable => &self.pair_table,
            Buf::Walls => &self.walls,
            Buf::ForceTorque => &self.ft,
            Buf::ContactWork => &self.work,
            Buf::ContactStats => &self.stats,
            // The second value array; the others lie in the force–torque buffer (above).
            Buf::Vals(_) | Buf::ValsIn | Buf::ValsOut | Buf::SortedVals => &self.sorted,
            Buf::Cells | Buf::BucketCount | Buf::Keys(_) | Buf::KeysIn | Buf::KeysOut => {
                unreachable!("bound in the force–torque buffer by `resolve`")
            }
            Buf::RadixShift => &self.radix_passes[at.radix_pass],
            Buf::TileHist => &self.tile_hist,
            Buf::BucketStart => &self.bucket_start,
            Buf::NeighbourCount => &self.counts,
            Buf::ChunkSlots => &chunk().slots,
            Buf::ChunkRange => &chunk().range,
            Buf::ChunkHand => &chunk().hand,
            Buf::ChunkLink => &chunk().link,
            Buf::BuiltAt => &self.built_at,
            Buf::WallsBuilt => &self.walls_built,
            Buf::RebuildState => &self.rebuild_state,
            Buf::StableIds => &self.ids,
            Buf::DriveOf => &self.drive_of,
            Buf::Drives => &self.drives,
            Buf::SchedulePoints => &self.schedule_points,
            Buf::MoistureAction => &self.moisture_action,
            Buf::DispatchArgs if at.args_stand_in => &self.dummy,
            Buf::DispatchArgs => &self.dispatch_args,
            Buf::WallSlots => &self.wall_slots,
            Buf::WallRow => &self.wall_row,
            Buf::WallFree => &self.wall_free,
            Buf::WallAlloc => &self.wall_alloc,
            Buf::WallMask => &self.wall_mask,
            Buf::WallPartial => &self.wall_partial,
            Buf::WallForce => &self.wall_out,
            Buf::ContactStatsTotal => &self.stats_out,
            Buf::Counters => &self.counters,
            Buf::PermuteInfo => permute(0),
            Buf::PermuteNewIndex => permute(1),
            Buf::PermuteData => permute(2),
            Buf::Cell => &self.cell,
            Buf::CellStress => &self.cell_stress,
            Buf::CellPartial => &self.cell_partial,
            Buf::CellSums => &self.cell_sums,
            Buf::Images => &self.images,
            Buf::RowPartial => &self.row_partial,
            Buf::RowSums => &self.row_sums,
        }
    }
}
