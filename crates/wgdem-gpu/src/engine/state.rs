//! The engine's state on the device and its sizing: the buffers and their labels, the
//! neighbour-slot chunks that keep each binding under the device's limit, the wall table's
//! rows, and the conversions of the scene's f64 state into the kernels' f32 and double-single
//! layouts.

use std::borrow::Cow;

use bytemuck::Pod;
use glam::DVec3;
use wgdem_core::cpu::Simulation;
use wgdem_core::wall::WallShape;
use wgpu::util::DeviceExt;

use crate::context::GpuError;
use crate::layout::{Chunk, Drive, PairRecord, Slot, Wall};
use crate::shaders::SlotKind;
use crate::shared::{self, PERMUTE_BLOCK};

/// Neighbour slots beyond the longest list at the start (or the longest that overflowed) that
/// a table sized from the scene (or regrown) gets: room for one more partner before the next
/// regrowth. Every particle holds the table's slots, so each slot of headroom costs every
/// particle a slot (16 B, 32 B wide, 560 B for a Jäger slot of 32 points), while a regrowth
/// only reads the table back once and repeats one step (the list build is compiled again only
/// where its private arrays, a multiple of 8, no longer hold the lists). The choice among 0–4
/// is measured in docs/performance.md (GPU memory rows).
pub const SLOT_HEADROOM: u32 = 1;

/// Neighbour slots for a new engine on `sim`: the most partners any particle has within the
/// skin (and the interaction range) now, plus [`SLOT_HEADROOM`]. A table sized so fits the
/// packing it starts from; one that has to grow later (a pour that settles) is regrown from
/// the step that needs it, with the same results.
pub(super) fn initial_slots(sim: &Simulation, skin: f64) -> u32 {
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

pub(super) const STATE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

pub(super) fn init<T: Pod>(device: &wgpu::Device, label: &str, data: &[T]) -> wgpu::Buffer {
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

pub(super) fn zeroed(device: &wgpu::Device, label: &str, bytes: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.max(16),
        usage: STATE,
        mapped_at_creation: false,
    })
}

/// Refuses a storage table larger than the device can bind, naming it and its sizing.
pub(super) fn check_table(
    device: &wgpu::Device,
    label: &'static str,
    bytes: u64,
    what: &str,
) -> Result<(), GpuError> {
    let limits = device.limits();
    let max = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    if bytes > max {
        return Err(GpuError::TableTooLarge {
            table: label,
            bytes,
            limit: max,
            sizing: what.to_owned(),
        });
    }
    Ok(())
}

/// Radix passes of a reorder's sort by Morton code (27 bits, `hash.order`): 7 of 4 bits, from
/// the first key/value pair into the second.
pub(super) const ORDER_PASSES: u32 = 7;

/// The value buffer both sorts end in (`Buffers::sorted`): the reorder's radix sort after its
/// [`ORDER_PASSES`] (an odd number), and `buckets.scatter`.
pub(super) const SORTED: usize = 1;

/// The neighbour build's own arrays, which live in the force–torque buffer (`Buffers::ft`)
/// from `hash` to the list build and are dead from `contact_forces` on: the sorts' two key
/// arrays, the reorder's first value array (`Buffers::sorted` is the second), each particle's
/// packed cell and the hash buckets' counters. Each starts at a multiple of the device's
/// storage offset alignment. They take 16 B per particle and 4 B per bucket (2^bits ≥ n
/// buckets, fewer than 2n) of the 32 that the forces take: buffers of their own cost 20–24 B
/// per particle more (docs/performance.md).
#[derive(Debug, Clone, Copy)]
pub(super) struct BuildScratch {
    /// Bytes from one per-particle array to the next: 4 B per particle, aligned.
    stride: u64,
    /// Bytes of the bucket counters (4 per bucket).
    buckets: u64,
}

/// One of [`BuildScratch`]'s arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum InForces {
    Keys(usize),
    FirstVals,
    Cells,
    BucketCount,
}

