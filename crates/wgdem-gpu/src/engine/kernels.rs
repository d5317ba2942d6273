//! The compute pipelines: one [`Kernel`] per entry point, compiled from `shaders/` for the
//! scene's slot layout and [`shaders::Specialization`], with the binding types of each.

use std::borrow::Cow;

use super::bindings::{Bind, Table};
use super::tables;
use crate::shaders::{self, SlotKind};

/// One compute pipeline: its label, the kernel file (`shaders/<file>.wgsl`), the entry point,
/// and the binding table of its pass ([`tables`]).
#[derive(Debug, Clone, Copy)]
pub struct KernelDecl {
    /// Pipeline label (`dem.…`).
    pub label: &'static str,
    /// Kernel file, as in [`shaders::KERNELS`].
    pub file: &'static str,
    /// Entry point.
    pub entry: &'static str,
    /// What it binds, binding 0 first.
    pub table: Table,
}

const fn decl(
    label: &'static str,
    file: &'static str,
    entry: &'static str,
    table: Table,
) -> KernelDecl {
    KernelDecl {
        label,
        file,
        entry,
        table,
    }
}

/// Every pipeline of the engine, declared once: [`Kernels::new`] compiles these, and a test
/// (`shader_validation.rs`) checks each row of its table against the WGSL by name, binding and
/// access.
pub const KERNEL_DECLS: &[KernelDecl] = &[
    decl("dem.permute.take", "permute", "take", tables::PERMUTE),
    decl("dem.permute.put", "permute", "put", tables::PERMUTE),
    decl("dem.permute.invert", "permute", "invert", tables::PERMUTE),
    decl("dem.rebuild.plan", "rebuild", "plan", tables::REBUILD),
    decl(
        "dem.rebuild.walls_near",
        "rebuild",
        "walls_near",
        tables::REBUILD,
    ),
    decl(
        "dem.rebuild.walls_alloc",
        "rebuild",
        "walls_alloc",
        tables::REBUILD,
    ),
    decl("dem.rebuild.halt", "rebuild", "halt", tables::REBUILD),
    decl(
        "dem.rebuild.lean_plan",
        "rebuild",
        "lean_plan",
        tables::REBUILD,
    ),
    decl("dem.rebuild.close", "rebuild", "close", tables::REBUILD),
    decl("dem.rebuild.force", "rebuild", "force", tables::REBUILD),
    decl("dem.hash.clear", "hash", "clear", tables::HASH),
    decl("dem.hash", "hash", "main", tables::HASH),
    decl("dem.hash.order", "hash", "order", tables::HASH),
    decl("dem.radix.count", "radix", "count", tables::RADIX),
    decl("dem.radix.scan", "radix", "scan", tables::RADIX),
    decl("dem.radix.scatter", "radix", "scatter", tables::RADIX),
    decl("dem.buckets.scan", "buckets", "scan", tables::BUCKETS),
    decl("dem.buckets.scatter", "buckets", "scatter", tables::BUCKETS),
    decl("dem.buckets.settle", "buckets", "settle", tables::BUCKETS),
    decl("dem.neighbours", "neighbours", "main", tables::NEIGHBOURS),
    decl(
        "dem.neighbours.link",
        "neighbours",
        "link_pairs",
        tables::NEIGHBOURS,
    ),
    decl(
        "dem.contact_forces",
        "contact_forces",
        "main",
        tables::CONTACTS,
    ),
    decl(
        "dem.contact_forces.forces_only",
        "contact_forces",
        "forces_only",
        tables::CONTACTS,
    ),
    decl(
        "dem.wall_reduce.walls",
        "wall_reduce",
        "walls_main",
        tables::REDUCE,
    ),
    decl(
        "dem.wall_reduce.stats",
        "wall_reduce",
        "stats_main",
        tables::REDUCE,
    ),
    decl(
        "dem.cell_reduce.partials",
        "cell_reduce",
        "partials",
        tables::CELL_REDUCE,
    ),
    decl(
        "dem.cell_reduce.total",
        "cell_reduce",
        "total_main",
        tables::CELL_REDUCE,
    ),
    decl(
        "dem.row_reduce.partials",
        "row_reduce",
        "partials",
        tables::ROW_REDUCE,
    ),
    decl(
        "dem.row_reduce.total",
        "row_reduce",
        "total_main",
        tables::ROW_REDUCE,
    ),
    decl("dem.integrate", "integrate", "integrate", tables::INTEGRATE),
    decl("dem.integrate.steps", "integrate", "steps", tables::STEPS),
    decl("dem.moisture", "moisture", "main", tables::MOISTURE),
];

