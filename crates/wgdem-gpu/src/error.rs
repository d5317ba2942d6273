//! Errors of the GPU engine. Messages say what happened and what would fit; they name no
//! command-line flags (the CLI adds its own hints, such as `--backend cpu`).

/// Errors of the GPU engine.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No adapter (matching the requested name, if any) was found.
    #[error("no GPU adapter named like \"{requested}\" (found: {})", list_or_none(.available))]
    NoNamedAdapter {
        /// The name asked for.
        requested: String,
        /// Names of the adapters that exist.
        available: Vec<String>,
    },
    /// No adapter exists at all: no Vulkan, Metal or DX12 driver is installed.
    #[error(
        "no GPU adapter found; install a Vulkan driver (without a GPU, `bash scripts/install-lavapipe.sh` as root from the wgdem sources, or `apt-get install mesa-vulkan-drivers` on Debian/Ubuntu, gives the lavapipe software driver)"
    )]
    NoAdapter,
    /// The only adapter found drives the GPU through OpenGL, and it was not asked for.
    #[error(
        "the only GPU adapter found is \"{adapter}\" through OpenGL, on which the engine runs about a hundred times slower than through Vulkan, Metal or DX12; install a Vulkan driver (without a GPU, `bash scripts/install-lavapipe.sh` as root from the wgdem sources, or `apt-get install mesa-vulkan-drivers` on Debian/Ubuntu), or use it anyway by naming it as the adapter or setting WGDEM_ALLOW_GL=1"
    )]
    OnlyGl {
        /// The adapter's name.
        adapter: String,
    },
    /// The adapter refused to create a device.
    #[error("the GPU adapter could not create a device: {0}")]
    Device(String),
    /// A buffer could not be read back.
    #[error("reading GPU results back failed: {0}")]
    Readback(String),
    /// A storage table is larger than the device can bind.
    #[error(
        "GPU table {table} needs {bytes} bytes ({sizing}) but this adapter binds at most {limit} bytes per buffer; use fewer particles or walls"
    )]
    TableTooLarge {
        /// The table's buffer label (`dem.…`).
        table: &'static str,
        /// Bytes it needs.
        bytes: u64,
        /// The device's binding limit (bytes).
        limit: u64,
        /// How its size comes about.
        sizing: String,
    },
    /// The adapter allows fewer storage buffers per shader stage than a kernel binds.
    #[error(
        "the GPU adapter allows {has} storage buffers per shader stage (max_storage_buffers_per_shader_stage) and the engine's contact and integration kernels bind {needed}; use a Vulkan, Metal or DX12 adapter (without a GPU, the lavapipe software driver: `bash scripts/install-lavapipe.sh`), or the CPU reference"
    )]
    TooFewStorageBuffers {
        /// Its limit.
        has: u32,
        /// The engine's largest kernel's count.
        needed: u32,
    },
    /// The scene has more of something than the engine handles.
    #[error("the GPU engine handles at most {max} {what}; this scene has {count}")]
    TooMany {
        /// What there are too many of.
        what: &'static str,
        /// The scene's count.
        count: u64,
        /// The engine's limit.
        max: u64,
    },
    /// Spheres left every state a granular run reaches (`wgdem_core::guard`).
    #[error(
        "the simulation blew up by step {steps}: {count} sphere-step(s) with a non-finite state or faster than max_speed, the first sphere id {first}; its state stands at step {state_at} (batches already queued ran on)"
    )]
    Runaway {
        /// The step at the end of the batch that showed it.
        steps: u64,
        /// The step the engine's state (and a simulation read back from it) stands at: the
        /// end of the last batch in flight.
        state_at: u64,
        /// Spheres counted (once in each step of the batch).
        count: u32,
        /// The smallest stable id among them.
        first: u32,
    },
    /// A checkpoint does not fit the engine built for its scene.
    #[error("checkpoint does not fit: {0}")]
    Checkpoint(String),
    /// The engine broke one of its own invariants.
    #[error("{0} (a defect of the GPU engine)")]
    Defect(String),
    /// A scene does not fit the GPU engine's limits in another way.
    #[error("{0}")]
    Unsupported(String),
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}
