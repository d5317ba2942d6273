//! wgdem GPU engine: the CPU reference's physics as WGSL compute kernels through wgpu.
//!
//! - [`context`]: picking an adapter and creating a device (the one place that does);
//! - [`engine`]: [`engine::GpuEngine`]; its module `step` records the passes of one time step in
//!   order, and its other modules each own one job (state and sizing, kernels, bind groups,
//!   streaming, regrowth, checkpoints, profiling, readback);
//! - [`backend`]: the engine as a runner backend for the CLI and the shear pipeline;
//! - [`shaders`], [`layout`], [`shared`]: the kernels, the Rust mirrors of their structs, and
//!   the constants both share (emitted into every kernel);
//! - [`contact_probe`]: the contact models driven through given kinematics (`wgdem contact`).
//!
//! Library code takes a `wgpu::Device` and `wgpu::Queue` from its caller.

pub mod backend;
pub mod contact_probe;
pub mod context;
pub mod engine;
pub mod error;
pub mod layout;
pub mod probe;
pub mod shaders;
pub mod shared;

pub use backend::GpuBackend;
pub use context::GpuContext;
pub use engine::{GpuEngine, GpuOptions, LEAN_EVERY, STAGES, StageTimes, WallControl, WallReadout};
pub use error::GpuError;
