//! Bind groups, built once per table size (and again after a regrowth) from the binding
//! tables that `step.rs` gives beside the passes (see `bindings.rs`), and the reorder's groups.

use wgpu::util::DeviceExt;

use super::GpuEngine;
use super::bindings::{At, Bind, Buf};
use super::kernels::{Kernel, Kernels};
use super::state::{Buffers, ORDER_PASSES};
use super::step::Args;
use crate::layout::Permute;
use crate::shared::PERMUTE_BLOCK;

pub(super) fn uniform_words(device: &wgpu::Device, label: &str, words: &[u32]) -> wgpu::Buffer {
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::cast_slice(words),
        usage: wgpu::BufferUsages::UNIFORM,
    })
}

/// Bind groups of a reorder: one per permuted array, one per slot chunk, one per
/// (destination, source) pair of chunks.
pub(super) struct PermuteGroups {
    pub(super) invert: wgpu::BindGroup,
    /// Every column block of every per-particle array and of the neighbour slots.
    pub(super) moves: Vec<BlockMove>,
}

/// One column block of one array through the reorder's scratch, a bind group per range of
/// particles the array is stored in (all of them, or each slot chunk) with that range's
/// dispatch size: `take` from every range (over every new index), then `put` into every range.
pub(super) struct BlockMove {
    pub(super) ranges: Vec<(wgpu::BindGroup, Args)>,
}

pub(super) struct BindGroups {
    pub(super) permute: PermuteGroups,
    pub(super) rebuild: wgpu::BindGroup,
    /// `rebuild` with a stand-in for the dispatch arguments, for `rebuild.walls_near`, which
    /// is itself dispatched from them.
    pub(super) rebuild_walls: wgpu::BindGroup,
    pub(super) hash: wgpu::BindGroup,
    /// One per radix pass of the reorder's sort.
    pub(super) radix: Vec<wgpu::BindGroup>,
    pub(super) buckets: wgpu::BindGroup,
    /// One per slot chunk.
    pub(super) neighbours: Vec<wgpu::BindGroup>,
    /// One per slot chunk.
    pub(super) contacts: Vec<wgpu::BindGroup>,
    pub(super) reduce: wgpu::BindGroup,
    pub(super) integrate: wgpu::BindGroup,
    /// One per slot chunk.
    pub(super) moisture: Vec<wgpu::BindGroup>,
    /// `integrate.steps` on the one slot chunk, where the engine takes that path.
    pub(super) steps: Option<wgpu::BindGroup>,
    /// `cell_reduce.*`, in a periodic cell.
    pub(super) cell_reduce: Option<wgpu::BindGroup>,
    /// `row_reduce.*`, one per slot chunk (`total` takes the first).
    pub(super) row_reduce: Vec<wgpu::BindGroup>,
}

