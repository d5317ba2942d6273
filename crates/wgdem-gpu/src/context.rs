//! Picking an adapter and creating the device: the one place that does.

pub use crate::error::GpuError;

/// A device, its queue and what adapter they came from.
#[derive(Debug)]
pub struct GpuContext {
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// The adapter's description.
    pub info: wgpu::AdapterInfo,
}

/// Copies beyond the first in the longer submission of [`GpuContext::copy_bandwidth`].
pub const COPIES: u32 = 4;

impl GpuContext {
    /// Picks an adapter and creates a device with the adapter's own limits and, of the
    /// optional features, only timestamp queries where the adapter has them (for
    /// [`crate::GpuEngine::profile_stages`]).
    ///
    /// `name` (or, when `None`, the `WGPU_ADAPTER_NAME` environment variable) selects the first
    /// adapter whose name contains it, case-insensitively, or whose PCI bus id it is; otherwise
    /// a high-performance adapter is preferred.
    pub fn new(name: Option<&str>) -> Result<Self, GpuError> {
        pollster::block_on(Self::new_async(name))
    }

    /// Measured device-memory copy bandwidth (bytes per second, read plus write) of copies of
    /// `bytes` bytes between two device buffers (capped at the adapter's largest buffer): a
    /// submission of one copy and one of [`COPIES`] + 1, each timed from submit to completion,
    /// the difference over the [`COPIES`] extra copies, best of two rounds (where timing noise
    /// leaves no positive difference, the single copies' best, a lower bound). The difference
    /// leaves out the submission's own cost, which a single copy's time included: on an NVIDIA
    /// H200 that put 256 MiB copies at 0.6–0.76 TB/s, a sixth of what the card moves, below
    /// what the contact stage itself reached. The reference against which `wgdem bench`
    /// states each stage's achieved bandwidth.
    pub fn copy_bandwidth(&self, bytes: u64) -> Result<f64, GpuError> {
        let limit = self.device.limits().max_buffer_size;
        let size = (bytes.min(limit) / 4 * 4).max(4);
        let make = |label, usage| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        let src = make("dem.bandwidth.src", wgpu::BufferUsages::COPY_SRC);
        let dst = make("dem.bandwidth.dst", wgpu::BufferUsages::COPY_DST);
        let timed = |copies: u32| -> Result<f64, GpuError> {
            let mut encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("dem.bandwidth"),
                });
            for _ in 0..copies {
                encoder.copy_buffer_to_buffer(&src, 0, &dst, 0, size);
            }
            let t0 = std::time::Instant::now();
            self.queue.submit([encoder.finish()]);
            self.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| GpuError::Readback(e.to_string()))?;
            Ok(t0.elapsed().as_secs_f64())
        };
        timed(1)?; // the first submission pays for the buffers' first touch
        let (mut best, mut single) = (0.0f64, f64::INFINITY);
        for _ in 0..2 {
            let one = timed(1)?;
            let extra = timed(COPIES + 1)? - one;
            single = single.min(one);
            if extra > 0.0 {
                best = best.max(2.0 * size as f64 * f64::from(COPIES) / extra);
            }
        }
        Ok(if best > 0.0 {
            best
        } else {
            2.0 * size as f64 / single
        })
    }

    async fn new_async(name: Option<&str>) -> Result<Self, GpuError> {
        let adapter = pick_adapter(name).await?;
        let info = adapter.get_info();
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("dem.device"),
                // Timestamps for `bench`; 64-bit integers for the per-step kernels' 64-bit
                // words (`shaders::Specialization::words64`), where the adapter has them.
                required_features: adapter.features()
                    & (wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::SHADER_INT64),
                required_limits: adapter.limits(),
                experimental_features: wgpu::ExperimentalFeatures::disabled(),
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            })
            .await
            .map_err(|e| GpuError::Device(e.to_string()))?;
        Ok(Self {
            device,
            queue,
            info,
        })
    }

    /// Whether the adapter runs on the CPU (lavapipe, SwiftShader, WARP): a software driver.
    pub fn is_software(&self) -> bool {
        is_software(&self.info)
    }

    /// "name (backend, device type; driver NAME VERSION)" of the adapter.
    pub fn describe(&self) -> String {
        describe(&self.info)
    }
}

/// The adapter [`GpuContext::new`] takes for `name` (see there), without creating a device:
/// what [`adapter_info`] and the device creation share. An OpenGL adapter is refused unless
/// asked for ([`refuse_gl`]).
async fn pick_adapter(name: Option<&str>) -> Result<wgpu::Adapter, GpuError> {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let wanted = name
        .map(str::to_owned)
        .or_else(|| std::env::var("WGPU_ADAPTER_NAME").ok())
        .filter(|s| !s.is_empty());
    let adapters = instance.enumerate_adapters(wgpu::Backends::all()).await;
    let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
    let adapter = match &wanted {
        Some(w) => adapters.into_iter().find(|a| is_named(&a.get_info(), w)),
        None => instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: None,
                ..Default::default()
            })
            .await
            .ok(),
    };
    let adapter = adapter.ok_or_else(|| match wanted.clone() {
        Some(requested) => GpuError::NoNamedAdapter {
            requested,
            available: names,
        },
        None => GpuError::NoAdapter,
    })?;
    let info = adapter.get_info();
    let gl_asked = wanted.is_some()
        || std::env::var("WGDEM_ALLOW_GL").is_ok_and(|v| v == "1")
        || std::env::var("WGPU_BACKEND").is_ok_and(|v| v.to_lowercase().contains("gl"));
    if let Some(refusal) = refuse_gl(info.backend, &info.name, gl_asked) {
        return Err(refusal);
    }
    Ok(adapter)
}

