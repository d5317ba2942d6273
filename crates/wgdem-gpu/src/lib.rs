//! wgdem GPU engine: the CPU reference's physics as WGSL compute kernels through wgpu.
//!
//! - [`context`]: picking an adapter and creating a device (the one place that does);
//! - [`engine`]: [`engine::GpuEngine`], buffers, pipelines and the passes of a step;
//! - [`shaders`], [`layout`]: the kernels and the Rust mirrors of their structs;
//! - [`contact_probe`]: the contact models driven through given kinematics (`wgdem contact`).
//!
//! Library code takes a `wgpu::Device` and `wgpu::Queue` from its caller.

pub mod contact_probe;
pub mod context;
pub mod engine;
pub mod layout;
pub mod probe;
pub mod shaders;

pub use context::{GpuContext, GpuError};
pub use engine::{GpuBackend, GpuEngine, GpuOptions, STAGES, StageTimes, WallControl, WallReadout};