impl BuildScratch {
    pub(super) fn new(n: u64, buckets: u64, align: u64) -> Self {
        let align = align.max(4);
        Self {
            stride: (4 * n.max(1)).div_ceil(align) * align,
            buckets: 4 * buckets,
        }
    }

    /// Bytes of the force–torque buffer: the forces' 32 B per particle, or more where the
    /// aligned arrays need it (a few particles).
    pub(super) fn ft_bytes(&self, n: u64) -> u64 {
        (n * FORCE_TORQUE_BYTES).max(4 * self.stride + self.buckets)
    }

    /// Offset and size of `part` in the force–torque buffer.
    pub(super) fn range(&self, part: InForces) -> (u64, u64) {
        let k = match part {
            InForces::Keys(k) => k as u64,
            InForces::FirstVals => 2,
            InForces::Cells => 3,
            InForces::BucketCount => return (4 * self.stride, self.buckets),
        };
        (k * self.stride, self.stride)
    }
}

pub(super) struct Buffers {
    pub(super) params: wgpu::Buffer,
    pub(super) radix_passes: Vec<wgpu::Buffer>,
    pub(super) pos: wgpu::Buffer,
    /// Velocities (xyz) and the angular velocity's x (w). The angular velocity has no array
    /// of its own: its y and z travel in `pred`'s w words (common.wgsl `spin_of`).
    pub(super) vel: wgpu::Buffer,
    pub(super) orientation: wgpu::Buffer,
    pub(super) pred: wgpu::Buffer,
    /// The low parts of each particle's velocity (xyz) and radius (w): velocity and radius are
    /// double-single, `vel.xyz + fine.xyz` and `pos.hi.w + fine.w`.
    pub(super) fine: wgpu::Buffer,
    pub(super) material: wgpu::Buffer,
    pub(super) pair_table: wgpu::Buffer,
    pub(super) walls: wgpu::Buffer,
    /// Force and torque of each particle (written by `contact_forces`, read by `integrate`).
    /// No kernel reads it between a step's `integrate` and the next step's `contact_forces`,
    /// so the neighbour build keeps its own arrays in it ([`BuildScratch`]: the sorts' keys,
    /// the reorder's first values, the packed cells and the bucket counters), and a reorder
    /// moves every array through it, one column block of every particle ([`PERMUTE_BLOCK`]
    /// words each) at a time.
    pub(super) ft: wgpu::Buffer,
    /// Where the neighbour build's arrays lie in `ft`.
    pub(super) scratch: BuildScratch,
    /// Contact work per particle (engines whose pairs account it, else 16 unused bytes): x
    /// the elastic energy of its contacts after the last step, y + z the work they have
    /// dissipated since the start (double-single).
    pub(super) work: wgpu::Buffer,
    pub(super) stats: wgpu::Buffer,
    /// The particle indices in the order both sorts end in: by (bucket, index) after
    /// `buckets.*`, by Morton code after a reorder's radix sort (its second value buffer).
    pub(super) sorted: wgpu::Buffer,
    pub(super) tile_hist: wgpu::Buffer,
    /// Each bucket's first place in the sorted order (2^bits + 1 words: the last is the end).
    /// During a reorder, before `hash` writes it again, the old index → new index map.
    pub(super) bucket_start: wgpu::Buffer,
    /// Partners listed per particle (rewritten in place by `neighbours`).
    pub(super) counts: wgpu::Buffer,
    /// The neighbour slots (contact history), split by particle so that no binding exceeds
    /// the device's limit.
    pub(super) chunks: Vec<SlotChunk>,
    /// Positions at the last build (xyz) and the inverse moment of inertia (w; 0 for a sphere
    /// whose spin is fixed), which `integrate` reads every step and a build leaves as it is.
    pub(super) built_at: wgpu::Buffer,
    /// Wall points at the last build (double-single), for `rebuild.plan`.
    pub(super) walls_built: wgpu::Buffer,
    pub(super) rebuild_state: wgpu::Buffer,
    /// Stable id of the particle at each index (particles are reordered by cell).
    pub(super) ids: wgpu::Buffer,
    /// Per stable id, its drive (`[[loads]]`) or `NO_DRIVE` (not reordered: indexed by id).
    pub(super) drive_of: wgpu::Buffer,
    /// The drives (`Drive` in integrate.wgsl).
    pub(super) drives: wgpu::Buffer,
    /// Points of the drives' and walls' schedules, `[t, x, y, z]`.
    pub(super) schedule_points: wgpu::Buffer,
    /// Stand-in for bindings a permute entry point does not use.
    pub(super) dummy: wgpu::Buffer,
    /// The moisture event being applied (`MoistureAction` in moisture.wgsl).
    pub(super) moisture_action: wgpu::Buffer,
    pub(super) dispatch_args: wgpu::Buffer,
    /// Rows of `flags[3]` wall slots (wall id and tangential history), one per particle with
    /// a wall within its skin.
    pub(super) wall_slots: wgpu::Buffer,
    /// Per particle, its row of `wall_slots` or `NO_ROW`.
    pub(super) wall_row: wgpu::Buffer,
    /// Rows given back, a stack (`WallAlloc` in rebuild.wgsl says how many).
    pub(super) wall_free: wgpu::Buffer,
    /// `WallAlloc`: the free stack's height, the rows handed out so far, the capacity.
    pub(super) wall_alloc: wgpu::Buffer,
    /// Per particle, the walls within its skin at the last build (bit per wall).
    pub(super) wall_mask: wgpu::Buffer,
    pub(super) wall_partial: wgpu::Buffer,
    pub(super) wall_out: wgpu::Buffer,
    pub(super) stats_out: wgpu::Buffer,
    pub(super) counters: wgpu::Buffer,
    /// The periodic cell (`Cell` in common.wgsl; `cell.rs`): a few bytes without one.
    pub(super) cell: wgpu::Buffer,
    /// Per particle, its pairs' Σ f ⊗ d in the last step (periodic cell only).
    pub(super) cell_stress: wgpu::Buffer,
    /// Per workgroup of particles, their Σ f ⊗ d and Σ m v ⊗ v (periodic cell only;
    /// `cell_reduce.wgsl`).
    pub(super) cell_partial: wgpu::Buffer,
    /// The cell's Σ f ⊗ d and Σ m v ⊗ v at the end of a batch, copied into its readout.
    pub(super) cell_sums: wgpu::Buffer,
    /// Per stable id, the whole-cell shifts of its wraps (periodic cell only).
    pub(super) images: wgpu::Buffer,
    /// Per workgroup of particles, a shear row's sums (`row_reduce.wgsl`).
    pub(super) row_partial: wgpu::Buffer,
    /// A shear row's sums of all particles ([`crate::layout::RowSums`]).
    pub(super) row_sums: wgpu::Buffer,
}

