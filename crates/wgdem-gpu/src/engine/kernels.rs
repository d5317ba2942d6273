//! The compute pipelines: one [`Kernel`] per entry point, compiled from `shaders/` for the
//! scene's slot layout and [`shaders::Specialization`], with the binding types of each.

use super::*;

#[derive(Clone, Copy)]
pub(super) enum Bind {
    Uniform,
    Read,
    Write,
}

pub(super) struct Kernel {
    pub(super) pipeline: wgpu::ComputePipeline,
    pub(super) layout: wgpu::BindGroupLayout,
}

pub(super) fn make_kernel(
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
pub(super) fn direct_dispatch(
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
pub(super) fn indirect_dispatch(
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

pub(super) struct Kernels {
    pub(super) permute_take: Kernel,
    pub(super) permute_put: Kernel,
    pub(super) permute_invert: Kernel,
    pub(super) rebuild_plan: Kernel,
    pub(super) rebuild_walls: Kernel,
    pub(super) rebuild_walls_alloc: Kernel,
    pub(super) rebuild_halt: Kernel,
    pub(super) rebuild_commit: Kernel,
    pub(super) hash: Kernel,
    /// `hash` with the Morton code of the cell as the key, for a reorder.
    pub(super) hash_order: Kernel,
    pub(super) radix_count: Kernel,
    pub(super) radix_scan: Kernel,
    pub(super) radix_scatter: Kernel,
    pub(super) ranges_clear: Kernel,
    pub(super) ranges_mark: Kernel,
    pub(super) neighbours: Kernel,
    pub(super) contacts: Kernel,
    /// `contacts` without the wall sums, for steps whose wall forces are not read.
    pub(super) contacts_only: Kernel,
    pub(super) reduce_walls: Kernel,
    pub(super) reduce_stats: Kernel,
    pub(super) integrate: Kernel,
    pub(super) walls_advance: Kernel,
    pub(super) moisture: Kernel,
}

impl Kernels {
    pub(super) fn new(
        device: &wgpu::Device,
        slots: SlotKind,
        spec: shaders::Specialization,
    ) -> Self {
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
