//! Tables that do not fit the device's binding limit are refused with a message naming the
//! table, its capacity and what was needed — at creation and when regrowing.

mod common;

use common::scene;
use wgdem_gpu::{GpuEngine, GpuOptions};

const LIMIT: u64 = 256 * 1024;

/// A device like the test machine's, but binding at most 256 KiB per storage buffer.
fn small_device() -> Option<(wgpu::Device, wgpu::Queue)> {
    let ctx = common::gpu()?;
    let adapter_limits = ctx.device.limits();
    drop(ctx);
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter =
        pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
            .unwrap_or_else(|e| panic!("{e}"));
    let limits = wgpu::Limits {
        max_storage_buffer_binding_size: LIMIT,
        ..adapter_limits
    };
    let device = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("dem.test.small_device"),
        required_limits: limits,
        ..Default::default()
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    Some(device)
}

fn packing(count: u32) -> wgdem_core::cpu::Simulation {
    scene(&format!(
        r#"
        [simulation]
        duration = 1.0
        output_interval = 1.0
        seed = 9
        [contact]
        law = "hertz"
        history = "true"
        [[materials]]
        name = "m"
        density = 2500.0
        friction = 0.5
        young_modulus = 1e7
        poisson_ratio = 0.3
        restitution = 0.5
        [[particles]]
        kind = "random"
        material = "m"
        count = {count}
        region = {{ min = [0.0, 0.0, 0.0], max = [0.05, 0.05, 0.06] }}
        size = {{ distribution = "uniform", min_diameter = 0.002, max_diameter = 0.003 }}
        [[walls]]
        kind = "plane"
        name = "floor"
        material = "m"
        point = [0.0, 0.0, 0.0]
        normal = [0.0, 0.0, 1.0]
        "#
    ))
    .simulation
}

#[test]
fn a_table_over_the_binding_limit_is_refused_by_name() {
    let Some((device, queue)) = small_device() else {
        return;
    };
    // 1 000 particles × 32 slots × 16 B = 512 000 B > 256 KiB.
    let options = GpuOptions {
        slots: 32,
        ..GpuOptions::default()
    };
    let err = GpuEngine::new(&device, &queue, &packing(1000), options)
        .err()
        .map(|e| e.to_string())
        .expect("must be refused");
    assert!(
        err.contains("dem.contact_history") && err.contains("512000 bytes"),
        "{err}"
    );
    assert!(err.contains("1000 particles × 32 neighbour slots"), "{err}");
}

#[test]
fn a_regrowth_past_the_binding_limit_stops_the_run_with_the_count_needed() {
    let Some((device, queue)) = small_device() else {
        return;
    };
    // 3 000 particles × 1 slot × 16 B = 48 000 B fit. The first overflow comes when a sphere
    // has two neighbours; regrowing asks for needed + 4 ≥ 6 slots, 288 000 B > 256 KiB.
    let sim = packing(3000);
    let options = GpuOptions {
        slots: 1,
        ..GpuOptions::default()
    };
    let mut engine =
        GpuEngine::new(&device, &queue, &sim, options).unwrap_or_else(|e| panic!("{e}"));
    let err = engine.run(4000).err().map(|e| e.to_string());
    let slots = engine.slots();
    match err {
        Some(m) => {
            eprintln!("{m}");
            assert!(
                m.contains("dem.contact_history") && m.contains("a particle needed"),
                "{m}"
            );
            assert!(m.contains("capacity"), "{m}");
        }
        None => panic!("the packing never needed more than {slots} slots; the test tests nothing"),
    }
}