/// The most storage buffers one kernel of the general path binds (`contact_forces` and the
/// kernels built on it): an adapter that allows fewer per shader stage (some OpenGL drivers
/// allow 16) cannot create the engine's pipelines. The single-workgroup kernel binds more; it
/// is made only where the adapter allows them (`upload::single_workgroup`).
pub fn storage_buffers_per_kernel() -> u32 {
    KERNEL_DECLS
        .iter()
        .filter(|k| k.label != "dem.integrate.steps")
        .map(|k| {
            k.table
                .iter()
                .filter(|r| matches!(r.access, Bind::Read | Bind::Write))
                .count() as u32
        })
        .max()
        .unwrap_or(0)
}

/// Refuses a device allowing `has` storage buffers per shader stage, fewer than
/// [`storage_buffers_per_kernel`], before any pipeline is made (wgpu's validation would panic
/// inside kernel creation).
pub(super) fn check_storage_buffers(has: u32) -> Result<(), crate::error::GpuError> {
    let needed = storage_buffers_per_kernel();
    if has < needed {
        return Err(crate::error::GpuError::TooFewStorageBuffers { has, needed });
    }
    Ok(())
}

pub(super) struct Kernel {
    pub(super) pipeline: wgpu::ComputePipeline,
    pub(super) layout: wgpu::BindGroupLayout,
    /// The table the layout was built from (and every bind group of the kernel is).
    pub(super) table: Table,
}

pub(super) fn make_kernel(
    device: &wgpu::Device,
    label: &str,
    source: &str,
    entry: &str,
    table: Table,
) -> Kernel {
    let entries: Vec<wgpu::BindGroupLayoutEntry> = table
        .iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let ty = match row.access {
                Bind::Uniform => wgpu::BufferBindingType::Uniform,
                Bind::Read => wgpu::BufferBindingType::Storage { read_only: true },
                Bind::Write => wgpu::BufferBindingType::Storage { read_only: false },
                Bind::Unused => return None,
            };
            Some(wgpu::BindGroupLayoutEntry {
                binding: i as u32,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            })
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
    Kernel {
        pipeline,
        layout,
        table,
    }
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
    /// The plan of a lean step (no rebuild passes recorded; it does nothing where one is due).
    pub(super) lean_plan: Kernel,
    /// The end of a batch with spare steps: short where it did not take all of its own.
    pub(super) close: Kernel,
    /// A rebuild forced in the step (a reorder's).
    pub(super) force: Kernel,
    /// Zeroes the bucket counters (they lie in the force array: `BuildScratch`).
    pub(super) hash_clear: Kernel,
    pub(super) hash: Kernel,
    /// `hash` with the Morton code of the cell as the key, for a reorder.
    pub(super) hash_order: Kernel,
    pub(super) radix_count: Kernel,
    pub(super) radix_scan: Kernel,
    pub(super) radix_scatter: Kernel,
    pub(super) buckets_scan: Kernel,
    pub(super) buckets_scatter: Kernel,
    pub(super) buckets_settle: Kernel,
    pub(super) neighbours: Kernel,
    pub(super) link: Kernel,
    pub(super) contacts: Kernel,
    /// `contacts` without the wall sums, for steps whose wall forces are not read.
    pub(super) contacts_only: Kernel,
    pub(super) reduce_walls: Kernel,
    pub(super) reduce_stats: Kernel,
    pub(super) integrate: Kernel,
    pub(super) moisture: Kernel,
    /// `integrate.steps`, many steps in one workgroup, where the engine takes that path.
    pub(super) steps: Option<Kernel>,
    /// `cell_reduce.partials` and `cell_reduce.total`, in a periodic cell.
    pub(super) cell_reduce: Option<(Kernel, Kernel)>,
    /// `row_reduce.partials` and `row_reduce.total`: a direct shear row's sums.
    pub(super) row_reduce: (Kernel, Kernel),
}

