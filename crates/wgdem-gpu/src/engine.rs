//! The GPU engine: buffers, pipelines and the passes of one time step.
//!
//! One step, in order (see [`GpuEngine::record_step`]; each line is a labelled dispatch):
//! 1. `rebuild.plan`: has any particle (flagged by the previous step's `integrate`, or by the
//!    host) or wall moved half the skin since the last build? The answer becomes the indirect
//!    dispatch sizes of steps 2–5 (full or zero), so the lists are rebuilt only when needed and
//!    the host never has to ask;
//! 2. `hash`: cell and bucket of every particle;
//! 3. `radix.count` / `radix.scan` / `radix.scatter` × passes: stable sort of (bucket, index);
//!    (every `reorder_every` steps, at a batch start, with a rebuild forced, first
//!    `hash.order` and a radix sort by the cells' Morton code, then `permute.*`, which
//!    reorders all particle data, neighbour slots and stable ids into that order;)
//! 4. `ranges.clear`, `ranges.mark`: each bucket's range in the sorted order;
//! 5. `neighbours`, `rebuild.walls_near`, `rebuild.halt`, `rebuild.commit`: each particle's
//!    partners within the skin, rebuilt in place with history carried over by partner (its
//!    slot's partner word also holds the pair's canonical order, from the stable ids); its
//!    walls within the skin counted; on an overflow the batch stops here; else the positions
//!    of the build are recorded;
//! 6. `contact_forces`: pair and wall forces, summed per particle in list order;
//! 7. `wall_reduce` (last step of a batch): per-wall force and torque, contact counts;
//! 8. `integrate`: semi-implicit Euler in double-single, flagging a particle that has moved
//!    half the skin since the last build (for the next step's `plan`); walls move.
//!
//! Steps are recorded `batch_steps` at a time into one compute pass and one submit; the host
//! reads back only the counters, wall forces and contact counts at the end of a batch. If a
//! neighbour list or a particle's wall slots would overflow, the rebuild finds it before
//! anything of that step is committed (`rebuild.walls_near` bounds the walls a particle can
//! touch until the next build) and `rebuild.halt` zeroes every remaining dispatch of the batch,
//! leaving the state as at the start of the failed step (the lists that fitted are rebuilt
//! already, carrying the same histories; an overflowing one is left as it was); the host
//! regrows the table to what was needed and finishes the batch from there. The result is the
//! one a table large enough from the start would give, and no copy of the state is kept for it.

use std::borrow::Cow;

use bytemuck::Pod;
use glam::{DQuat, DVec3};
use wgdem_core::contact::{ContactLaw, HistoryMode};
use wgdem_core::cpu::{MoistureEvent, Simulation, StepStats};
use wgdem_core::runner::Readout;
use wgdem_core::wall::WallShape;
use wgpu::util::DeviceExt;

use crate::context::{GpuError, read_buffer};
use crate::layout::{
    Counters, ForceTorque, PairRecord, Position, Predicted, RadixPass, SimParams, Wall,
};
use crate::shaders::{self, SlotKind};

/// The stages of one step, in order (see [`GpuEngine::profile_stages`]): the rebuild plan
/// (whether this step rebuilds: `integrate` has flagged the particles that moved half the
/// skin), the sort (cell hash, radix sort, reorder, cell ranges), the neighbour lists (build and
/// history carry-over), the contact forces (with the wall reduction) and the integration.
pub const STAGES: [&str; 5] = [
    "rebuild_plan",
    "sort",
    "neighbours",
    "contacts",
    "integrate",
];

/// Index in [`STAGES`] of the stage that brings the neighbour lists up to date.
const NEIGHBOURS_STAGE: usize = 2;

/// Seconds each stage of [`STAGES`] took over the steps of [`GpuEngine::profile_stages`].
#[derive(Debug, Clone, Copy)]
pub struct StageTimes {
    /// Wall-clock, from submit to completion of each stage's own submission.
    pub cpu: [f64; STAGES.len()],
    /// On the GPU, from the beginning to the end of each stage's compute pass (timestamp
    /// queries), where the device has them.
    pub gpu: Option<[f64; STAGES.len()]>,
}

/// Neighbour slots beyond the longest list at the start (or the longest that overflowed) that
/// a table sized from the scene (or regrown) gets: room for contacts to form before the next
/// regrowth.
pub const SLOT_HEADROOM: u32 = 4;

/// Neighbour slots for a new engine on `sim`: the most partners any particle has within the
/// skin (and the interaction range) now, plus [`SLOT_HEADROOM`]. A table sized so fits the
/// packing it starts from; one that has to grow later (a pour that settles) is regrown from
/// the step that needs it, with the same results.
fn initial_slots(sim: &Simulation, skin: f64) -> u32 {
    let p = &sim.particles;
    let pairs = wgdem_core::broadphase::pairs_within(
        &p.position,
        &p.radius,
        skin + sim.interaction_range(),
    );
    let mut count = vec![0u32; p.len()];
    for (i, j) in pairs {
        count[i as usize] += 1;
        count[j as usize] += 1;
    }
    count.into_iter().max().unwrap_or(0) + SLOT_HEADROOM
}

/// Options of the GPU engine.
#[derive(Debug, Clone, Copy)]
pub struct GpuOptions {
    /// Neighbour slots per particle to start with (regrown when a list needs more). 0: sized
    /// from the scene, the most partners any particle has within the skin at the start plus
    /// [`SLOT_HEADROOM`].
    pub slots: u32,
    /// Steps recorded per submit.
    pub batch_steps: u32,
    /// Rebuild the neighbour lists every step instead of when some particle has moved half
    /// the skin (for tests: results must not depend on it beyond rounding).
    pub rebuild_every_step: bool,
    /// Wall slots per particle to start with (walls one particle touches at once; regrown
    /// when a particle touches more).
    pub wall_slots: u32,
    /// Rows of wall slots to start with: only the particles with a wall within their skin
    /// hold a row (regrown when more do). 0: as many as such particles at the start, plus a
    /// quarter.
    pub wall_rows: u32,
    /// Reorder particle data by cell at the first batch after every this many steps (0: never).
    pub reorder_every: u64,
    /// Compile the contact kernels for the scene's contact models only, and without the
    /// partner's material where every particle is of one material (see
    /// [`shaders::Specialization`]); `false` compiles them for every model and material
    /// (same results, slower).
    pub specialize: bool,
    /// Hold the per-particle arrays and neighbour slots as 64-bit words in the per-step
    /// kernels where the device has 64-bit integers (see [`shaders::words64`]); same results.
    /// `false` keeps 32-bit words (for tests of that path, which devices without 64-bit
    /// integers take).
    pub words64: bool,
}

impl Default for GpuOptions {
    fn default() -> Self {
        Self {
            slots: 0,
            batch_steps: 200,
            rebuild_every_step: false,
            wall_slots: 4,
            wall_rows: 0,
            reorder_every: 2000,
            specialize: true,
            words64: true,
        }
    }
}

#[derive(Clone, Copy)]
enum Bind {
    Uniform,
    Read,
    Write,
}

struct Kernel {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

fn make_kernel(
    device: &wgpu::Device,
    label: &str,
    source: &str,
    entry: &str,
    binds: &[Bind],
) -> Kernel {
    let entries: Vec<wgpu::BindGroupLayoutEntry> = binds
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match b {
                    Bind::Uniform => wgpu::BufferBindingType::Uniform,
                    Bind::Read => wgpu::BufferBindingType::Storage { read_only: true },
                    Bind::Write => wgpu::BufferBindingType::Storage { read_only: false },
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(Cow::Owned(source.to_owned())),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    });
    Kernel { pipeline, layout }
}

/// Dispatches `kernel` with `group` over `x` workgroups.
fn direct_dispatch(
    pass: &mut wgpu::ComputePass<'_>,
    kernel: &Kernel,
    group: &wgpu::BindGroup,
    x: u32,
) {
    pass.set_pipeline(&kernel.pipeline);
    pass.set_bind_group(0, group, &[]);
    pass.dispatch_workgroups(x, 1, 1);
}

/// Dispatches `kernel` with `group` over the workgroup counts at argument slot `slot` of
/// `args` (three u32 per slot).
fn indirect_dispatch(
    pass: &mut wgpu::ComputePass<'_>,
    kernel: &Kernel,
    group: &wgpu::BindGroup,
    args: &wgpu::Buffer,
    slot: u64,
) {
    pass.set_pipeline(&kernel.pipeline);
    pass.set_bind_group(0, group, &[]);
    pass.dispatch_workgroups_indirect(args, 12 * slot);
}

fn bind(
    device: &wgpu::Device,
    label: &str,
    kernel: &Kernel,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    crate::context::bind_buffers(device, label, &kernel.layout, buffers)
}

const STATE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

fn init<T: Pod>(device: &wgpu::Device, label: &str, data: &[T]) -> wgpu::Buffer {
    // Bindings may not be empty: pad to one zeroed element.
    let bytes: Cow<[u8]> = if data.is_empty() {
        Cow::Owned(vec![0u8; size_of::<T>().max(16)])
    } else {
        Cow::Borrowed(bytemuck::cast_slice(data))
    };
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: &bytes,
        usage: STATE,
    })
}

fn zeroed(device: &wgpu::Device, label: &str, bytes: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.max(16),
        usage: STATE,
        mapped_at_creation: false,
    })
}

/// Refuses a storage table larger than the device can bind, naming it and its sizing.
fn check_table(device: &wgpu::Device, label: &str, bytes: u64, what: &str) -> Result<(), GpuError> {
    let limits = device.limits();
    let max = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    if bytes > max {
        return Err(GpuError::Unsupported(format!(
            "GPU table {label} needs {bytes} bytes ({what}) but this adapter binds at most {max} bytes per buffer; use fewer particles or walls, or --backend cpu"
        )));
    }
    Ok(())
}

/// Bit 2 of the counters' flags: no table overflowed, the engine broke its own invariant.
fn check_defect(counters: &Counters) -> Result<(), GpuError> {
    if counters.failed & 4 != 0 {
        return Err(GpuError::Readback(
            "a particle touched a wall that was beyond its skin at the last neighbour build, or had no row of wall slots (a defect of the GPU engine; --backend cpu runs the scene)".to_owned(),
        ));
    }
    Ok(())
}

/// Radix passes of a reorder's sort by Morton code (27 bits, `hash.order`): 7 or 8, with the
/// parity of the bucket sort's `radix_passes` (at most 8), so that both sorts end in the same
/// buffer.
fn order_passes(radix_passes: u32) -> u32 {
    8 - radix_passes % 2
}

struct Kernels {
    permute_take: Kernel,
    permute_put: Kernel,
    permute_invert: Kernel,
    rebuild_plan: Kernel,
    rebuild_walls: Kernel,
    rebuild_walls_alloc: Kernel,
    rebuild_halt: Kernel,
    rebuild_commit: Kernel,
    hash: Kernel,
    /// `hash` with the Morton code of the cell as the key, for a reorder.
    hash_order: Kernel,
    radix_count: Kernel,
    radix_scan: Kernel,
    radix_scatter: Kernel,
    ranges_clear: Kernel,
    ranges_mark: Kernel,
    neighbours: Kernel,
    contacts: Kernel,
    /// `contacts` without the wall sums, for steps whose wall forces are not read.
    contacts_only: Kernel,
    reduce_walls: Kernel,
    reduce_stats: Kernel,
    integrate: Kernel,
    walls_advance: Kernel,
    moisture: Kernel,
}