/// Neighbour slots of the particles `[first, first + count)`.
pub(super) struct SlotChunk {
    pub(super) first: u32,
    pub(super) count: u32,
    /// `Chunk` uniform of the kernels.
    pub(super) range: wgpu::Buffer,
    /// The slots of particles `first..first + count` (rebuilt in place by `neighbours`).
    pub(super) slots: wgpu::Buffer,
    /// Per slot of a pair's B side, the force and torque its A side handed it (two vec4, see
    /// contact_forces.wgsl); used where the slots are one chunk.
    pub(super) hand: wgpu::Buffer,
    /// Per slot of a pair's A side, the index of the pair's B slot (`neighbours.link_pairs`).
    pub(super) link: wgpu::Buffer,
    /// Whether each pair is evaluated once (`Chunk::once`; the only chunk).
    pub(super) once: bool,
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
pub(super) fn binding_limit(device: &wgpu::Device) -> u64 {
    let limits = device.limits();
    limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size)
}

/// Splits the slot tables of `n` particles with `k` slots each into chunks that fit the
/// device's binding limit; `current` (n × k slots) fills the current tables if given. Where
/// `pairs_once` and one chunk holds every particle, it evaluates each pair once (`Chunk::once`)
/// and holds the handed forces and links; otherwise these are 16-byte stand-ins.
pub(super) fn slot_chunks(
    device: &wgpu::Device,
    n: u32,
    k: u32,
    slot_words: usize,
    current: Option<&[u32]>,
    pairs_once: bool,
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
        return Err(GpuError::TableTooLarge {
            table: "dem.contact_history",
            bytes: 64 * per_particle,
            limit: binding_limit(device),
            sizing: format!("the smallest chunk: {k} neighbour slots of 64 particles"),
        });
    }
    let once = pairs_once && per_chunk == n;
    let per_slot = |bytes: u64| if once { n as u64 * k as u64 * bytes } else { 0 };
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
                    contents: bytemuck::bytes_of(&Chunk {
                        first,
                        count,
                        once: u32::from(once),
                        _p1: 0,
                    }),
                    usage: wgpu::BufferUsages::UNIFORM,
                }),
                slots: match current {
                    Some(all) => init(device, "dem.contact_history", &all[range]),
                    None => zeroed(device, "dem.contact_history", bytes),
                },
                hand: zeroed(device, "dem.handed_forces", per_slot(HAND_BYTES)),
                link: zeroed(device, "dem.pair_link", per_slot(4)),
                once,
            }
        })
        .collect())
}

