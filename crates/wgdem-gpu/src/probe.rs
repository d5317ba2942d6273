//! Test support: evaluates the WGSL contact law (`contact_force` in common.wgsl) on many
//! contact states at once, through the `contact_law_probe` entry point, so that it can be
//! compared with the CPU law; and the hash's cell packing (`cell_probe`).

use bytemuck::{Pod, Zeroable};
use wgpu::util::DeviceExt;

use crate::context::{GpuError, bind_buffers, read_buffer};
use crate::layout::PairRecord;
use crate::shaders;

/// One contact state (`ProbeIn` in contact_law_probe.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct ProbeIn {
    /// Unit normal, then overlap δ.
    pub normal_overlap: [f32; 4],
    /// Relative velocity, then effective mass.
    pub velocity: [f32; 4],
    /// Relative displacement of the step, then effective radius.
    pub displacement: [f32; 4],
    /// Previous tangential displacement, then padding.
    pub u_prev: [f32; 4],
    /// Pair index into the table, law (0 Hooke, 1 Hertz), history (0 true, 1 pseudo, 2 none).
    pub mode: [u32; 4],
}

/// The law's result (`ProbeOut`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct ProbeOut {
    /// Force on B, then the signed normal force.
    pub force: [f32; 4],
    /// New tangential displacement, then 1.0 if sliding.
    pub tangential: [f32; 4],
}

/// Runs the WGSL law on `inputs` with the material-pair table `pairs`.
pub fn contact_law(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    pairs: &[PairRecord],
    inputs: &[ProbeIn],
) -> Result<Vec<ProbeOut>, GpuError> {
    run_probe(
        device,
        queue,
        "dem.contact_law_probe",
        shaders::CONTACT_LAW_PROBE,
        &[bytemuck::cast_slice(pairs), bytemuck::cast_slice(inputs)],
        inputs.len(),
    )
}

/// A cell to pack and the cell to unpack its word near (`CellCase` in cell_probe.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct CellCase {
    /// The cell's coordinates, then padding.
    pub cell: [i32; 4],
    /// The cell to unpack near, then padding.
    pub near: [i32; 4],
}

/// The packed word and the cell unpacked from it (`CellOut`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct CellOut {
    /// The packed word, then padding.
    pub packed: [u32; 4],
    /// The cell nearest `near` with that word, then padding.
    pub unpacked: [i32; 4],
}

/// Runs the GPU's `pack_cell` and `unpack_cell_near` (common.wgsl) on `cases`.
pub fn cells(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    cases: &[CellCase],
) -> Result<Vec<CellOut>, GpuError> {
    run_probe(
        device,
        queue,
        "dem.cell_probe",
        shaders::CELL_PROBE,
        &[bytemuck::cast_slice(cases)],
        cases.len(),
    )
}

/// Runs the `main` entry point of the test kernel `kernel` (composed with the shared modules) once per
/// output: bindings 0.. are the read-only `inputs`, the next one `count` outputs of `T`.
fn run_probe<T: Pod>(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    label: &str,
    kernel: &str,
    inputs: &[&[u8]],
    count: usize,
) -> Result<Vec<T>, GpuError> {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(shaders::source(kernel).into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let mut buffers: Vec<wgpu::Buffer> = inputs
        .iter()
        .map(|bytes| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            })
        })
        .collect();
    buffers.push(device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: (count * size_of::<T>()) as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    }));
    let group = bind_buffers(
        device,
        label,
        &pipeline.get_bind_group_layout(0),
        &buffers.iter().collect::<Vec<_>>(),
    );
    let mut encoder =
        device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
    {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups((count as u32).div_ceil(crate::shared::WG), 1, 1);
    }
    queue.submit([encoder.finish()]);
    read_buffer(device, queue, &buffers[inputs.len()], count)
}