impl Kernels {
    fn new(device: &wgpu::Device, slots: SlotKind, spec: shaders::Specialization) -> Self {
        use Bind::{Read as R, Uniform as U, Write as W};
        let k = |name: &str, label: &str, entry: &str, binds: &[Bind]| {
            make_kernel(
                device,
                label,
                &shaders::kernel_specialized(name, slots, spec),
                entry,
                binds,
            )
        };
        let radix = [U, U, R, R, W, W, W];
        let reduce = [U, R, R, W, W];
        let integrate = [U, W, W, W, W, W, R, W, R, W];
        let rebuild = [U, R, R, W, W, R, W, W, W, W, W, W, W];
        let permute = [U, U, R, R, W, W];
        Self {
            permute_take: k("permute", "dem.permute.take", "take", &permute),
            permute_put: k("permute", "dem.permute.put", "put", &permute),
            permute_invert: k("permute", "dem.permute.invert", "invert", &permute),
            rebuild_plan: k("rebuild", "dem.rebuild.plan", "plan", &rebuild),
            rebuild_walls: k("rebuild", "dem.rebuild.walls_near", "walls_near", &rebuild),
            rebuild_walls_alloc: k(
                "rebuild",
                "dem.rebuild.walls_alloc",
                "walls_alloc",
                &rebuild,
            ),
            rebuild_halt: k("rebuild", "dem.rebuild.halt", "halt", &rebuild),
            rebuild_commit: k("commit", "dem.rebuild.commit", "main", &[U, R, W]),
            hash: k("hash", "dem.hash", "main", &[U, R, W, W, W]),
            hash_order: k("hash", "dem.hash.order", "order", &[U, R, W, W, W]),
            radix_count: k("radix", "dem.radix.count", "count", &radix),
            radix_scan: k("radix", "dem.radix.scan", "scan", &radix),
            radix_scatter: k("radix", "dem.radix.scatter", "scatter", &radix),
            ranges_clear: k("ranges", "dem.ranges.clear", "clear", &[U, R, W]),
            ranges_mark: k("ranges", "dem.ranges.mark", "mark", &[U, R, W]),
            neighbours: k(
                "neighbours",
                "dem.neighbours",
                "main",
                &[U, R, R, R, R, W, W, W, U, R],
            ),
            contacts: k(
                "contact_forces",
                "dem.contact_forces",
                "main",
                &[U, R, R, R, R, R, R, R, W, W, W, W, W, U, W, W, R, R],
            ),
            contacts_only: k(
                "contact_forces",
                "dem.contact_forces.forces_only",
                "forces_only",
                &[U, R, R, R, R, R, R, R, W, W, W, W, W, U, W, W, R, R],
            ),
            reduce_walls: k(
                "wall_reduce",
                "dem.wall_reduce.walls",
                "walls_main",
                &reduce,
            ),
            reduce_stats: k(
                "wall_reduce",
                "dem.wall_reduce.stats",
                "stats_main",
                &reduce,
            ),
            integrate: k("integrate", "dem.integrate", "main", &integrate),
            walls_advance: k("integrate", "dem.integrate.walls", "walls_main", &integrate),
            moisture: k(
                "moisture",
                "dem.moisture",
                "main",
                &[U, R, R, R, R, W, U, U],
            ),
        }
    }
}

struct Buffers {
    params: wgpu::Buffer,
    radix_passes: Vec<wgpu::Buffer>,
    pos: wgpu::Buffer,
    vel: wgpu::Buffer,
    omega: wgpu::Buffer,
    orientation: wgpu::Buffer,
    pred: wgpu::Buffer,
    material: wgpu::Buffer,
    pair_table: wgpu::Buffer,
    walls: wgpu::Buffer,
    /// Force and torque of each particle (written by `contact_forces`, read by `integrate`).
    /// During a reorder, which comes before `contact_forces` in a step, it is the reorder's
    /// scratch: one column block of every particle ([`PERMUTE_BLOCK`] words each).
    ft: wgpu::Buffer,
    /// Contact work per particle (engines whose pairs account it, else 16 unused bytes): x
    /// the elastic energy of its contacts after the last step, y + z the work they have
    /// dissipated since the start (double-single).
    work: wgpu::Buffer,
    stats: wgpu::Buffer,
    /// Each particle's cell, packed in one word (common.wgsl `pack_cell`).
    cells: wgpu::Buffer,
    /// The sort's keys. During a reorder, `keys[0]` holds the old index → new index map.
    keys: [wgpu::Buffer; 2],
    vals: [wgpu::Buffer; 2],
    tile_hist: wgpu::Buffer,
    ranges: wgpu::Buffer,
    /// Partners listed per particle (rewritten in place by `neighbours`).
    counts: wgpu::Buffer,
    /// The neighbour slots (contact history), split by particle so that no binding exceeds
    /// the device's limit.
    chunks: Vec<SlotChunk>,
    built_at: wgpu::Buffer,
    /// Wall points at the last build (double-single), for `rebuild.plan`.
    walls_built: wgpu::Buffer,
    rebuild_state: wgpu::Buffer,
    /// Stable id of the particle at each index (particles are reordered by cell).
    ids: wgpu::Buffer,
    /// Stand-in for bindings a permute entry point does not use.
    dummy: wgpu::Buffer,
    /// The moisture event being applied (`MoistureAction` in moisture.wgsl).
    moisture_action: wgpu::Buffer,
    dispatch_args: wgpu::Buffer,
    /// Rows of `flags[3]` wall slots (wall id and tangential history), one per particle with
    /// a wall within its skin.
    wall_slots: wgpu::Buffer,
    /// Per particle, its row of `wall_slots` or `NO_ROW`.
    wall_row: wgpu::Buffer,
    /// Rows given back, a stack (`WallAlloc` in rebuild.wgsl says how many).
    wall_free: wgpu::Buffer,
    /// `WallAlloc`: the free stack's height, the rows handed out so far, the capacity.
    wall_alloc: wgpu::Buffer,
    /// Per particle, the walls within its skin at the last build (bit per wall).
    wall_mask: wgpu::Buffer,
    wall_partial: wgpu::Buffer,
    wall_out: wgpu::Buffer,
    stats_out: wgpu::Buffer,
    counters: wgpu::Buffer,
}

/// Neighbour slots of the particles `[first, first + count)`.
struct SlotChunk {
    first: u32,
    count: u32,
    /// `Chunk` uniform of the kernels.
    range: wgpu::Buffer,
    /// The slots of particles `first..first + count` (rebuilt in place by `neighbours`).
    slots: wgpu::Buffer,
}

/// The spatial hash of `n` particles has `2^bits` buckets: the smallest power of two ≥ n
/// (at least 2). A dense packing has about one particle per cell, so a bucket holds about one
/// other cell's particles besides its own, which `neighbours` skips by their packed cell (a
/// word per candidate); twice as many buckets would halve those but cost 8 B per particle more.
/// The lists do not depend on it: a cell's particles keep their ascending order in any table.
pub fn hash_table_bits(n: usize) -> u32 {
    n.max(2).next_power_of_two().trailing_zeros()
}

/// The largest storage binding the device accepts.
fn binding_limit(device: &wgpu::Device) -> u64 {
    let limits = device.limits();
    limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size)
}

/// Splits the slot tables of `n` particles with `k` slots each into chunks that fit the
/// device's binding limit; `current` (n × k slots) fills the current tables if given.
fn slot_chunks(
    device: &wgpu::Device,
    n: u32,
    k: u32,
    slot_words: usize,
    current: Option<&[u32]>,
) -> Result<Vec<SlotChunk>, GpuError> {
    let per_particle = k as u64 * 4 * slot_words as u64;
    let fits = binding_limit(device) / per_particle;
    // Chunks start at multiples of the workgroup size (contact_forces indexes its per-group
    // wall partials by chunk start / 64), unless one chunk holds everything.
    let per_chunk = if fits >= n as u64 {
        n
    } else {
        (fits - fits % 64) as u32
    };
    if per_chunk == 0 {
        return Err(GpuError::Unsupported(format!(
            "GPU table dem.contact_history: {k} neighbour slots of 64 particles ({} bytes) exceed this adapter's binding limit of {} bytes",
            64 * per_particle,
            binding_limit(device)
        )));
    }
    Ok((0..n.div_ceil(per_chunk))
        .map(|c| {
            let first = c * per_chunk;
            let count = per_chunk.min(n - first);
            let bytes = count as u64 * per_particle;
            let range = (first as usize * k as usize * slot_words)
                ..((first + count) as usize * k as usize * slot_words);
            SlotChunk {
                first,
                count,
                range: device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("dem.contact_history.chunk"),
                    contents: bytemuck::cast_slice(&[first, count, 0, 0]),
                    usage: wgpu::BufferUsages::UNIFORM,
                }),
                slots: match current {
                    Some(all) => init(device, "dem.contact_history", &all[range]),
                    None => zeroed(device, "dem.contact_history", bytes),
                },
            }
        })
        .collect())
}

/// u32 words per particle of the reorder's scratch: each array moves through it a column block
/// of this many words at a time (`BLOCK` in permute.wgsl). The scratch is the force and torque
/// array, whose 8 words per particle no kernel reads between a reorder and the
/// `contact_forces` that rewrites them.
const PERMUTE_BLOCK: u32 = 8;
const _: () = assert!(PERMUTE_BLOCK as usize * 4 == FORCE_TORQUE_BYTES as usize);

/// Bytes per particle of the force and torque array (`ForceTorqueWords` in common.wgsl).
const FORCE_TORQUE_BYTES: u64 = 32;

/// The top bit of a neighbour slot's partner word: set where the slot's particle is the pair's
/// body A (`A_SIDE` in common.wgsl); the low 31 bits are the partner's index.
const A_SIDE: u32 = 0x8000_0000;

/// u32 words per wall slot: a neighbour slot, then the low part of its tangential history
/// (`WallSlot` in common.wgsl).
fn wall_words(slot_words: usize) -> usize {
    slot_words + 4
}

fn uniform_words(device: &wgpu::Device, label: &str, words: &[u32]) -> wgpu::Buffer {
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::cast_slice(words),
        usage: wgpu::BufferUsages::UNIFORM,
    })
}

/// `count` wall slots that hold no contact (partner `NO_WALL` in common.wgsl, word 3), as u32
/// words.
fn empty_wall_slots(count: usize, wall_words: usize) -> Vec<u32> {
    let mut words = vec![0u32; count * wall_words];
    for slot in words.chunks_mut(wall_words) {
        slot[3] = u32::MAX;
    }
    words
}

/// The contact-work buffer of a new engine: zeros per particle where `wide` (the pairs account
/// work), the work `sim` has already dissipated carried by the first particle; otherwise 16
/// unused bytes.
fn initial_work(sim: &Simulation, wide: bool) -> Vec<[f32; 4]> {
    if !wide {
        return vec![[0.0; 4]];
    }
    let mut work = vec![[0.0f32; 4]; sim.particles.len().max(1)];
    let (hi, lo) = split(sim.work.dissipated);
    work[0] = [0.0, hi, lo, 0.0];
    work
}

/// Slots of the indirect dispatch arguments (`plan` in rebuild.wgsl writes them each step).
#[derive(Debug, Clone, Copy)]
enum Args {
    /// Rebuild kernels, zero-sized unless a rebuild is due: per particle, per radix tile, one
    /// group, per hash bucket, per particle of slot chunk c.
    RebuildParticles,
    RebuildTiles,
    RebuildOne,
    RebuildBuckets,
    RebuildChunk(usize),
    /// Every other kernel of a step, zero-sized once a table has overflowed: per particle,
    /// one group, one group per wall, per particle of slot chunk c.
    Particles,
    One,
    Walls,
    Chunk(usize),
}

impl Args {
    /// Index of the argument triple with `chunks` slot chunks.
    fn slot(self, chunks: usize) -> u64 {
        (match self {
            Args::RebuildParticles => 0,
            Args::RebuildTiles => 1,
            Args::RebuildOne => 2,
            Args::RebuildBuckets => 3,
            Args::RebuildChunk(c) => 4 + c,
            Args::Particles => 4 + chunks,
            Args::One => 5 + chunks,
            Args::Walls => 6 + chunks,
            Args::Chunk(c) => 7 + chunks + c,
        }) as u64
    }
}

/// Indirect dispatch arguments of a step (written by `rebuild.plan`, zeroed by `rebuild.halt`;
/// see [`Args`]).
fn dispatch_args(device: &wgpu::Device, chunks: usize) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("dem.rebuild.dispatch_args"),
        size: (7 + 2 * chunks as u64) * 12,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
        mapped_at_creation: false,
    })
}

/// Bind groups of a reorder: one per permuted array, one per slot chunk, one per
/// (destination, source) pair of chunks.
struct PermuteGroups {
    invert: wgpu::BindGroup,
    /// Every column block of every per-particle array and of the neighbour slots.
    moves: Vec<BlockMove>,
}