impl Kernels {
    pub(super) fn new(
        device: &wgpu::Device,
        slots: SlotKind,
        spec: shaders::Specialization,
        single_workgroup: bool,
        periodic: bool,
    ) -> Self {
        let k = |label: &str| {
            let d = KERNEL_DECLS
                .iter()
                .find(|d| d.label == label)
                .unwrap_or_else(|| panic!("no kernel declared as {label}"));
            make_kernel(
                device,
                d.label,
                &shaders::kernel_specialized(d.file, slots, spec),
                d.entry,
                d.table,
            )
        };
        Self {
            permute_take: k("dem.permute.take"),
            permute_put: k("dem.permute.put"),
            permute_invert: k("dem.permute.invert"),
            rebuild_plan: k("dem.rebuild.plan"),
            rebuild_walls: k("dem.rebuild.walls_near"),
            rebuild_walls_alloc: k("dem.rebuild.walls_alloc"),
            rebuild_halt: k("dem.rebuild.halt"),
            lean_plan: k("dem.rebuild.lean_plan"),
            close: k("dem.rebuild.close"),
            force: k("dem.rebuild.force"),
            hash_clear: k("dem.hash.clear"),
            hash: k("dem.hash"),
            hash_order: k("dem.hash.order"),
            radix_count: k("dem.radix.count"),
            radix_scan: k("dem.radix.scan"),
            radix_scatter: k("dem.radix.scatter"),
            buckets_scan: k("dem.buckets.scan"),
            buckets_scatter: k("dem.buckets.scatter"),
            buckets_settle: k("dem.buckets.settle"),
            neighbours: k("dem.neighbours"),
            link: k("dem.neighbours.link"),
            contacts: k("dem.contact_forces"),
            contacts_only: k("dem.contact_forces.forces_only"),
            reduce_walls: k("dem.wall_reduce.walls"),
            reduce_stats: k("dem.wall_reduce.stats"),
            integrate: k("dem.integrate"),
            moisture: k("dem.moisture"),
            steps: single_workgroup.then(|| k("dem.integrate.steps")),
            cell_reduce: periodic
                .then(|| (k("dem.cell_reduce.partials"), k("dem.cell_reduce.total"))),
            row_reduce: (k("dem.row_reduce.partials"), k("dem.row_reduce.total")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// OpenGL through llvmpipe allows 16 storage buffers per stage and the contact kernel binds
    /// 19: refused with both figures before any pipeline (wgpu's validation panicked there);
    /// lavapipe's Vulkan (far more) passes.
    #[test]
    fn a_device_with_too_few_storage_buffers_is_refused_up_front() {
        let needed = storage_buffers_per_kernel();
        assert_eq!(needed, 21, "the contact kernel's storage bindings");
        let e = check_storage_buffers(16).map_err(|e| e.to_string());
        assert!(
            e.as_ref()
                .is_err_and(|e| e.contains("allows 16 storage buffers")
                    && e.contains("bind 21")
                    && e.contains("CPU reference")),
            "{e:?}"
        );
        assert!(check_storage_buffers(needed).is_ok());
        assert!(check_storage_buffers(u32::MAX).is_ok());
    }
}