// The reorder moves each array through its scratch a column block of `PERMUTE_BLOCK` words per
// particle at a time. The scratch is the force and torque array, whose 8 words per particle no
// kernel reads between a reorder and the `contact_forces` that rewrites them.
const _: () = assert!(PERMUTE_BLOCK as usize * 4 == FORCE_TORQUE_BYTES as usize);

/// Bytes per neighbour slot of the forces handed to B sides (`hand` in contact_forces.wgsl).
pub(super) const HAND_BYTES: u64 = 32;

/// Bytes per particle of the force and torque array (`ForceTorqueWords` in common.wgsl).
pub(super) const FORCE_TORQUE_BYTES: u64 = 32;

/// u32 words per wall slot: a neighbour slot, then the low part of its tangential history
/// (`WallSlot` in common.wgsl).
pub(super) fn wall_words(slot_words: usize) -> usize {
    slot_words + 4
}

/// `count` wall slots that hold no contact (partner [`shared::NO_WALL`]), as u32 words.
pub(super) fn empty_wall_slots(count: usize, wall_words: usize) -> Vec<u32> {
    let empty = Slot {
        tangential: [0.0; 3],
        partner: shared::NO_WALL,
    };
    let mut words = vec![0u32; count * wall_words];
    for slot in words.chunks_mut(wall_words) {
        slot[..Slot::WORDS].copy_from_slice(bytemuck::cast_slice(&[empty]));
    }
    words
}

/// The contact-work buffer of a new engine: zeros per particle where `wide` (the pairs account
/// work), the work `sim` has already dissipated carried by the first particle; otherwise 16
/// unused bytes.
pub(super) fn initial_work(sim: &Simulation, wide: bool) -> Vec<[f32; 4]> {
    if !wide {
        return vec![[0.0; 4]];
    }
    let mut work = vec![[0.0f32; 4]; sim.particles.len().max(1)];
    let (hi, lo) = split(sim.work.dissipated);
    work[0] = [0.0, hi, lo, 0.0];
    work
}

/// Indirect dispatch arguments of a step (written by `rebuild.plan`, zeroed by `rebuild.halt`;
/// see [`Args`]).
pub(super) fn dispatch_args(device: &wgpu::Device, chunks: usize) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("dem.rebuild.dispatch_args"),
        size: u64::from(shared::args::total(chunks as u32)) * 12,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
        mapped_at_creation: false,
    })
}

pub(super) fn split(x: f64) -> (f32, f32) {
    let hi = x as f32;
    (hi, (x - hi as f64) as f32)
}