/// One column block of one array through the reorder's scratch, a bind group per range of
/// particles the array is stored in (all of them, or each slot chunk) with that range's
/// dispatch size: `take` from every range (over every new index), then `put` into every range.
struct BlockMove {
    ranges: Vec<(wgpu::BindGroup, Args)>,
}

struct BindGroups {
    permute: PermuteGroups,
    rebuild: wgpu::BindGroup,
    /// `rebuild` with a stand-in for the dispatch arguments, for `rebuild.walls_near`, which
    /// is itself dispatched from them.
    rebuild_walls: wgpu::BindGroup,
    hash: wgpu::BindGroup,
    radix: Vec<wgpu::BindGroup>,
    ranges: wgpu::BindGroup,
    /// One per slot chunk.
    neighbours: Vec<wgpu::BindGroup>,
    commit: wgpu::BindGroup,
    /// One per slot chunk.
    contacts: Vec<wgpu::BindGroup>,
    reduce: wgpu::BindGroup,
    integrate: wgpu::BindGroup,
    /// One per slot chunk.
    moisture: Vec<wgpu::BindGroup>,
}

/// Batches in flight at once: the host reads one batch's results while the next one runs.
const IN_FLIGHT: usize = 2;

/// What the host learns at the end of each batch, one batch behind the GPU.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WallReadout {
    /// Steps taken at the end of the batch.
    pub steps: u64,
    /// Simulated time at the end of the batch (s).
    pub time: f64,
    /// Force (N) and torque (N·m) on each wall during the batch's last step.
    pub walls: Vec<(DVec3, DVec3)>,
    /// Contact counts of the batch's last step.
    pub stats: StepStats,
}

/// Wall velocities the host sets between batches (see [`GpuEngine::run_streaming`]).
pub struct WallControl<'a> {
    queue: &'a wgpu::Queue,
    walls: &'a wgpu::Buffer,
    velocities: &'a mut Vec<DVec3>,
}

impl WallControl<'_> {
    /// Sets wall `wall`'s velocity (m/s) from the next submitted batch on.
    pub fn set_velocity(&mut self, wall: usize, velocity: DVec3) {
        write_wall_velocity(self.queue, self.walls, wall, velocity);
        if let Some(v) = self.velocities.get_mut(wall) {
            *v = velocity;
        }
    }
}

fn write_wall_velocity(queue: &wgpu::Queue, walls: &wgpu::Buffer, wall: usize, velocity: DVec3) {
    let offset = wall * size_of::<Wall>() + std::mem::offset_of!(Wall, velocity);
    queue.write_buffer(walls, offset as u64, bytemuck::bytes_of(&v4(velocity)));
}

/// A submitted batch whose results have not been read yet.
struct InFlight {
    /// Steps before the batch.
    start_steps: u64,
    /// The reorder schedule after the batch was recorded (a reorder it began is kept when
    /// it is finished after an overflow).
    next_reorder_after: u64,
    /// Moisture events applied before the batch began (applied again if it stops in its
    /// first step).
    events_before: usize,
    /// Wall velocities the batch was submitted with (set again to finish it after an
    /// overflow: the host may have steered the walls for later batches meanwhile).
    velocities: Vec<DVec3>,
    steps: u32,
    /// Index into the staging ring.
    slot: usize,
    submission: wgpu::SubmissionIndex,
    mapped: std::sync::mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>,
}

/// Results copied out of a batch: counters, then wall forces, then contact counts.
struct Staging {
    buffer: wgpu::Buffer,
    walls_offset: u64,
    stats_offset: u64,
}

/// The DEM engine on a wgpu device.
pub struct GpuEngine {
    device: wgpu::Device,
    queue: wgpu::Queue,
    kernels: Kernels,
    buffers: Buffers,
    groups: BindGroups,
    params: SimParams,
    radix_passes: u32,
    batch_steps: u32,
    last: WallReadout,
    staging: Vec<Staging>,
    /// Wall velocities as last written (m/s).
    wall_velocity: Vec<DVec3>,
    /// The step at which the GPU counters were last cleared (they count steps begun).
    counted_from: u64,
    /// Steps taken.
    pub steps: u64,
    /// Simulated time (s).
    pub time: f64,
    /// Times the neighbour slots were regrown after an overflow.
    pub regrowths: u32,
    start_steps: u64,
    start_time: f64,
    dt: f64,
    reorder_every: u64,
    next_reorder: u64,
    options: GpuOptions,
    /// u32 words per contact slot: 4, or 8 when some pair uses the Kuhn or hill model.
    slot_words: usize,
    slot_kind: SlotKind,
    /// What the contact kernels are compiled for.
    spec: shaders::Specialization,
    /// Rows of wall slots the wall table holds.
    wall_rows: u32,
    /// The scene's moisture events in time order, and how many have been applied.
    moisture_events: Vec<MoistureEvent>,
    events_applied: usize,
}

/// Host-side counters and the state buffers of an engine, bit for bit (a checkpoint).
#[derive(serde::Serialize, serde::Deserialize)]
struct EngineSnapshot {
    slots: u32,
    wall_slots: u32,
    wall_rows: u32,
    steps: u64,
    time: f64,
    start_steps: u64,
    start_time: f64,
    next_reorder: u64,
    last_walls: Vec<(DVec3, DVec3)>,
    last_stats: StepStats,
    events_applied: usize,
    buffers: Vec<Vec<u8>>,
}

fn split(x: f64) -> (f32, f32) {
    let hi = x as f32;
    (hi, (x - hi as f64) as f32)
}

fn split3(x: DVec3) -> ([f32; 4], [f32; 4]) {
    let (a, b, c) = (split(x.x), split(x.y), split(x.z));
    ([a.0, b.0, c.0, 0.0], [a.1, b.1, c.1, 0.0])
}

fn v4(x: DVec3) -> [f32; 4] {
    [x.x as f32, x.y as f32, x.z as f32, 0.0]
}

