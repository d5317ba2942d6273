//! Bind groups, built once per table size (and again after a regrowth) from the buffer lists
//! that `step.rs` gives beside each pass, and the reorder's groups.

use super::*;

pub(super) fn bind(
    device: &wgpu::Device,
    label: &str,
    kernel: &Kernel,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    crate::context::bind_buffers(device, label, &kernel.layout, buffers)
}

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
    pub(super) radix: Vec<wgpu::BindGroup>,
    pub(super) ranges: wgpu::BindGroup,
    /// One per slot chunk.
    pub(super) neighbours: Vec<wgpu::BindGroup>,
    pub(super) commit: wgpu::BindGroup,
    /// One per slot chunk.
    pub(super) contacts: Vec<wgpu::BindGroup>,
    pub(super) reduce: wgpu::BindGroup,
    pub(super) integrate: wgpu::BindGroup,
    /// One per slot chunk.
    pub(super) moisture: Vec<wgpu::BindGroup>,
}

impl GpuEngine {
    pub(super) fn bind_groups(
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
            let mut arrays: Vec<(&wgpu::Buffer, u32)> = vec![
                (&b.pos, 8),
                (&b.vel, 4),
                (&b.omega, 4),
                (&b.orientation, 4),
                (&b.pred, 8),
                (&b.fine, 4),
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
                    let words = info(stride, block, false, 0, n);
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
                            let words = info(slot_row, block, true, c.first, c.count);
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
                    &b.neighbours_bindings(c, sorted),
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
                    &b.contact_bindings(c),
                )
            })
            .collect();
        let rebuild_group = |args: &wgpu::Buffer| {
            bind(
                device,
                "dem.rebuild",
                &k.rebuild_plan,
                &b.rebuild_bindings(args),
            )
        };
        let rebuild = rebuild_group(&b.dispatch_args);
        let rebuild_walls = rebuild_group(&b.dummy);
        let commit = bind(
            device,
            "dem.rebuild.commit",
            &k.rebuild_commit,
            &b.commit_bindings(),
        );
        BindGroups {
            permute,
            rebuild,
            rebuild_walls,
            commit,
            hash: bind(device, "dem.hash", &k.hash, &b.hash_bindings()),
            radix: (0..order_passes(passes) as usize)
                .map(|p| bind(device, "dem.radix", &k.radix_count, &b.radix_bindings(p)))
                .collect(),
            ranges: bind(
                device,
                "dem.ranges",
                &k.ranges_clear,
                &b.ranges_bindings(sorted),
            ),
            neighbours,
            contacts,
            reduce: bind(
                device,
                "dem.wall_reduce",
                &k.reduce_walls,
                &b.reduce_bindings(),
            ),
            integrate: bind(
                device,
                "dem.integrate",
                &k.integrate,
                &b.integrate_bindings(),
            ),
            moisture: b
                .chunks
                .iter()
                .map(|c| bind(device, "dem.moisture", &k.moisture, &b.moisture_bindings(c)))
                .collect(),
        }
    }
}