/// What [`GpuContext::new`] would take for `name`, without creating a device (which costs tens
/// to hundreds of milliseconds on lavapipe): for a choice between the engines.
pub fn adapter_info(name: Option<&str>) -> Result<wgpu::AdapterInfo, GpuError> {
    pollster::block_on(pick_adapter(name)).map(|a| a.get_info())
}

/// Whether `wanted` (an `adapter` argument) names the adapter: a part of its name,
/// case-insensitively, or its whole PCI bus id (which tells identical GPUs apart).
fn is_named(info: &wgpu::AdapterInfo, wanted: &str) -> bool {
    info.name.to_lowercase().contains(&wanted.to_lowercase())
        || (!info.device_pci_bus_id.is_empty() && info.device_pci_bus_id == wanted)
}

/// Whether two adapters are one device listed under two APIs: the same PCI bus id where the
/// driver gives one, else the same vendor, device and name.
fn same_device(a: &wgpu::AdapterInfo, b: &wgpu::AdapterInfo) -> bool {
    if !a.device_pci_bus_id.is_empty() || !b.device_pci_bus_id.is_empty() {
        return a.device_pci_bus_id == b.device_pci_bus_id;
    }
    (a.vendor, a.device, &a.name) == (b.vendor, b.device, &b.name)
}

/// The adapters a run could take, without creating a device: each device once (the first API
/// the instance lists it under; identical GPUs apart by their PCI bus ids), OpenGL ones left
/// out as [`GpuContext::new`] leaves them unless asked for. What a sweep sizes its workers by;
/// an adapter's PCI bus id, where it has one, selects it as an `adapter` argument.
pub fn adapters() -> Vec<wgpu::AdapterInfo> {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let mut seen: Vec<wgpu::AdapterInfo> = Vec::new();
    for adapter in pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all())) {
        let info = adapter.get_info();
        if info.backend != wgpu::Backend::Gl && !seen.iter().any(|o| same_device(o, &info)) {
            seen.push(info);
        }
    }
    seen
}

/// Whether an adapter runs on the CPU (lavapipe, SwiftShader, WARP): a software driver.
pub fn is_software(info: &wgpu::AdapterInfo) -> bool {
    info.device_type == wgpu::DeviceType::Cpu
}

/// "name (backend, device type; driver NAME VERSION)" of an adapter.
pub fn describe(info: &wgpu::AdapterInfo) -> String {
    // The driver's version (e.g. "Mesa 25.0.7" for lavapipe) matters as much as the
    // device to a benchmark.
    let driver = [&info.driver, &info.driver_info]
        .into_iter()
        .filter(|s| !s.is_empty())
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ");
    let driver = if driver.is_empty() {
        String::new()
    } else {
        format!("; driver {driver}")
    };
    format!(
        "{} ({:?}, {:?}{driver})",
        info.name, info.backend, info.device_type
    )
}

/// Reads the first `count` elements of `T` from `buffer` (which needs `COPY_SRC`), waiting for
/// the GPU. Used outside the step loop only.
pub fn read_buffer<T: bytemuck::Pod>(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffer: &wgpu::Buffer,
    count: usize,
) -> Result<Vec<T>, GpuError> {
    let bytes = (count * size_of::<T>()) as u64;
    let read = read_buffers(device, queue, &[(buffer, bytes)])?;
    Ok(bytemuck::pod_collect_to_vec(&read.concat()))
}

/// The first `bytes` of each of `parts` (multiples of 4), copied into one staging buffer by one
/// submission and read with one wait: a host that reads the state back often (a servo, a
/// protocol's rows) pays the driver's round trip once rather than once per buffer.
pub fn read_buffers(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    parts: &[(&wgpu::Buffer, u64)],
) -> Result<Vec<Vec<u8>>, GpuError> {
    let total: u64 = parts.iter().map(|(_, bytes)| bytes).sum();
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("dem.readback"),
        size: total.max(4),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("dem.readback"),
    });
    let mut at = 0;
    for &(buffer, bytes) in parts {
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, at, bytes);
        at += bytes;
    }
    queue.submit([encoder.finish()]);
    // Each part copied out of the mapped range once (a whole copy first, then the parts,
    // moved every byte twice: at 10⁶ spheres a row reads about 120 MB back).
    with_mapped(device, &staging, total, |all| {
        let mut at = 0;
        parts
            .iter()
            .map(|&(_, bytes)| {
                let part = all[at..at + bytes as usize].to_vec();
                at += bytes as usize;
                part
            })
            .collect()
    })
}