impl GpuEngine {
    /// Uploads `sim` (at the start of a run: contact history begins empty) to `device`.
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        sim: &Simulation,
        options: GpuOptions,
    ) -> Result<Self, GpuError> {
        let p = &sim.particles;
        let n = p.len();
        if n == 0 {
            return Err(GpuError::Unsupported(
                "the GPU engine needs at least one particle; use --backend cpu for a scene without particles".to_owned(),
            ));
        }
        let limit = device.limits().max_compute_workgroups_per_dimension as usize * 64;
        if n > limit {
            return Err(GpuError::Unsupported(format!(
                "{n} particles exceed this engine's one-dimensional dispatch limit of {limit}"
            )));
        }
        if n as u64 >= u64::from(A_SIDE) {
            return Err(GpuError::Unsupported(format!(
                "the GPU engine handles fewer than 2^31 particles (a neighbour slot keeps its partner's index in 31 bits); this scene has {n}"
            )));
        }
        let n_walls = sim.walls.len() as u32;
        if n_walls > shaders::MAX_WALLS {
            return Err(GpuError::Unsupported(format!(
                "the GPU engine handles at most {} walls; this scene has {n_walls} (use --backend cpu)",
                shaders::MAX_WALLS
            )));
        }
        let slot_kind = slot_kind_for(sim)?;
        let slot_words = slot_kind.words();
        // Slots of 8 words and more belong to engines whose pairs may account their work.
        let wide = slot_words >= 8;
        let table_bits = hash_table_bits(n);
        // The CPU reference's skin: 10 % of the smallest diameter.
        let r_min = p.radius.iter().copied().fold(f64::INFINITY, f64::min);
        let skin = wgdem_core::cpu::DEFAULT_SKIN_FRACTION * 2.0 * r_min;
        let n_tiles = (n as u32).div_ceil(128);
        let params = SimParams {
            n: n as u32,
            slots: match options.slots {
                0 => initial_slots(sim, skin),
                k => k,
            },
            n_walls,
            n_materials: sim.n_materials() as u32,
            table_bits,
            law: match sim.model.law {
                ContactLaw::Hooke => 0,
                ContactLaw::Hertz => 1,
            },
            history: match sim.model.history {
                HistoryMode::True => 0,
                HistoryMode::Pseudo => 1,
                HistoryMode::None => 2,
            },
            n_tiles,
            dt: sim.dt as f32,
            cell_size: (2.0 * p.max_radius() + skin + sim.interaction_range()) as f32
                * (1.0 + 1e-6),
            skin: skin as f32,
            one: 1.0,
            gravity: v4(sim.gravity),
            flags: [u32::from(options.rebuild_every_step), 0, 0, 0], // chunks set below
            extra: [
                sim.local_damping as f32,
                sim.interaction_range() as f32,
                0.0,
                0.0,
            ],
        };

        let positions: Vec<Position> = (0..n)
            .map(|i| {
                let (mut hi, mut lo) = split3(p.position[i]);
                hi[3] = p.radius[i] as f32;
                lo[3] = p.mass[i] as f32;
                Position { hi, lo }
            })
            .collect();
        // The spare w words of the velocities carry a copy of the angular velocity (x in
        // `vel.w`, y and z in the predicted velocities' w), so that a pair loads its
        // partner's spin with its velocities (common.wgsl `spin_of`).
        let vel: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                let mut v = v4(p.velocity[i]);
                v[3] = p.angular_velocity[i].x as f32;
                v
            })
            .collect();
        let omega: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                let mut w = v4(p.angular_velocity[i]);
                w[3] = if p.spin_fixed[i] {
                    0.0
                } else {
                    (1.0 / p.inertia[i]) as f32
                };
                w
            })
            .collect();
        let orientation: Vec<[f32; 4]> = p
            .orientation
            .iter()
            .map(|q| [q.x as f32, q.y as f32, q.z as f32, q.w as f32])
            .collect();
        let pred: Vec<Predicted> = (0..n)
            .map(|i| {
                let w = v4(p.angular_velocity[i]);
                let mut v = vel[i];
                v[3] = w[1];
                Predicted {
                    v,
                    w: [w[0], w[1], w[2], w[2]],
                }
            })
            .collect();
        let material: Vec<u32> = p.material.iter().map(|&m| m as u32).collect();
        let pair_table = pair_table(sim);
        let walls: Vec<Wall> = sim.walls.iter().map(gpu_wall).collect();

        let radix_passes = table_bits.div_ceil(4);
        let nw = n_walls.max(1) as u64;
        let table = 1u64 << table_bits;
        let n64 = n as u64;
        let chunks = slot_chunks(device, n as u32, params.slots, slot_words, None)?;
        let mut params = params;
        params.flags[1] = chunks[0].count;
        params.flags[2] = chunks.len() as u32;
        // A particle touches few walls at once (regrown on overflow).
        params.flags[3] = options.wall_slots.clamp(1, n_walls.max(1));
        // Only the particles near a wall hold wall slots (regrown when more are).
        let wall_rows = match options.wall_rows {
            0 => {
                let near = (0..n)
                    .filter(|&i| {
                        sim.walls
                            .iter()
                            .any(|w| w.contact(p.position[i], p.radius[i] + skin).is_some())
                    })
                    .count();
                (near + near / 4 + 64).min(n.max(1))
            }
            rows => rows as usize,
        }
        .max(1) as u32;
        for (label, bytes, what) in [
            (
                "dem.wall_partial",
                nw * n64.div_ceil(64) * 32,
                format!("{} workgroups × {n_walls} walls × 32 B", n64.div_ceil(64)),
            ),
            (
                "dem.wall_history",
                wall_rows as u64 * params.flags[3] as u64 * 4 * wall_words(slot_words) as u64,
                format!(
                    "{wall_rows} rows (particles near a wall) × {} wall slots × {} B",
                    params.flags[3],
                    4 * wall_words(slot_words)
                ),
            ),
            (
                "dem.cell_ranges",
                table * 8,
                format!("2^{table_bits} hash buckets × 8 B"),
            ),
            ("dem.position", n64 * 32, format!("{n} particles × 32 B")),
        ] {
            check_table(device, label, bytes, &what)?;
        }
        let buffers = Buffers {
            params: device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("dem.params"),
                contents: bytemuck::bytes_of(&params),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            }),
            radix_passes: (0..order_passes(radix_passes))
                .map(|k| {
                    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("dem.radix.pass"),
                        contents: bytemuck::bytes_of(&RadixPass {
                            shift: 4 * k,
                            pad: [0; 3],
                        }),
                        usage: wgpu::BufferUsages::UNIFORM,
                    })
                })
                .collect(),
            pos: init(device, "dem.position", &positions),
            vel: init(device, "dem.velocity", &vel),
            omega: init(device, "dem.angular_velocity", &omega),
            orientation: init(device, "dem.orientation", &orientation),
            pred: init(device, "dem.predicted_velocity", &pred),
            material: init(device, "dem.material", &material),
            pair_table: init(device, "dem.pair_table", &pair_table),
            walls: init(device, "dem.walls", &walls),
            ft: zeroed(device, "dem.force_torque", n as u64 * FORCE_TORQUE_BYTES),
            work: init(device, "dem.contact_work", &initial_work(sim, wide)),
            // Contact counts per workgroup of `contact_forces` (summed there).
            stats: zeroed(device, "dem.contact_stats", n64.div_ceil(64) * 16),
            cells: zeroed(device, "dem.cells", n as u64 * 4),
            keys: [
                zeroed(device, "dem.keys.a", n as u64 * 4),
                zeroed(device, "dem.keys.b", n as u64 * 4),
            ],
            vals: [
                zeroed(device, "dem.vals.a", n as u64 * 4),
                zeroed(device, "dem.vals.b", n as u64 * 4),
            ],
            tile_hist: zeroed(device, "dem.radix.tile_hist", 16 * n_tiles as u64 * 4),
            ranges: zeroed(device, "dem.cell_ranges", table * 8),
            counts: zeroed(device, "dem.neighbour_count", n as u64 * 4),
            dispatch_args: dispatch_args(device, chunks.len()),
            chunks,
            built_at: zeroed(device, "dem.built_at", n as u64 * 16),
            walls_built: init(
                device,
                "dem.walls_built",
                &walls
                    .iter()
                    .flat_map(|w| [w.point_hi, w.point_lo])
                    .chain(std::iter::once([0.0f32; 4]))
                    .collect::<Vec<_>>(),
            ),
            ids: init(
                device,
                "dem.stable_id",
                &(0..n as u32).collect::<Vec<u32>>(),
            ),
            dummy: zeroed(device, "dem.permute.unused", 16),
            moisture_action: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("dem.moisture.action"),
                size: 16,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            // The flag starts set: the first step builds the lists.
            rebuild_state: init(device, "dem.rebuild_state", &[1u32, 0, 0, 0]),

            wall_slots: init(
                device,
                "dem.wall_history",
                &empty_wall_slots(
                    wall_rows as usize * params.flags[3] as usize,
                    wall_words(slot_words),
                ),
            ),
            wall_row: init(device, "dem.wall_row", &vec![u32::MAX; n.max(1)]),
            wall_free: zeroed(device, "dem.wall_free", wall_rows.max(1) as u64 * 4),
            wall_alloc: init(device, "dem.wall_alloc", &[0u32, 0, wall_rows, 0]),
            wall_mask: zeroed(device, "dem.wall_mask", n as u64 * 4),
            wall_partial: zeroed(
                device,
                "dem.wall_partial",
                nw * (n as u64).div_ceil(64) * 32,
            ),
            wall_out: zeroed(device, "dem.wall_force", nw * 32),
            stats_out: zeroed(device, "dem.contact_stats.total", 16),
            counters: zeroed(device, "dem.counters", 16),
        };
        // The list build's private arrays are sized for the table's slots in either case.
        let words64 = options.words64 && device.features().contains(wgpu::Features::SHADER_INT64);
        let spec = if options.specialize {
            shaders::Specialization {
                models: model_mask(&pair_table),
                slots: params.slots,
                words64,
                one_material: material
                    .first()
                    .copied()
                    .filter(|&m0| material.iter().all(|&m| m == m0)),
            }
        } else {
            shaders::Specialization {
                slots: params.slots,
                words64,
                ..shaders::Specialization::ANY
            }
        };
        let kernels = Kernels::new(device, slot_kind, spec);
        let groups = Self::bind_groups(
            device,
            &kernels,
            &buffers,
            radix_passes,
            params.n,
            params.slots * slot_words as u32,
        );
        Ok(Self {
            device: device.clone(),
            queue: queue.clone(),
            kernels,
            buffers,
            groups,
            params,
            radix_passes,
            batch_steps: options.batch_steps.max(1),
            last: WallReadout::default(),
            staging: Vec::new(),
            wall_velocity: sim.walls.iter().map(|w| w.velocity).collect(),
            counted_from: sim.steps,
            steps: sim.steps,
            time: sim.time,
            regrowths: 0,
            start_steps: sim.steps,
            start_time: sim.time,
            dt: sim.dt,
            reorder_every: options.reorder_every,
            // The first reorder comes after `reorder_every` steps: the initial order is the
            // scene's, and the lists are empty until the first build.
            next_reorder: sim.steps + options.reorder_every.max(1),
            options,
            slot_words,
            slot_kind,
            spec,
            wall_rows,
            moisture_events: sim.moisture_events().0.to_vec(),
            events_applied: sim.moisture_events().1,
        })
    }

    /// Reorders the particle data by cell (Morton order) at the next batch, and every
    /// `reorder_every` steps from there. A scene's own order can be anything (a lattice, a
    /// generator's), and the first scheduled reorder comes `reorder_every` steps after the start;
    /// `wgdem bench` calls this so that it times the order a long run has. Does nothing when
    /// `reorder_every` is 0.
    pub fn reorder_next_batch(&mut self) {
        self.next_reorder = self.steps;
    }

    /// Steps recorded per submit; also the interval at which `run_streaming` reports.
    pub fn set_batch_steps(&mut self, steps: u32) {
        self.batch_steps = steps.max(1);
        self.options.batch_steps = self.batch_steps;
    }

    /// Uploads the walls of `sim` (geometry, velocity), e.g. a plate the host moved.
    pub fn update_walls(&mut self, sim: &Simulation) {
        let walls: Vec<Wall> = sim.walls.iter().map(gpu_wall).collect();
        self.wall_velocity = sim.walls.iter().map(|w| w.velocity).collect();
        if !walls.is_empty() {
            self.queue
                .write_buffer(&self.buffers.walls, 0, bytemuck::cast_slice(&walls));
        }
    }

    /// Uploads the material-pair table of `sim` (contact history is kept). The contact kernels
    /// are compiled for the models the pairs use (see [`shaders::Specialization`]): a table
    /// that brings in another model recompiles them; one that needs another slot layout (wider
    /// history) is refused.
    pub fn update_pair_table(&mut self, sim: &Simulation) -> Result<(), GpuError> {
        if !self.slot_kind.holds(slot_kind_for(sim)?) {
            return Err(GpuError::Unsupported(
                "the new material-pair table uses a contact model whose history does not fit this engine's slots; start a new engine for it".to_owned(),
            ));
        }
        let table = pair_table(sim);
        let models = model_mask(&table);
        self.queue
            .write_buffer(&self.buffers.pair_table, 0, bytemuck::cast_slice(&table));
        if models & !self.spec.models != 0 {
            self.spec.models |= models;
            self.kernels = Kernels::new(&self.device, self.slot_kind, self.spec);
            self.rebind();
        }
        Ok(())
    }

    /// A new engine on the same device for `sim`, with this one's options (history empty).
    pub fn rebuild(&self, sim: &Simulation) -> Result<Self, GpuError> {
        Self::new(&self.device, &self.queue, sim, self.options)
    }

    /// Everything a batch changes, bit for bit, with the host's counters: restoring it into an
    /// engine built for the same scene continues exactly as this one would.
    pub fn save_state(&self) -> Result<Vec<u8>, GpuError> {
        let mut buffers = Vec::new();
        for b in self.mutable() {
            buffers.push(self.read::<u8>(b, b.size() as usize)?);
        }
        let snapshot = EngineSnapshot {
            slots: self.params.slots,
            wall_slots: self.params.flags[3],
            wall_rows: self.wall_rows,
            steps: self.steps,
            time: self.time,
            start_steps: self.start_steps,
            start_time: self.start_time,
            next_reorder: self.next_reorder,
            last_walls: self.last.walls.clone(),
            last_stats: self.last.stats,
            events_applied: self.events_applied,
            buffers,
        };
        postcard::to_allocvec(&snapshot).map_err(|e| GpuError::Readback(e.to_string()))
    }

    /// An engine for `sim` continuing from [`GpuEngine::save_state`] output (the tables sized
    /// as they were when it was saved).
    pub fn restore_state(&self, sim: &Simulation, state: &[u8]) -> Result<Self, GpuError> {
        let bad = |what: String| GpuError::Unsupported(format!("checkpoint does not fit: {what}"));
        let snap: EngineSnapshot = postcard::from_bytes(state).map_err(|e| bad(e.to_string()))?;
        let options = GpuOptions {
            slots: snap.slots,
            wall_slots: snap.wall_slots,
            wall_rows: snap.wall_rows,
            ..self.options
        };
        let mut engine = Self::new(&self.device, &self.queue, sim, options)?;
        let targets = engine.mutable();
        if targets.len() != snap.buffers.len() {
            return Err(bad(format!(
                "{} state buffers saved, {} expected",
                snap.buffers.len(),
                targets.len()
            )));
        }
        for (k, (b, bytes)) in targets.iter().zip(&snap.buffers).enumerate() {
            if b.size() != bytes.len() as u64 {
                return Err(bad(format!(
                    "state buffer {k} holds {} bytes, {} saved",
                    b.size(),
                    bytes.len()
                )));
            }
            engine.queue.write_buffer(b, 0, bytes);
        }
        engine.steps = snap.steps;
        engine.time = snap.time;
        engine.start_steps = snap.start_steps;
        engine.start_time = snap.start_time;
        engine.next_reorder = snap.next_reorder;
        engine.events_applied = snap.events_applied;
        engine.last = WallReadout {
            steps: snap.steps,
            time: snap.time,
            walls: snap.last_walls,
            stats: snap.last_stats,
        };
        Ok(engine)
    }

    fn bind_groups(
        device: &wgpu::Device,
        k: &Kernels,
        b: &Buffers,
        passes: u32,
        n: u32,
        slot_row: u32,
    ) -> BindGroups {
        let sorted = (passes % 2) as usize;
        let permute = {
            let group = |info: &wgpu::Buffer,
                         order: &wgpu::Buffer,
                         new_index: &wgpu::Buffer,
                         data: &wgpu::Buffer| {
                bind(
                    device,
                    "dem.permute",
                    &k.permute_take,
                    &[&b.params, info, order, new_index, data, &b.ft],
                )
            };
            // `Permute` in permute.wgsl.
            let info = |words: [u32; 8]| uniform_words(device, "dem.permute.info", &words);
            let one = info([1, 0, 0, 0, 0, n, 0, 0]);
            let mut arrays: Vec<(&wgpu::Buffer, u32)> = vec![
                (&b.pos, 8),
                (&b.vel, 4),
                (&b.omega, 4),
                (&b.orientation, 4),
                (&b.pred, 8),
                (&b.material, 1),
                (&b.ids, 1),
                (&b.counts, 1),
                (&b.cells, 1),
                (&b.wall_row, 1),
                // A particle's wall slots sit at its walls' ranks in its mask, which the next
                // build compares with the new one.
                (&b.wall_mask, 1),
            ];
            // Per-particle contact work, where the engine accounts it.
            if b.work.size() >= b.ft.size() / 2 {
                arrays.push((&b.work, 4));
            }
            let mut moves: Vec<BlockMove> = Vec::new();
            for (data, stride) in arrays {
                for block in (0..stride).step_by(PERMUTE_BLOCK as usize) {
                    let words = info([stride, block, 0, 0, 0, n, 0, 0]);
                    moves.push(BlockMove {
                        ranges: vec![(
                            group(&words, &b.vals[sorted], &b.keys[0], data),
                            Args::Particles,
                        )],
                    });
                }
            }
            // Neighbour slots: a block gathered from every chunk, then written back into
            // every chunk, partners remapped.
            for block in (0..slot_row).step_by(PERMUTE_BLOCK as usize) {
                moves.push(BlockMove {
                    ranges: b
                        .chunks
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            let words = info([slot_row, block, 1, 0, c.first, c.count, 0, 0]);
                            (
                                group(&words, &b.vals[sorted], &b.keys[0], &c.slots),
                                Args::Chunk(i),
                            )
                        })
                        .collect(),
                });
            }
            PermuteGroups {
                invert: group(&one, &b.vals[sorted], &b.dummy, &b.keys[0]),
                moves,
            }
        };
        let neighbours = b
            .chunks
            .iter()
            .map(|c| {
                bind(
                    device,
                    "dem.neighbours",
                    &k.neighbours,
                    &[
                        &b.params,
                        &b.pos,
                        &b.cells,
                        &b.vals[sorted],
                        &b.ranges,
                        &b.counts,
                        &c.slots,
                        &b.counters,
                        &c.range,
                        &b.ids,
                    ],
                )
            })
            .collect();
        let contacts = b
            .chunks
            .iter()
            .map(|c| {
                bind(
                    device,
                    "dem.contact_forces",
                    &k.contacts,
                    &[
                        &b.params,
                        &b.pos,
                        &b.vel,
                        &b.pred,
                        &b.material,
                        &b.pair_table,
                        &b.walls,
                        &b.counts,
                        &c.slots,
                        &b.wall_slots,
                        &b.wall_partial,
                        &b.ft,
                        &b.stats,
                        &c.range,
                        &b.counters,
                        &b.work,
                        &b.wall_mask,
                        &b.wall_row,
                    ],
                )
            })
            .collect();
        let rebuild_group = |args: &wgpu::Buffer| {
            bind(
                device,
                "dem.rebuild",
                &k.rebuild_plan,
                &[
                    &b.params,
                    &b.pos,
                    &b.built_at,
                    &b.rebuild_state,
                    args,
                    &b.walls,
                    &b.walls_built,
                    &b.counters,
                    &b.wall_mask,
                    &b.wall_row,
                    &b.wall_free,
                    &b.wall_alloc,
                    &b.wall_slots,
                ],
            )
        };
        let rebuild = rebuild_group(&b.dispatch_args);
        let rebuild_walls = rebuild_group(&b.dummy);
        let commit = bind(
            device,
            "dem.rebuild.commit",
            &k.rebuild_commit,
            &[&b.params, &b.pos, &b.built_at],
        );
        BindGroups {
            permute,
            rebuild,
            rebuild_walls,
            commit,
            hash: bind(
                device,
                "dem.hash",
                &k.hash,
                &[&b.params, &b.pos, &b.cells, &b.keys[0], &b.vals[0]],
            ),
            radix: (0..order_passes(passes) as usize)
                .map(|p| {
                    let (i, o) = (p % 2, 1 - p % 2);
                    bind(
                        device,
                        "dem.radix",
                        &k.radix_count,
                        &[
                            &b.params,
                            &b.radix_passes[p],
                            &b.keys[i],
                            &b.vals[i],
                            &b.keys[o],
                            &b.vals[o],
                            &b.tile_hist,
                        ],
                    )
                })
                .collect(),
            ranges: bind(
                device,
                "dem.ranges",
                &k.ranges_clear,
                &[&b.params, &b.keys[sorted], &b.ranges],
            ),
            neighbours,
            contacts,
            reduce: bind(
                device,
                "dem.wall_reduce",
                &k.reduce_walls,
                &[
                    &b.params,
                    &b.wall_partial,
                    &b.stats,
                    &b.wall_out,
                    &b.stats_out,
                ],
            ),
            integrate: bind(
                device,
                "dem.integrate",
                &k.integrate,
                &[
                    &b.params,
                    &b.pos,
                    &b.vel,
                    &b.omega,
                    &b.orientation,
                    &b.pred,
                    &b.ft,
                    &b.walls,
                    &b.built_at,
                    &b.rebuild_state,
                ],
            ),
            moisture: b
                .chunks
                .iter()
                .map(|c| {
                    bind(
                        device,
                        "dem.moisture",
                        &k.moisture,
                        &[
                            &b.params,
                            &b.pos,
                            &b.material,
                            &b.pair_table,
                            &b.counts,
                            &c.slots,
                            &c.range,
                            &b.moisture_action,
                        ],
                    )
                })
                .collect(),
        }
    }

    /// Records one time step into `pass`; `reduce` adds the wall-force and contact-count
    /// reduction (needed only where results are read back).
    /// `moisture` applies the action in `moisture_action` to the lists just built (before
    /// the contact forces, as the CPU applies an event at the start of a step).
    fn record_step(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        reduce: bool,
        reorder: bool,
        moisture: bool,
    ) {
        for stage in 0..STAGES.len() {
            self.record_stage(pass, stage, reduce, reorder);
            if moisture && stage == NEIGHBOURS_STAGE {
                for c in 0..self.buffers.chunks.len() {
                    self.indirect(
                        pass,
                        &self.kernels.moisture,
                        &self.groups.moisture[c],
                        Args::Chunk(c),
                    );
                }
            }
        }
    }

    /// Takes the moisture events due at the start of step `step` (Potyondy memo, Table 6) and
    /// writes their combined action for the batch that starts there; false when none is due.
    /// A sequence of events at one instant acts as: make everything dry if any `make_dry`
    /// is among them, then make wet with the largest moisture gap of the `make_wet`s after the
    /// last `make_dry`.
    fn take_due_moisture(&mut self, step: u64) -> bool {
        let (mut dry, mut wet_gap) = (false, None::<f64>);
        while let Some(e) = self.moisture_events.get(self.events_applied).copied() {
            if e.time > self.time_at(step) {
                break;
            }
            if e.wet {
                wet_gap = Some(wet_gap.map_or(e.gap, |g| g.max(e.gap)));
            } else {
                dry = true;
                wet_gap = None;
            }
            self.events_applied += 1;
        }
        if !dry && wet_gap.is_none() {
            return false;
        }
        let action = [
            u32::from(dry),
            u32::from(wet_gap.is_some()),
            (wet_gap.unwrap_or(0.0) as f32).to_bits(),
            0,
        ];
        self.queue.write_buffer(
            &self.buffers.moisture_action,
            0,
            bytemuck::cast_slice(&action),
        );
        true
    }

    /// Records stage `stage` (an index into [`STAGES`]) of one time step into `pass`.
    fn record_stage(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        stage: usize,
        reduce: bool,
        reorder: bool,
    ) {
        let (k, g) = (&self.kernels, &self.groups);
        let chunks = self.buffers.chunks.len();
        match stage {
            0 => direct_dispatch(pass, &k.rebuild_plan, &g.rebuild, 1),
            1 => self.record_sort(pass, reorder),
            NEIGHBOURS_STAGE => {
                for c in 0..chunks {
                    self.indirect(pass, &k.neighbours, &g.neighbours[c], Args::RebuildChunk(c));
                }
                if self.params.n_walls > 0 {
                    self.indirect(
                        pass,
                        &k.rebuild_walls,
                        &g.rebuild_walls,
                        Args::RebuildParticles,
                    );
                    self.indirect(
                        pass,
                        &k.rebuild_walls_alloc,
                        &g.rebuild_walls,
                        Args::RebuildParticles,
                    );
                }
                // Nothing of the step that changes its outcome is committed before this
                // point (the lists that fitted are rebuilt in place, with the same histories;
                // wall rows handed out are only addresses): on an overflow, the rest of the
                // batch is dispatched with zero workgroups, and the step is begun again.
                direct_dispatch(pass, &k.rebuild_halt, &g.rebuild, 1);
                self.indirect(pass, &k.rebuild_commit, &g.commit, Args::RebuildParticles);
            }
            3 => {
                let kernel = if reduce {
                    &k.contacts
                } else {
                    &k.contacts_only
                };
                for c in 0..chunks {
                    self.indirect(pass, kernel, &g.contacts[c], Args::Chunk(c));
                }
                if reduce {
                    if self.params.n_walls > 0 {
                        self.indirect(pass, &k.reduce_walls, &g.reduce, Args::Walls);
                    }
                    self.indirect(pass, &k.reduce_stats, &g.reduce, Args::One);
                }
            }
            _ => {
                self.indirect(pass, &k.integrate, &g.integrate, Args::Particles);
                if self.params.n_walls > 0 {
                    self.indirect(pass, &k.walls_advance, &g.integrate, Args::One);
                }
            }
        }
    }

    /// Dispatches `kernel` over the workgroup counts that `rebuild.plan` wrote for `args`.
    fn indirect(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        kernel: &Kernel,
        group: &wgpu::BindGroup,
        args: Args,
    ) {
        let slot = args.slot(self.buffers.chunks.len());
        indirect_dispatch(pass, kernel, group, &self.buffers.dispatch_args, slot);
    }

    /// The sort stage: cell hash, radix sort, the optional reorder, cell ranges (each a
    /// zero-sized dispatch when no rebuild is due).
    fn record_sort(&self, pass: &mut wgpu::ComputePass<'_>, reorder: bool) {
        let (k, g) = (&self.kernels, &self.groups);
        let sort = |pass: &mut wgpu::ComputePass<'_>, hash: &Kernel, passes: u32| {
            self.indirect(pass, hash, &g.hash, Args::RebuildParticles);
            for p in 0..passes as usize {
                self.indirect(pass, &k.radix_count, &g.radix[p], Args::RebuildTiles);
                self.indirect(pass, &k.radix_scan, &g.radix[p], Args::RebuildOne);
                self.indirect(pass, &k.radix_scatter, &g.radix[p], Args::RebuildTiles);
            }
        };
        if reorder {
            // A rebuild was forced for this step, so these dispatches are full: sort by Morton
            // code and move every particle to its sorted position. (The buckets' own order
            // scatters neighbouring cells over the arrays: a step of the bench's packing took
            // 1.8 times as long on lavapipe in that order as in the lattice's.)
            sort(pass, &k.hash_order, order_passes(self.radix_passes));
            let pg = &g.permute;
            self.indirect(pass, &k.permute_invert, &pg.invert, Args::Particles);
            for block in &pg.moves {
                for (group, _) in &block.ranges {
                    self.indirect(pass, &k.permute_take, group, Args::Particles);
                }
                for (group, args) in &block.ranges {
                    self.indirect(pass, &k.permute_put, group, *args);
                }
            }
        }
        // The bucket sort of the neighbour search, in the new order after a reorder.
        sort(pass, &k.hash, self.radix_passes);
        self.indirect(pass, &k.ranges_clear, &g.ranges, Args::RebuildBuckets);
        self.indirect(pass, &k.ranges_mark, &g.ranges, Args::RebuildParticles);
    }

    /// Advances `steps` steps with each stage of [`STAGES`] in its own submission, waited for,
    /// and returns the seconds each stage took in all: wall-clock (CPU timers around the
    /// submissions: they include the submit and wait overhead that a batched run amortises,
    /// so their sum exceeds a batched run's time) and, where the device has timestamp queries
    /// ([`wgpu::Features::TIMESTAMP_QUERY`]), on the GPU from the start to the end of each
    /// stage's compute pass. The rebuild stages are dispatched with zero workgroups on steps
    /// that need no rebuild, as in a batched run, so their time is the average over rebuild and
    /// non-rebuild steps. For measurements (`wgdem bench`). A step in which a table overflows
    /// commits nothing, as in a batched run: the table is regrown and the step taken again, and
    /// only that second attempt is timed.
    pub fn profile_stages(&mut self, steps: u64) -> Result<StageTimes, GpuError> {
        let mut cpu = [0.0; STAGES.len()];
        let mut gpu = [0.0; STAGES.len()];
        let timer = self
            .device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
            .then(|| {
                // Two per stage; each step's are resolved into its own aligned block and all
                // are read back once at the end.
                let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("dem.profile.timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2 * STAGES.len() as u32,
                });
                let resolved = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("dem.profile.timestamps"),
                    size: steps.max(1) * wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                });
                (set, resolved)
            });
        // Nanoseconds per timestamp tick.
        let period = f64::from(self.queue.get_timestamp_period());
        // CPU seconds per step and stage; a step taken again overwrites its entry (and its
        // block of timestamps).
        let mut cpu_steps = vec![[0.0; STAGES.len()]; steps as usize];
        let start = self.steps;
        let mut done = 0;
        while done < steps {
            self.clear_counters();
            for step in done..steps {
                for stage in 0..STAGES.len() {
                    let t0 = std::time::Instant::now();
                    let mut encoder =
                        self.device
                            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                                label: Some("dem.profile"),
                            });
                    {
                        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                            label: Some(STAGES[stage]),
                            timestamp_writes: timer.as_ref().map(|(set, _)| {
                                wgpu::ComputePassTimestampWrites {
                                    query_set: set,
                                    beginning_of_pass_write_index: Some(2 * stage as u32),
                                    end_of_pass_write_index: Some(2 * stage as u32 + 1),
                                }
                            }),
                        });
                        self.record_stage(&mut pass, stage, false, false);
                    }
                    self.queue.submit([encoder.finish()]);
                    self.device
                        .poll(wgpu::PollType::wait_indefinitely())
                        .map_err(|e| GpuError::Readback(e.to_string()))?;
                    cpu_steps[step as usize][stage] = t0.elapsed().as_secs_f64();
                }
                if let Some((set, resolved)) = &timer {
                    // Outside the timed submissions; queue order keeps the set's reuse safe.
                    let mut encoder =
                        self.device
                            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                                label: Some("dem.profile.resolve"),
                            });
                    let offset = step * wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT;
                    encoder.resolve_query_set(set, 0..2 * STAGES.len() as u32, resolved, offset);
                    self.queue.submit([encoder.finish()]);
                }
            }
            // After an overflow the later steps did nothing (`rebuild.halt`); the counters
            // count the steps begun, the failed one last.
            let counters: Counters = self.read(&self.buffers.counters, 1)?[0];
            if counters.failed == 0 {
                done = steps;
            } else {
                check_defect(&counters)?;
                done += u64::from(counters.steps.saturating_sub(1));
                self.steps = start + done;
                self.regrow_overflowed(&counters)?;
            }
        }
        self.steps = start + steps;
        self.time = self.time_at(self.steps);
        for step in &cpu_steps {
            for (total, t) in cpu.iter_mut().zip(step) {
                *total += t;
            }
        }
        if let Some((_, resolved)) = &timer {
            let block = (wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT / 8) as usize;
            let ticks: Vec<u64> = self.read(resolved, steps as usize * block)?;
            for step_ticks in ticks.chunks(block) {
                for (stage, total) in gpu.iter_mut().enumerate() {
                    let elapsed = step_ticks[2 * stage + 1].saturating_sub(step_ticks[2 * stage]);
                    *total += elapsed as f64 * period * 1e-9;
                }
            }
        }
        Ok(StageTimes {
            cpu,
            gpu: timer.map(|_| gpu),
        })
    }

    /// Advances `steps` steps, in batches of `batch_steps` per submit.
    pub fn run(&mut self, steps: u64) -> Result<(), GpuError> {
        self.run_streaming(steps, |_, _| {})
    }

    /// Advances `steps` steps, calling `on_batch` with each batch's wall forces and contact
    /// counts as they arrive — one batch behind the GPU, which meanwhile runs the next — so
    /// that the host can steer walls (a servo) through [`WallControl`] without stalling the
    /// device. A velocity set there applies from the next batch submitted.
    ///
    /// A batch in which a table overflowed stops on the GPU at the start of the failed step
    /// (`rebuild.halt`), before anything of that step is committed, and is not reported; the
    /// later batches in flight do nothing. The table is regrown and the batch finished from
    /// that step with the wall velocities it was submitted with; the velocities the host set
    /// meanwhile apply from the batch after it, as they would have. The result is the one a
    /// table large enough from the start gives, bit for bit, without a copy of the state.
    pub fn run_streaming(
        &mut self,
        steps: u64,
        mut on_batch: impl FnMut(&WallReadout, &mut WallControl<'_>),
    ) -> Result<(), GpuError> {
        self.ensure_staging();
        self.clear_counters();
        let target = self.steps + steps;
        let mut submitted = self.steps;
        // After an overflow: where the interrupted batch was to end, and the wall velocities
        // the host had set meanwhile for the batches after it.
        let mut finish_at: Option<u64> = None;
        let mut steered: Option<Vec<DVec3>> = None;
        let mut in_flight: std::collections::VecDeque<InFlight> = Default::default();
        let mut free: Vec<usize> = (0..IN_FLIGHT).rev().collect();
        loop {
            while submitted < target && !free.is_empty() {
                let slot = free.pop().unwrap_or_default();
                // A batch ends before the step at which the next moisture event is due, so
                // that the event applies in the first step of a batch.
                let mut n = (target - submitted)
                    .min(self.batch_steps as u64)
                    .min(self.steps_to_next_event(submitted));
                if let Some(end) = finish_at.take() {
                    n = n.min(end - submitted);
                }
                let batch = self.submit_batch(submitted, n as u32, slot);
                in_flight.push_back(batch);
                submitted += n;
                if let Some(velocities) = steered.take() {
                    for (w, &v) in velocities.iter().enumerate() {
                        write_wall_velocity(&self.queue, &self.buffers.walls, w, v);
                    }
                    self.wall_velocity = velocities;
                }
            }
            let Some(batch) = in_flight.pop_front() else {
                return Ok(());
            };
            let readout = self.wait_for(&batch)?;
            free.push(batch.slot);
            match readout {
                Ok(readout) => {
                    self.steps = batch.start_steps + batch.steps as u64;
                    self.time = readout.time;
                    self.last = readout;
                    let mut control = WallControl {
                        queue: &self.queue,
                        walls: &self.buffers.walls,
                        velocities: &mut self.wall_velocity,
                    };
                    on_batch(&self.last, &mut control);
                }
                Err(counters) => {
                    // The later batches found the flag set and did nothing.
                    for later in in_flight.drain(..) {
                        let _ = self.wait_for(&later)?;
                        free.push(later.slot);
                    }
                    let failed_at = self.failed_step(&batch, &counters)?;
                    if failed_at == batch.start_steps {
                        self.events_applied = batch.events_before;
                    }
                    self.next_reorder = batch.next_reorder_after;
                    self.steps = failed_at;
                    self.time = self.time_at(self.steps);
                    for (w, &v) in batch.velocities.iter().enumerate() {
                        write_wall_velocity(&self.queue, &self.buffers.walls, w, v);
                    }
                    steered = Some(std::mem::replace(
                        &mut self.wall_velocity,
                        batch.velocities.clone(),
                    ));
                    self.regrow_overflowed(&counters)?;
                    submitted = self.steps;
                    finish_at = Some(batch.start_steps + batch.steps as u64);
                }
            }
        }
    }

    /// Regrows the tables that overflowed in the step at `self.steps` (`counters.failed`),
    /// which committed nothing, and has that step begin its rebuild again.
    fn regrow_overflowed(&mut self, counters: &Counters) -> Result<(), GpuError> {
        if counters.failed & 1 != 0 {
            self.regrow(counters.max_neighbours)?;
        }
        if counters.failed & 2 != 0 {
            self.regrow_wall_slots(counters.max_wall_contacts)?;
        }
        if counters.failed & 8 != 0 {
            self.regrow_wall_rows()?;
        }
        // The failed step had begun a rebuild; it begins it again.
        self.queue
            .write_buffer(&self.buffers.rebuild_state, 0, bytemuck::bytes_of(&1u32));
        self.clear_counters();
        Ok(())
    }

    /// Clears the GPU counters (overflow flags and steps begun) before the next submission.
    fn clear_counters(&mut self) {
        self.queue.write_buffer(
            &self.buffers.counters,
            0,
            bytemuck::bytes_of(&Counters::default()),
        );
        self.counted_from = self.steps;
    }

    /// The step of `batch` in which a table overflowed: the counters count the steps begun
    /// since they were cleared (modulo 2^32), the failed one last.
    fn failed_step(&self, batch: &InFlight, counters: &Counters) -> Result<u64, GpuError> {
        check_defect(counters)?;
        let before = batch.start_steps.wrapping_sub(self.counted_from) as u32;
        let offset = counters.steps.wrapping_sub(1).wrapping_sub(before);
        if offset >= batch.steps {
            return Err(GpuError::Readback(format!(
                "a table overflowed in a batch of {} steps, but {} steps were counted since step {} (the batch began at step {})",
                batch.steps, counters.steps, self.counted_from, batch.start_steps
            )));
        }
        Ok(batch.start_steps + offset as u64)
    }

    /// Steps from `step` to the first step at whose start the next pending moisture event is
    /// due (at least 1; `u64::MAX` when none is pending).
    fn steps_to_next_event(&self, step: u64) -> u64 {
        let Some(e) = self.moisture_events.get(self.events_applied) else {
            return u64::MAX;
        };
        let mut s = step + 1;
        // The estimate, then the exact first step with time_at(s) ≥ e.time. An event further
        // away than any batch only needs to be known as far.
        let ahead = ((e.time - self.time_at(s)) / self.dt).floor();
        if ahead >= 1e12 {
            return 1_000_000_000_000;
        }
        if ahead > 1.0 {
            s += ahead as u64 - 1;
        }
        while self.time_at(s) < e.time {
            s += 1;
        }
        s - step
    }

    /// Simulated time after `steps` steps (the f64 step of the scene, as the CPU reference).
    fn time_at(&self, steps: u64) -> f64 {
        self.start_time + (steps - self.start_steps) as f64 * self.dt
    }

    /// Creates the staging ring if missing.
    fn ensure_staging(&mut self) {
        if self.staging.len() != IN_FLIGHT {
            let walls_offset = size_of::<Counters>() as u64;
            let stats_offset = walls_offset + self.params.n_walls.max(1) as u64 * 32;
            self.staging = (0..IN_FLIGHT)
                .map(|_| Staging {
                    buffer: self.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("dem.readout_ring"),
                        size: stats_offset + 16,
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    }),
                    walls_offset,
                    stats_offset,
                })
                .collect();
        }
    }

    /// Records and submits one batch: the steps, then copies of the results to the staging
    /// buffer, which it asks to be mapped.
    fn submit_batch(&mut self, start_steps: u64, steps: u32, slot: usize) -> InFlight {
        let events_before = self.events_applied;
        let moisture = self.take_due_moisture(start_steps);
        let reorder = self.reorder_every > 0 && start_steps >= self.next_reorder;
        if reorder {
            self.next_reorder = start_steps + self.reorder_every;
            // Force a rebuild in the batch's first step; the reorder follows its sort.
            self.queue
                .write_buffer(&self.buffers.rebuild_state, 0, bytemuck::bytes_of(&1u32));
        }
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("dem.batch"),
            });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("dem.steps"),
                timestamp_writes: None,
            });
            for s in 0..steps {
                self.record_step(
                    &mut pass,
                    s + 1 == steps,
                    reorder && s == 0,
                    moisture && s == 0,
                );
            }
        }
        let st = &self.staging[slot];
        encoder.copy_buffer_to_buffer(&self.buffers.counters, 0, &st.buffer, 0, 16);
        encoder.copy_buffer_to_buffer(
            &self.buffers.wall_out,
            0,
            &st.buffer,
            st.walls_offset,
            st.stats_offset - st.walls_offset,
        );
        encoder.copy_buffer_to_buffer(&self.buffers.stats_out, 0, &st.buffer, st.stats_offset, 16);
        let submission = self.queue.submit([encoder.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        st.buffer.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        InFlight {
            start_steps,
            next_reorder_after: self.next_reorder,
            events_before,
            velocities: self.wall_velocity.clone(),
            steps,
            slot,
            submission,
            mapped: rx,
        }
    }

    /// Waits for a batch's results; `Err(counters)` when a table overflowed.
    fn wait_for(&self, batch: &InFlight) -> Result<Result<WallReadout, Counters>, GpuError> {
        let readback = |e: String| GpuError::Readback(e);
        loop {
            match batch.mapped.try_recv() {
                Ok(r) => {
                    r.map_err(|e| readback(e.to_string()))?;
                    break;
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => {
                    // Wait for this batch only: the next one keeps the device busy meanwhile.
                    self.device
                        .poll(wgpu::PollType::Wait {
                            submission_index: Some(batch.submission.clone()),
                            timeout: None,
                        })
                        .map_err(|e| readback(e.to_string()))?;
                }
                Err(e) => return Err(readback(e.to_string())),
            }
        }
        let st = &self.staging[batch.slot];
        let result = {
            let view = st
                .buffer
                .get_mapped_range(..)
                .map_err(|e| readback(e.to_string()))?;
            let counters: Counters = bytemuck::pod_read_unaligned(&view[..16]);
            if counters.failed != 0 {
                Err(counters)
            } else {
                let d3 = |a: &[f32]| DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64);
                let walls: Vec<ForceTorque> = bytemuck::pod_collect_to_vec(
                    &view[st.walls_offset as usize
                        ..st.walls_offset as usize + self.params.n_walls as usize * 32],
                );
                let stats: [u32; 4] = bytemuck::pod_read_unaligned(
                    &view[st.stats_offset as usize..st.stats_offset as usize + 16],
                );
                let steps = batch.start_steps + batch.steps as u64;
                Ok(WallReadout {
                    steps,
                    time: self.time_at(steps),
                    walls: walls
                        .iter()
                        .map(|f| (d3(&f.force), d3(&f.torque)))
                        .collect(),
                    stats: StepStats {
                        contacts: stats[0] as usize,
                        wall_contacts: stats[1] as usize,
                        sliding: stats[2] as usize,
                    },
                })
            }
        };
        st.buffer.unmap();
        Ok(result)
    }

    /// Buffers a batch changes: the state a checkpoint holds.
    fn mutable(&self) -> Vec<&wgpu::Buffer> {
        let b = &self.buffers;
        let mut out = vec![
            &b.pos,
            &b.vel,
            &b.omega,
            &b.orientation,
            &b.pred,
            &b.walls,
            &b.wall_slots,
            &b.wall_mask,
            &b.wall_row,
            &b.wall_free,
            &b.wall_alloc,
            &b.counts,
            &b.built_at,
            &b.walls_built,
            &b.rebuild_state,
            &b.ids,
            &b.material,
            &b.work,
        ];
        out.extend(b.chunks.iter().map(|c| &c.slots));
        out
    }

    /// Regrows the neighbour slots to hold `needed` partners per particle and
    /// [`SLOT_HEADROOM`] more, keeping the current lists and their history. Every particle holds
    /// that many slots, so the table grows by what the longest list needs, not by a factor:
    /// the longest list of a packing grows by a few partners at a time, and a factor of 1.5
    /// would turn 17 slots (272 B per particle) into 25.
    fn regrow(&mut self, needed: u32) -> Result<(), GpuError> {
        let old_k = self.params.slots as usize;
        let new_k = (needed as usize + SLOT_HEADROOM as usize).max(old_k + 1);
        let n = self.params.n as usize;
        let counts: Vec<u32> = self.read(&self.buffers.counts, n)?;
        let slots = self.read_slots()?;
        let w = self.slot_words;
        let mut relaid = vec![0u32; n * new_k * w];
        for i in 0..n {
            let c = (counts[i] as usize).min(old_k);
            relaid[i * new_k * w..(i * new_k + c) * w]
                .copy_from_slice(&slots[i * old_k * w..(i * old_k + c) * w]);
        }
        log::info!(
            "neighbour table dem.contact_history: capacity {old_k} per particle, a particle needed {needed}; regrown to {new_k}, the batch continues from the step that needed it"
        );
        self.buffers.chunks = slot_chunks(
            &self.device,
            n as u32,
            new_k as u32,
            self.slot_words,
            Some(&relaid),
        )?;
        self.buffers.dispatch_args = dispatch_args(&self.device, self.buffers.chunks.len());
        self.params.flags[1] = self.buffers.chunks[0].count;
        self.params.flags[2] = self.buffers.chunks.len() as u32;
        self.params.slots = new_k as u32;
        // The list build's private arrays must hold the new lists.
        self.spec.slots = new_k as u32;
        self.kernels = Kernels::new(&self.device, self.slot_kind, self.spec);
        self.tables_resized();
        Ok(())
    }

    fn read<T: Pod>(&self, buffer: &wgpu::Buffer, count: usize) -> Result<Vec<T>, GpuError> {
        read_buffer(&self.device, &self.queue, buffer, count)
    }

    /// The order the particles sit in on the device: the stable id (the scene's index) of
    /// the particle at each position of the per-particle arrays.
    pub fn particle_order(&self) -> Result<Vec<u32>, GpuError> {
        self.read(&self.buffers.ids, self.params.n as usize)
    }

    /// The neighbour lists of the last step as `(i, j)` stable-id entries, each particle's
    /// partners within the skin in list order (a pair appears once from each side). A slot
    /// whose canonical-order bit disagrees with the stable ids is reported as an error.
    pub fn neighbour_lists(&self) -> Result<Vec<(u32, u32)>, GpuError> {
        let n = self.params.n as usize;
        let k = self.params.slots as usize;
        let counts: Vec<u32> = self.read(&self.buffers.counts, n)?;
        let ids = self.particle_order()?;
        let slots = self.read_slots()?;
        let w = self.slot_words;
        let mut lists = Vec::new();
        for i in 0..n {
            let c = (counts[i] as usize).min(k);
            for s in slots[i * k * w..(i * k + c) * w].chunks(w) {
                let j = ids[(s[3] & !A_SIDE) as usize];
                if (s[3] & A_SIDE != 0) != (ids[i] < j) {
                    return Err(GpuError::Readback(format!(
                        "the neighbour slot of particle {} for partner {j} holds the wrong canonical order",
                        ids[i]
                    )));
                }
                lists.push((ids[i], j));
            }
        }
        Ok(lists)
    }

    /// Regrows each row of wall slots to hold `needed` walls at once and one more, keeping
    /// their history where it was (a wall's slot is its rank among the particle's walls within
    /// the skin). One more, not twice as many: every row of the table holds that many slots,
    /// and the walls a particle can have within its skin are few (at most the scene's walls,
    /// which also bounds the number of regrowths).
    fn regrow_wall_slots(&mut self, needed: u32) -> Result<(), GpuError> {
        let rows = self.wall_rows as usize;
        let old = self.params.flags[3] as usize;
        let new = (needed as usize + 1)
            .max(old + 1)
            .min(self.params.n_walls as usize);
        check_table(
            &self.device,
            "dem.wall_history",
            (rows * new * 4 * wall_words(self.slot_words)) as u64,
            &format!(
                "capacity {old} walls per particle was full, a particle had {needed} within its skin; regrowing to {new} × {rows} rows × {} B",
                4 * wall_words(self.slot_words)
            ),
        )?;
        let w = wall_words(self.slot_words);
        let slots: Vec<u32> = self.read(&self.buffers.wall_slots, rows * old * w)?;
        let mut relaid = empty_wall_slots(rows * new, w);
        for r in 0..rows {
            relaid[r * new * w..(r * new + old) * w]
                .copy_from_slice(&slots[r * old * w..(r + 1) * old * w]);
        }
        log::info!(
            "wall table dem.wall_history: capacity {old} per particle, a particle had {needed} walls within its skin; regrown to {new}, the batch continues from the step that needed it"
        );
        self.buffers.wall_slots = init(&self.device, "dem.wall_history", &relaid);
        self.params.flags[3] = new as u32;
        self.tables_resized();
        Ok(())
    }

    /// Regrows the wall table to hold more rows than the `needed` that particles near a wall
    /// asked for, keeping every row, its holder and the free stack.
    fn regrow_wall_rows(&mut self) -> Result<(), GpuError> {
        let old = self.wall_rows as usize;
        let [top, next, _, _]: [u32; 4] = self.read(&self.buffers.wall_alloc, 4)?[..]
            .try_into()
            .map_err(|_| GpuError::Readback("dem.wall_alloc".to_owned()))?;
        let needed = next as usize;
        let new = needed
            .max(old * 3 / 2)
            .max(old + 64)
            .min(self.params.n as usize)
            .max(old + 1);
        let w = wall_words(self.slot_words);
        let ws = self.params.flags[3] as usize;
        check_table(
            &self.device,
            "dem.wall_history",
            (new * ws * 4 * w) as u64,
            &format!(
                "{old} rows of wall slots were full, particles near a wall needed {needed}; regrowing to {new} rows × {ws} wall slots × {} B",
                4 * w
            ),
        )?;
        let mut slots: Vec<u32> = self.read(&self.buffers.wall_slots, old * ws * w)?;
        slots.extend(empty_wall_slots((new - old) * ws, w));
        let mut free: Vec<u32> = self.read(&self.buffers.wall_free, old)?;
        free.resize(new, 0);
        log::info!(
            "wall table dem.wall_history: {old} rows (particles near a wall) were full, {needed} needed; regrown to {new}, the batch continues from the step that needed it"
        );
        self.buffers.wall_slots = init(&self.device, "dem.wall_history", &slots);
        self.buffers.wall_free = init(&self.device, "dem.wall_free", &free);
        // Rows from `old` on were handed out only to the particles that found the table
        // full, which took none: they are unused.
        self.queue.write_buffer(
            &self.buffers.wall_alloc,
            0,
            bytemuck::cast_slice(&[top, old as u32, new as u32, 0]),
        );
        self.wall_rows = new as u32;
        self.tables_resized();
        Ok(())
    }

    /// Mean number of partners listed per particle (within the skin) at the last build.
    pub fn listed_per_particle(&self) -> Result<f64, GpuError> {
        let n = self.params.n as usize;
        let k = u64::from(self.params.slots);
        let counts: Vec<u32> = self.read(&self.buffers.counts, n)?;
        Ok(counts.iter().map(|&c| u64::from(c).min(k)).sum::<u64>() as f64 / n as f64)
    }

    /// Bytes each stage of [`STAGES`] reads and writes per particle and step, counted from the
    /// buffer layouts with every array element a stage touches moved once (no reuse of a
    /// partner's data from cache), for `listed` partners listed and `touching` in contact per
    /// particle. `None` for the rebuild stages (plan: one invocation; sort, neighbours: their
    /// traffic depends on the cell occupancy and on how often a rebuild is due).
    ///
    /// - contacts: the particle's position, predicted velocities (32 each), velocity (16, its
    ///   spin in the w words of these two), list length and material (4 each); per listed
    ///   partner its slot read and written, its position and material (neither material where
    ///   all particles are of one, compiled in); per touching partner also its
    ///   velocity and predicted velocities (48, its spin in their w words); its wall mask (4;
    ///   the few particles near a wall also read their row index and wall slots, not
    ///   counted); force and torque (32) written (the contact counts, one entry per
    ///   workgroup at the last step of a batch, not counted);
    /// - integrate: position, force and torque, velocity, angular velocity, orientation and
    ///   the position at the last build read; position, velocities, orientation, predicted
    ///   velocities written.
    pub fn stage_bytes_per_particle(&self, listed: f64, touching: f64) -> [Option<f64>; 5] {
        let slot = 4.0 * self.slot_words as f64;
        let material = if self.spec.one_material.is_some() {
            0.0
        } else {
            4.0
        };
        let own = 32.0 + 32.0 + 16.0 + 4.0 + material;
        let per_listed = 2.0 * slot + 32.0 + material;
        let per_touching = 32.0 + 16.0;
        let contacts = own + listed * per_listed + touching * per_touching + 4.0 + 32.0;
        let integrate =
            (32.0 + 32.0 + 16.0 + 16.0 + 16.0 + 16.0) + (32.0 + 16.0 + 16.0 + 16.0 + 32.0);
        [None, None, None, Some(contacts), Some(integrate)]
    }

    /// GPU memory held by the engine (bytes): state, tables, scratch and the readback ring.
    pub fn memory_bytes(&self) -> u64 {
        self.memory_breakdown().iter().map(|(_, bytes)| bytes).sum()
    }

    /// [`GpuEngine::memory_bytes`] by group of buffers: particle state, neighbour slots, wall
    /// slots, the spatial hash and sort, and the rest. (The reorder has no scratch of its own:
    /// it borrows the force array and the sort's keys.)
    pub fn memory_breakdown(&self) -> Vec<(&'static str, u64)> {
        let b = &self.buffers;
        let sum = |buffers: &[&wgpu::Buffer]| buffers.iter().map(|b| b.size()).sum::<u64>();
        let slots: Vec<&wgpu::Buffer> = b.chunks.iter().map(|c| &c.slots).collect();
        let mut sort = vec![
            &b.cells,
            &b.keys[0],
            &b.keys[1],
            &b.vals[0],
            &b.vals[1],
            &b.tile_hist,
            &b.ranges,
        ];
        sort.extend(b.radix_passes.iter());
        let mut other = vec![
            &b.params,
            &b.material,
            &b.pair_table,
            &b.walls,
            &b.stats,
            &b.counts,
            &b.built_at,
            &b.walls_built,
            &b.rebuild_state,
            &b.dispatch_args,
            &b.wall_partial,
            &b.wall_out,
            &b.stats_out,
            &b.counters,
            &b.ids,
            &b.dummy,
        ];
        other.extend(b.chunks.iter().map(|c| &c.range));
        other.extend(self.staging.iter().map(|s| &s.buffer));
        vec![
            (
                "particle state",
                sum(&[
                    &b.pos,
                    &b.vel,
                    &b.omega,
                    &b.orientation,
                    &b.pred,
                    &b.ft,
                    &b.work,
                ]),
            ),
            ("neighbour slots", sum(&slots)),
            (
                "wall slots",
                sum(&[
                    &b.wall_slots,
                    &b.wall_mask,
                    &b.wall_row,
                    &b.wall_free,
                    &b.wall_alloc,
                ]),
            ),
            ("hash and sort", sum(&sort)),
            ("other", sum(&other)),
        ]
    }

    /// After a table was regrown: new parameters to the GPU, new bind groups.
    fn tables_resized(&mut self) {
        self.queue
            .write_buffer(&self.buffers.params, 0, bytemuck::bytes_of(&self.params));
        self.rebind();
        self.regrowths += 1;
    }

    /// New bind groups for the current kernels, buffers and table sizes.
    fn rebind(&mut self) {
        self.groups = Self::bind_groups(
            &self.device,
            &self.kernels,
            &self.buffers,
            self.radix_passes,
            self.params.n,
            self.params.slots * self.slot_words as u32,
        );
    }

    /// Wall slots per particle.
    pub fn wall_slots(&self) -> u32 {
        self.params.flags[3]
    }

    /// Rows of wall slots the wall table holds (one per particle with a wall within its skin).
    pub fn wall_rows(&self) -> u32 {
        self.wall_rows
    }

    /// All current slots, `n × slots` in particle order, gathered from the chunks, as u32
    /// words (`slot_words` per slot, the partner in word 3).
    fn read_slots(&self) -> Result<Vec<u32>, GpuError> {
        let k = self.params.slots as usize * self.slot_words;
        let mut all = Vec::with_capacity(self.params.n as usize * k);
        for c in &self.buffers.chunks {
            all.extend(self.read::<u32>(&c.slots, c.count as usize * k)?);
        }
        Ok(all)
    }

    /// Number of buffers the neighbour slots are split into.
    pub fn slot_chunks(&self) -> usize {
        self.buffers.chunks.len()
    }

    /// Neighbour-list skin (m): lists hold the pairs whose surfaces are closer than this.
    pub fn skin(&self) -> f64 {
        self.params.skin as f64
    }

    /// Neighbour-list builds so far (read back from the GPU).
    pub fn neighbour_builds(&self) -> Result<u32, GpuError> {
        Ok(self.read::<[u32; 4]>(&self.buffers.rebuild_state, 1)?[0][1])
    }

    /// Bytes of one neighbour slot (one side of one pair's history): 16 for the spring–dashpot,
    /// 32 with the Kuhn or hill model, 48 + 16 × capacity with Jäger's history stack.
    pub fn slot_bytes(&self) -> usize {
        4 * self.slot_words
    }

    /// Current neighbour-slot capacity per particle.
    pub fn slots(&self) -> u32 {
        self.params.slots
    }

    /// Whether the per-step kernels hold the particle arrays and slots as 64-bit words
    /// ([`GpuOptions::words64`] on a device with 64-bit integers).
    pub fn words64(&self) -> bool {
        self.spec.words64
    }

    /// Copies the GPU state into `sim`: particle positions, velocities, orientations, wall
    /// positions, wall forces and contact counts of the last step, time and step count. The
    /// contact history stays on the GPU.
    pub fn read_into(&self, sim: &mut Simulation) -> Result<(), GpuError> {
        let n = self.params.n as usize;
        let pos: Vec<Position> = self.read(&self.buffers.pos, n)?;
        let vel: Vec<[f32; 4]> = self.read(&self.buffers.vel, n)?;
        let omega: Vec<[f32; 4]> = self.read(&self.buffers.omega, n)?;
        let orientation: Vec<[f32; 4]> = self.read(&self.buffers.orientation, n)?;
        let walls: Vec<Wall> = self.read(&self.buffers.walls, sim.walls.len())?;
        let ids = self.particle_order()?;
        let p = &mut sim.particles;
        let d3 = |a: [f32; 4]| DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64);
        for (k, &id) in ids.iter().enumerate() {
            let i = id as usize;
            p.position[i] = d3(pos[k].hi) + d3(pos[k].lo);
            p.velocity[i] = d3(vel[k]);
            p.angular_velocity[i] = d3(omega[k]);
            let q = orientation[k];
            p.orientation[i] = DQuat::from_xyzw(q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64);
        }
        for (w, g) in sim.walls.iter_mut().zip(&walls) {
            let point = d3(g.point_hi) + d3(g.point_lo);
            match &mut w.shape {
                WallShape::Plane { point: p0, .. } => *p0 = point,
                WallShape::Plate { center, .. } => *center = point,
            }
            w.velocity = d3(g.velocity);
        }
        for (w, &(force, torque)) in sim.walls.iter_mut().zip(&self.last.walls) {
            w.force = force;
            w.torque = torque;
        }
        sim.stats = self.last.stats;
        sim.work = if self.slot_words == 8 {
            // Summed over the particles in f64 (each contact counted on one side).
            let work: Vec<[f32; 4]> = self.read(&self.buffers.work, n)?;
            wgdem_core::cpu::ContactWork {
                elastic: work.iter().map(|w| f64::from(w[0])).sum(),
                dissipated: work.iter().map(|w| f64::from(w[1]) + f64::from(w[2])).sum(),
            }
        } else {
            // No pair accounts work (the CPU engine's values are zero then too).
            wgdem_core::cpu::ContactWork::default()
        };
        sim.time = self.time;
        sim.steps = self.steps;
        sim.set_moisture_events_applied(self.events_applied);
        Ok(())
    }
}

