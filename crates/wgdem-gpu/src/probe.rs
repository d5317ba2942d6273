//! Test support: evaluates the WGSL contact law (`contact_force` in common.wgsl) on many
//! contact states at once, through the `contact_law_probe` entry point, so that it can be
//! compared with the CPU law.

use bytemuck::{Pod, Zeroable};
use wgpu::util::DeviceExt;

use crate::context::{GpuError, read_buffer};
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
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("dem.contact_law_probe"),
        source: wgpu::ShaderSource::Wgsl(shaders::source(shaders::CONTACT_LAW_PROBE).into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("dem.contact_law_probe"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let storage = |label: &str, bytes: &[u8]| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        })
    };
    let table = storage("dem.probe.pairs", bytemuck::cast_slice(pairs));
    let input = storage("dem.probe.in", bytemuck::cast_slice(inputs));
    let out_bytes = (inputs.len() * size_of::<ProbeOut>()) as u64;
    let output = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("dem.probe.out"),
        size: out_bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("dem.contact_law_probe"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: table.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: input.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: output.as_entire_binding(),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("dem.contact_law_probe"),
    });
    {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("dem.contact_law_probe"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups((inputs.len() as u32).div_ceil(64), 1, 1);
    }
    queue.submit([encoder.finish()]);
    read_buffer(device, queue, &output, inputs.len())
}