/// Waits for the work submitted so far, then maps the first `bytes` of the `MAP_READ`
/// buffer `staging` and returns them as `T`s (the buffer is unmapped again).
pub fn map_and_read<T: bytemuck::Pod>(
    device: &wgpu::Device,
    staging: &wgpu::Buffer,
    bytes: u64,
) -> Result<Vec<T>, GpuError> {
    with_mapped(device, staging, bytes, |view| {
        bytemuck::pod_collect_to_vec::<u8, T>(view)
    })
}

/// Waits for the work submitted so far, maps the first `bytes` of the `MAP_READ` buffer
/// `staging`, hands them to `read` and unmaps the buffer again.
fn with_mapped<R>(
    device: &wgpu::Device,
    staging: &wgpu::Buffer,
    bytes: u64,
    read: impl FnOnce(&[u8]) -> R,
) -> Result<R, GpuError> {
    let (tx, rx) = std::sync::mpsc::channel();
    staging.map_async(wgpu::MapMode::Read, ..bytes.max(4), move |r| {
        let _ = tx.send(r);
    });
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| GpuError::Readback(e.to_string()))?;
    rx.recv()
        .map_err(|e| GpuError::Readback(e.to_string()))?
        .map_err(|e| GpuError::Readback(e.to_string()))?;
    let out = {
        let view = staging
            .get_mapped_range(..bytes.max(4))
            .map_err(|e| GpuError::Readback(e.to_string()))?;
        read(&view[..bytes as usize])
    };
    staging.unmap();
    Ok(out)
}

/// A bind group of `layout` whose binding k is the whole of `buffers[k]`.
pub(crate) fn bind_buffers(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: b.as_entire_binding(),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    })
}

/// The refusal of an OpenGL adapter picked without being asked for: wgpu falls back to GL
/// where no Vulkan, Metal or DX12 driver exists, and the engine runs there two orders of
/// magnitude slower (an 8-sphere run took 173 s against 1 s on lavapipe's Vulkan).
fn refuse_gl(backend: wgpu::Backend, name: &str, asked: bool) -> Option<GpuError> {
    (backend == wgpu::Backend::Gl && !asked).then(|| GpuError::OnlyGl {
        adapter: name.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "llvmpipe (LLVM 15.0.6, 256 bits)";

    #[test]
    fn an_opengl_adapter_is_used_only_when_asked_for() {
        let refusal = refuse_gl(wgpu::Backend::Gl, NAME, false).map(|e| e.to_string());
        assert!(
            refusal.as_ref().is_some_and(|e| e.contains("llvmpipe")
                && e.contains("OpenGL")
                && e.contains("Vulkan driver")),
            "{refusal:?}"
        );
        assert!(refuse_gl(wgpu::Backend::Gl, NAME, true).is_none());
        assert!(refuse_gl(wgpu::Backend::Vulkan, NAME, false).is_none());
    }

    fn gpu(name: &str, pci: &str, backend: wgpu::Backend) -> wgpu::AdapterInfo {
        wgpu::AdapterInfo {
            name: name.to_owned(),
            vendor: 0x10de,
            device: 0x2330,
            device_pci_bus_id: pci.to_owned(),
            ..wgpu::AdapterInfo::new(wgpu::DeviceType::DiscreteGpu, backend)
        }
    }

    fn lavapipe() -> wgpu::AdapterInfo {
        wgpu::AdapterInfo {
            name: NAME.to_owned(),
            vendor: 0x10005,
            ..wgpu::AdapterInfo::new(wgpu::DeviceType::Cpu, wgpu::Backend::Vulkan)
        }
    }

    /// Two identical GPUs are two devices, told apart and selected by their PCI bus ids; one
    /// GPU under two APIs is one device; a name selects by a part of it.
    #[test]
    fn identical_gpus_are_apart_by_their_pci_bus_ids() {
        let a = gpu(
            "NVIDIA H100 80GB HBM3",
            "0000:18:00.0",
            wgpu::Backend::Vulkan,
        );
        let b = gpu(
            "NVIDIA H100 80GB HBM3",
            "0000:2a:00.0",
            wgpu::Backend::Vulkan,
        );
        let a_again = gpu("NVIDIA H100 80GB HBM3", "0000:18:00.0", wgpu::Backend::Dx12);
        assert!(!same_device(&a, &b));
        assert!(same_device(&a, &a_again));
        assert!(same_device(&lavapipe(), &lavapipe()));
        assert!(!same_device(&lavapipe(), &a));
        assert!(is_named(&b, "0000:2a:00.0") && !is_named(&a, "0000:2a:00.0"));
        assert!(is_named(&a, "h100") && is_named(&lavapipe(), "LLVMPIPE"));
        assert!(
            !is_named(&lavapipe(), "0000:18:00.0"),
            "no PCI bus id: named by its name"
        );
    }
}