/// The slots the pairs of `sim` need: 16 bytes for the spring–dashpot; 32 bytes carry the Kuhn
/// and hill models' extra state; Jäger slots add the contact frame and the largest history
/// capacity in points.
fn slot_kind_for(sim: &Simulation) -> Result<SlotKind, GpuError> {
    let nm = sim.n_materials();
    let mut wide = false;
    let mut jager_points = 0u32;
    for k in 0..nm * nm {
        match sim.pair(k / nm, k % nm).model() {
            wgdem_core::contact::model::PairModel::Jager { capacity, .. } => {
                if capacity > crate::contact_probe::JAGER_GPU_CAPACITY {
                    return Err(GpuError::Unsupported(format!(
                        "material pair ({}, {}): a Jäger history capacity of {capacity} points exceeds the GPU engine's {}; set capacity ≤ {} or use --backend cpu",
                        k / nm,
                        k % nm,
                        crate::contact_probe::JAGER_GPU_CAPACITY,
                        crate::contact_probe::JAGER_GPU_CAPACITY
                    )));
                }
                jager_points = jager_points.max(capacity.max(3) as u32);
            }
            wgdem_core::contact::model::PairModel::Spring => {}
            _ => wide = true,
        }
    }
    Ok(if jager_points > 0 {
        SlotKind::Jager(jager_points)
    } else if wide {
        SlotKind::Wide
    } else {
        SlotKind::Narrow
    })
}