impl GpuEngine {
    pub(super) fn bind_groups(
        device: &wgpu::Device,
        k: &Kernels,
        b: &Buffers,
        n: u32,
        slot_row: u32,
    ) -> BindGroups {
        let bind =
            |label: &str, kernel: &Kernel, at: At<'_>| bind_table(device, label, kernel, b, &at);
        let every = At::default();
        let in_chunk = |c| At {
            chunk: Some(c),
            ..At::default()
        };
        let permute = {
            let group = |info: &wgpu::Buffer, new_index: &wgpu::Buffer, data: &wgpu::Buffer| {
                bind(
                    "dem.permute",
                    &k.permute_take,
                    At {
                        permute: Some([info, new_index, data]),
                        ..At::default()
                    },
                )
            };
            let info = |stride: u32, block: u32, remap: bool, first: u32, count: u32| {
                let permute = Permute {
                    stride,
                    block,
                    remap: u32::from(remap),
                    _p0: 0,
                    first,
                    count,
                    _p1: 0,
                    _p2: 0,
                };
                uniform_words(device, "dem.permute.info", bytemuck::cast_slice(&[permute]))
            };
            let one = info(1, 0, false, 0, n);
            // Every per-particle array and its u32 words per particle.
            let mut arrays: Vec<(Buf, u32)> = vec![
                (Buf::Position, 8),
                (Buf::Velocity, 4),
                // The inverse inertia in w (the positions are those of the last build, which
                // the reorder's forced build writes again).
                (Buf::BuiltAt, 4),
                (Buf::Orientation, 4),
                (Buf::Predicted, 8),
                (Buf::LowParts, 4),
                (Buf::Material, 1),
                (Buf::StableIds, 1),
                (Buf::NeighbourCount, 1),
                (Buf::WallRow, 1),
                // A particle's wall slots sit at its walls' ranks in its mask, which the next
                // build compares with the new one.
                (Buf::WallMask, 1),
            ];
            // Per-particle contact work, where the engine accounts it (16 B per particle; a
            // single particle's moves nowhere either way).
            if b.work.size() >= 16 * u64::from(n) {
                arrays.push((Buf::ContactWork, 4));
            }
            let mut moves: Vec<BlockMove> = Vec::new();
            for (array, stride) in arrays {
                let data = b.resolve(array, &every).buffer;
                for block in (0..stride).step_by(PERMUTE_BLOCK as usize) {
                    let words = info(stride, block, false, 0, n);
                    moves.push(BlockMove {
                        ranges: vec![(group(&words, &b.bucket_start, data), Args::Particles)],
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
                            let words = info(slot_row, block, true, c.first, c.count);
                            (group(&words, &b.bucket_start, &c.slots), Args::Chunk(i))
                        })
                        .collect(),
                });
            }
            PermuteGroups {
                invert: group(&one, &b.dummy, &b.bucket_start),
                moves,
            }
        };
        let per_chunk = |label: &str, kernel: &Kernel| -> Vec<wgpu::BindGroup> {
            b.chunks
                .iter()
                .map(|c| bind(label, kernel, in_chunk(c)))
                .collect()
        };
        BindGroups {
            permute,
            rebuild: bind("dem.rebuild", &k.rebuild_plan, every),
            rebuild_walls: bind(
                "dem.rebuild",
                &k.rebuild_walls,
                At {
                    args_stand_in: true,
                    ..every
                },
            ),
            hash: bind("dem.hash", &k.hash, every),
            radix: (0..ORDER_PASSES as usize)
                .map(|p| {
                    bind(
                        "dem.radix",
                        &k.radix_count,
                        At {
                            radix_pass: p,
                            ..every
                        },
                    )
                })
                .collect(),
            buckets: bind("dem.buckets", &k.buckets_scan, every),
            neighbours: per_chunk("dem.neighbours", &k.neighbours),
            contacts: per_chunk("dem.contact_forces", &k.contacts),
            reduce: bind("dem.wall_reduce", &k.reduce_walls, every),
            integrate: bind(
                "dem.integrate",
                &k.integrate,
                in_chunk(b.chunks.first().expect("at least one slot chunk")),
            ),
            moisture: per_chunk("dem.moisture", &k.moisture),
            steps: k.steps.as_ref().and_then(|kernel| {
                let chunk = b.chunks.first()?;
                Some(bind("dem.integrate.steps", kernel, in_chunk(chunk)))
            }),
            cell_reduce: (k.cell_reduce.as_ref())
                .map(|(partials, _)| bind("dem.cell_reduce", partials, every)),
            row_reduce: per_chunk("dem.row_reduce", &k.row_reduce.0),
        }
    }
}

/// The bind group of `kernel` (whose layout was built from `table`) for `at`: row i of the
/// table at `@binding(i)`.
pub(super) fn bind_table(
    device: &wgpu::Device,
    label: &str,
    kernel: &Kernel,
    buffers: &Buffers,
    at: &At<'_>,
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = kernel
        .table
        .iter()
        .enumerate()
        .filter(|(_, row)| row.access != Bind::Unused)
        .map(|(i, row)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: wgpu::BindingResource::Buffer(buffers.resolve(row.buffer, at)),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout: &kernel.layout,
        entries: &entries,
    })
}