pub(super) fn split3(x: DVec3) -> ([f32; 4], [f32; 4]) {
    let (a, b, c) = (split(x.x), split(x.y), split(x.z));
    ([a.0, b.0, c.0, 0.0], [a.1, b.1, c.1, 0.0])
}

pub(super) fn v4(x: DVec3) -> [f32; 4] {
    [x.x as f32, x.y as f32, x.z as f32, 0.0]
}

/// The GPU engine's refusal of material pair (`a`, `b`)'s Jäger history capacity beyond its
/// slots' [`crate::shared::JAGER_GPU_CAPACITY`] points.
pub(super) fn jager_capacity_refusal(a: usize, b: usize, capacity: usize) -> String {
    let cap = crate::shared::JAGER_GPU_CAPACITY;
    format!(
        "material pair ({a}, {b}): a Jäger history capacity of {capacity} points exceeds the GPU engine's {cap}; set capacity ≤ {cap}"
    )
}

/// The slots the pairs of `sim` need: 16 bytes for the spring–dashpot; 32 bytes carry the Kuhn
/// and hill models' extra state and type C rolling resistance's spring torque; Jäger slots add
/// the contact frame and the largest history capacity in points.
pub(super) fn slot_kind_for(sim: &Simulation) -> Result<SlotKind, GpuError> {
    let nm = sim.n_materials();
    let mut wide = false;
    let mut jager_points = 0u32;
    for k in 0..nm * nm {
        // Type C rolling resistance keeps its spring torque in the aux words.
        if sim
            .pair(k / nm, k % nm)
            .rolling()
            .is_some_and(|r| r.model == wgdem_core::contact::rolling::RollingModel::Epsd)
        {
            wide = true;
        }
        match sim.pair(k / nm, k % nm).model() {
            wgdem_core::contact::model::PairModel::Jager { capacity, .. } => {
                if capacity > crate::shared::JAGER_GPU_CAPACITY {
                    return Err(GpuError::Unsupported(jager_capacity_refusal(
                        k / nm,
                        k % nm,
                        capacity,
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

/// Bit m set where some record uses model m (`PairRecord::model`), and
/// [`shared::rolling::PRESENT_BIT`] where some record has rolling resistance.
pub(super) fn model_mask(table: &[PairRecord]) -> u32 {
    table.iter().fold(0, |mask, r| {
        let rolling = if r.rolling != shared::rolling::NONE {
            shared::rolling::PRESENT_BIT
        } else {
            0
        };
        mask | 1 << r.model | rolling
    })
}

pub(super) fn pair_table(sim: &Simulation) -> Vec<PairRecord> {
    let nm = sim.n_materials();
    (0..nm * nm)
        .map(|k| PairRecord::from_pair(sim.pair(k / nm, k % nm)))
        .collect()
}

/// The walls of `sim` for the device, with their velocity schedules (`[first, count]`).
pub(super) fn gpu_walls(sim: &Simulation, schedules: &[[u32; 2]]) -> Vec<Wall> {
    sim.walls
        .iter()
        .zip(schedules)
        .map(|(w, s)| Wall {
            schedule_first: s[0],
            schedule_count: s[1],
            ..gpu_wall(w)
        })
        .collect()
}

pub(super) fn gpu_wall(w: &wgdem_core::wall::Wall) -> Wall {
    let (point, normal, u_axis, extents, kind) = match w.shape {
        WallShape::Plane { point, normal } => {
            (point, normal, DVec3::ZERO, [0.0; 2], shared::wall::PLANE)
        }
        WallShape::Plate {
            center,
            normal,
            u_axis,
            half_extents,
        } => (center, normal, u_axis, half_extents, shared::wall::PLATE),
    };
    let (point_hi, point_lo) = split3(point);
    Wall {
        kind,
        material: w.material as u32,
        schedule_first: 0,
        schedule_count: 0,
        point_hi,
        point_lo,
        normal: v4(normal),
        u_axis: v4(u_axis),
        extents: [extents[0] as f32, extents[1] as f32, 0.0, 0.0],
        velocity: v4(w.velocity),
    }
}

/// The drives of `sim` for `integrate`: per stable id its drive (`NO_DRIVE` for none), the
/// drives, the schedule points they and the walls' velocity schedules index (`[t, x, y, z]`,
/// at least one), and per wall its schedule's `(first, count)`.
pub(super) struct DriveTables {
    pub drive_of: Vec<u32>,
    pub drives: Vec<Drive>,
    pub points: Vec<[f32; 4]>,
    pub walls: Vec<[u32; 2]>,
}

/// Drive index of a particle without one.
pub(super) const NO_DRIVE: u32 = u32::MAX;

pub(super) fn drive_tables(sim: &Simulation) -> DriveTables {
    let mut points: Vec<[f32; 4]> = Vec::new();
    let mut add = |s: Option<&wgdem_core::loads::Schedule>| -> [u32; 2] {
        let Some(s) = s else { return [0, 0] };
        let first = points.len() as u32;
        for (t, v) in s.times.iter().zip(&s.values) {
            points.push([*t as f32, v.x as f32, v.y as f32, v.z as f32]);
        }
        [first, s.times.len() as u32]
    };
    let drives: Vec<Drive> = sim
        .drives
        .iter()
        .map(|d| Drive {
            force: add(d.force.as_ref()),
            torque: add(d.torque.as_ref()),
            velocity: add(d.velocity.as_ref()),
            spin: add(d.angular_velocity.as_ref()),
            lock: d
                .lock
                .iter()
                .enumerate()
                .map(|(k, &l)| u32::from(l) << k)
                .sum(),
            ..Drive::default()
        })
        .collect();
    let walls = (0..sim.walls.len())
        .map(|w| add(sim.wall_schedules.get(w).and_then(Option::as_ref)))
        .collect();
    let mut drive_of: Vec<u32> = sim.drive_of.iter().map(|d| d.unwrap_or(NO_DRIVE)).collect();
    if drive_of.is_empty() {
        drive_of.push(NO_DRIVE);
    }
    let mut drives = drives;
    if drives.is_empty() {
        drives.push(Drive::default());
    }
    if points.is_empty() {
        points.push([0.0; 4]);
    }
    DriveTables {
        drive_of,
        drives,
        points,
        walls,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The neighbour build's arrays lie apart in the force array, each at the alignment, all
    /// within it, and take no more than the forces' 32 B per particle from a few hundred
    /// particles on (to the engine's largest size).
    #[test]
    fn the_build_arrays_fit_apart_in_the_force_array() {
        let parts = [
            InForces::Keys(0),
            InForces::Keys(1),
            InForces::FirstVals,
            InForces::Cells,
            InForces::BucketCount,
        ];
        for n in [
            1u64, 2, 63, 64, 65, 300, 1000, 9680, 99_452, 1_000_000, 4_194_240,
        ] {
            let buckets = 1u64 << hash_table_bits(n as usize);
            for align in [4u64, 16, 64, 256] {
                let s = BuildScratch::new(n, buckets, align);
                let bytes = s.ft_bytes(n);
                let mut ranges: Vec<(u64, u64)> = parts.iter().map(|&p| s.range(p)).collect();
                for (&part, &(offset, size)) in parts.iter().zip(&ranges) {
                    let want = if part == InForces::BucketCount {
                        4 * buckets
                    } else {
                        4 * n
                    };
                    assert!(size >= want, "{part:?}: {size} B for {want} (n {n})");
                    assert_eq!(
                        offset % align,
                        0,
                        "{part:?} unaligned (n {n}, align {align})"
                    );
                    assert!(offset + size <= bytes, "{part:?} beyond the buffer (n {n})");
                }
                ranges.sort();
                for w in ranges.windows(2) {
                    assert!(w[0].0 + w[0].1 <= w[1].0, "overlap at n {n}: {w:?}");
                }
                if n >= 300 {
                    assert_eq!(bytes, n * FORCE_TORQUE_BYTES, "n {n}, align {align}");
                }
            }
        }
    }
}