/// Bit m set where some record uses model m (`PairRecord::model`).
fn model_mask(table: &[PairRecord]) -> u32 {
    table.iter().fold(0, |mask, r| mask | 1 << r.model)
}

fn pair_table(sim: &Simulation) -> Vec<PairRecord> {
    let nm = sim.n_materials();
    (0..nm * nm)
        .map(|k| PairRecord::from_pair(sim.pair(k / nm, k % nm)))
        .collect()
}

fn gpu_wall(w: &wgdem_core::wall::Wall) -> Wall {
    let (point, normal, u_axis, extents, kind) = match w.shape {
        WallShape::Plane { point, normal } => (point, normal, DVec3::ZERO, [0.0; 2], 0),
        WallShape::Plate {
            center,
            normal,
            u_axis,
            half_extents,
        } => (center, normal, u_axis, half_extents, 1),
    };
    let (point_hi, point_lo) = split3(point);
    Wall {
        kind,
        material: w.material as u32,
        pad: [0; 2],
        point_hi,
        point_lo,
        normal: v4(normal),
        u_axis: v4(u_axis),
        extents: [extents[0] as f32, extents[1] as f32, 0.0, 0.0],
        velocity: v4(w.velocity),
    }
}

/// The GPU engine as a runner backend: steps on the device, then copies the state back.
pub struct GpuBackend {
    /// The engine.
    pub engine: GpuEngine,
    /// The adapter's description.
    pub adapter: String,
}

impl wgdem_core::runner::Backend for GpuBackend {
    fn name(&self) -> &'static str {
        "gpu"
    }
    fn adapter(&self) -> Option<String> {
        Some(self.adapter.clone())
    }
    fn memory_bytes(&self) -> Option<u64> {
        Some(self.engine.memory_bytes())
    }
    fn advance(&mut self, sim: &mut Simulation, steps: u64) -> wgdem_core::Result<()> {
        self.engine.run(steps).map_err(backend_error)?;
        self.engine.read_into(sim).map_err(backend_error)
    }

    fn advance_controlled(
        &mut self,
        sim: &mut Simulation,
        steps: u64,
        interval: u64,
        control: &mut dyn FnMut(&Readout<'_>) -> Vec<(usize, DVec3)>,
    ) -> wgdem_core::Result<()> {
        self.engine
            .set_batch_steps(interval.clamp(1, u32::MAX as u64) as u32);
        self.engine
            .run_streaming(steps, |r, walls| {
                let readout = Readout {
                    steps: r.steps,
                    time: r.time,
                    walls: &r.walls,
                    stats: r.stats,
                };
                for (w, v) in control(&readout) {
                    walls.set_velocity(w, v);
                }
            })
            .map_err(backend_error)?;
        self.engine.read_into(sim).map_err(backend_error)
    }

    fn update_walls(&mut self, sim: &Simulation) -> wgdem_core::Result<()> {
        self.engine.update_walls(sim);
        Ok(())
    }

    fn update_pair_params(&mut self, sim: &Simulation) -> wgdem_core::Result<()> {
        self.engine.update_pair_table(sim).map_err(backend_error)
    }

    fn reload(&mut self, sim: &Simulation) -> wgdem_core::Result<()> {
        self.engine = self.engine.rebuild(sim).map_err(backend_error)?;
        Ok(())
    }

    fn save_state(&mut self) -> wgdem_core::Result<Vec<u8>> {
        self.engine.save_state().map_err(backend_error)
    }

    fn restore_state(&mut self, sim: &Simulation, state: &[u8]) -> wgdem_core::Result<()> {
        self.engine = self
            .engine
            .restore_state(sim, state)
            .map_err(backend_error)?;
        Ok(())
    }
}

fn backend_error(e: GpuError) -> wgdem_core::Error {
    wgdem_core::Error::Backend(e.to_string())
}
