//! Tables larger than the device's binding limit: the neighbour slots (contact history) are
//! split into chunks that fit, with results identical to an unsplit run; what cannot be split
//! is refused with a message naming the table, its size and the limit.

mod common;

use common::{gpu, random_spheres_on_a_floor, scene};
use wgdem_gpu::{GpuEngine, GpuOptions};

/// A device like the test machine's, but binding at most `limit` bytes per storage buffer.
fn device_with_binding_limit(limit: u64) -> Option<(wgpu::Device, wgpu::Queue)> {
    let adapter_limits = gpu()?.device.limits();
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter =
        pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
            .unwrap_or_else(|e| panic!("{e}"));
    let device = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("dem.test.limited_device"),
        required_limits: wgpu::Limits {
            max_storage_buffer_binding_size: limit,
            ..adapter_limits
        },
        ..Default::default()
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    Some(device)
}

fn packing(count: u32, box_len: f64) -> wgdem_core::cpu::Simulation {
    packing_with(count, box_len, "")
}

/// The packing with extra `[contact]` keys (a pair model for the spheres).
fn packing_with(count: u32, box_len: f64, pairs: &str) -> wgdem_core::cpu::Simulation {
    random_spheres_on_a_floor(
        count,
        [box_len, box_len, 0.04],
        9,
        &format!("law = \"hertz\"\nhistory = \"true\"\n{pairs}"),
    )
}

/// 3 000 particles start with 4 slots each (192 000 B of contact history, one chunk under a
/// 256 KiB binding limit); as contacts form the table is regrown (to 9 slots, 432 000 B) and
/// the limited device splits it in two. After 3 000 steps of pouring, with hundreds of
/// contacts, the split run is bitwise identical to the same run on the unrestricted device:
/// splitting changes where slots live, not what is computed or in which order.
#[test]
fn slot_tables_over_the_binding_limit_are_split_without_changing_results() {
    split_without_changing_results(packing(3000, 0.05), 256 * 1024, 300, false);
}

/// The same with Kuhn's linear contact at every sphere pair (32-byte slots carrying the model's state):
/// regrowth, splitting and reordering move the wider slots whole. The unsplit run evaluates each
/// pair once (`GpuOptions::pairs_once`, the default for wide slots, on one chunk), the split
/// run on both sides: the same bits again.
#[test]
fn wide_slot_tables_over_the_binding_limit_are_split_without_changing_results() {
    let linear = r#"
        [[contact.pairs]]
        materials = ["m", "m"]
        model = "linear"
        kn = 500.0
        kt = 500.0
    "#;
    // Softer contacts form fewer in the same 3 000 steps; over a hundred still slide and stick.
    split_without_changing_results(packing_with(3000, 0.05, linear), 512 * 1024, 100, true);
}

/// `wide`: the pairs' slots are wide (pairs evaluated once where one chunk holds them, on a
/// software adapter).
fn split_without_changing_results(
    sim: wgdem_core::cpu::Simulation,
    limit: u64,
    min_contacts: usize,
    wide: bool,
) {
    let Some(ctx) = gpu() else { return };
    let Some((device, queue)) = device_with_binding_limit(limit) else {
        return;
    };
    let options = GpuOptions {
        slots: 4,
        ..GpuOptions::default()
    };
    let run = |device: &wgpu::Device, queue: &wgpu::Queue| {
        let mut engine =
            GpuEngine::new(device, queue, &sim, options).unwrap_or_else(|e| panic!("{e}"));
        let chunks_at_start = engine.slot_chunks();
        engine.run(3000).unwrap_or_else(|e| panic!("{e}"));
        // Pairs once where the slots are wide, one chunk holds them all and the adapter is
        // a software one.
        let software = device.adapter_info().device_type == wgpu::DeviceType::Cpu;
        assert_eq!(
            engine.pairs_once(),
            wide && engine.slot_chunks() == 1 && software,
            "the choice of pairs once"
        );
        let mut out = sim.clone();
        engine.read_into(&mut out).unwrap_or_else(|e| panic!("{e}"));
        (
            out,
            chunks_at_start,
            engine.slot_chunks(),
            engine.regrowths,
            engine.slots(),
        )
    };
    let (whole, whole_chunks, _, whole_regrowths, _) = run(&ctx.device, &ctx.queue);
    let (split, first, last, regrowths, slots) = run(&device, &queue);
    eprintln!(
        "unrestricted: {whole_chunks} chunk, {whole_regrowths} regrowths; limited: {first} → {last} chunks, {regrowths} regrowths to {slots} slots; {} contacts",
        split.stats.contacts
    );
    assert_eq!(whole_chunks, 1);
    assert!(last > 1, "the limited device never split the table");
    assert!(regrowths > 0, "no regrowth happened");
    assert!(
        split.stats.contacts > min_contacts,
        "too few contacts to test anything"
    );
    assert_eq!(whole.particles.position, split.particles.position);
    assert_eq!(whole.particles.velocity, split.particles.velocity);
    assert_eq!(whole.stats, split.stats);
    assert_eq!(whole.walls[0].force, split.walls[0].force);
}

/// What cannot be split is refused by name: the slots of 64 particles (one workgroup) must fit one
/// binding, and tables indexed across all particles (positions, wall partial sums) must fit
/// whole.
#[test]
fn what_cannot_be_split_is_refused_by_name() {
    let Some((device, queue)) = device_with_binding_limit(1024) else {
        return;
    };
    let options = GpuOptions {
        slots: 128,
        ..GpuOptions::default()
    };
    let err = GpuEngine::new(&device, &queue, &packing(10, 0.02), options)
        .err()
        .map(|e| e.to_string())
        .expect("must be refused");
    assert!(
        err.contains("dem.contact_history") && err.contains("131072 bytes"),
        "{err}"
    );
    let err = GpuEngine::new(
        &device,
        &queue,
        &packing(100, 0.03),
        GpuOptions {
            slots: 1,
            ..GpuOptions::default()
        },
    )
    .err()
    .map(|e| e.to_string())
    .expect("must be refused");
    assert!(
        err.contains("GPU table dem.") && err.contains("at most 1024 bytes"),
        "{err}"
    );
}

/// A sphere pushed into a corner touches three walls at once. Starting with one wall slot per
/// particle, the rebuild finds three walls within the skin, the batch stops before that step
/// commits anything, the table is regrown (to three) and the batch continues; the run is
/// bitwise identical to one that had enough wall slots from the start, and its history holds
/// the sphere still in the corner (static friction on three walls under tilted gravity).
#[test]
fn wall_slots_are_regrown_without_changing_results() {
    let Some(ctx) = gpu() else { return };
    let sim = scene(
        r#"
        [simulation]
        duration = 1.0
        output_interval = 1.0
        gravity = [-3.0, -3.0, -9.0]
        [contact]
        law = "hertz"
        history = "true"
        # fixture: material_m
        [[particles]]
        kind = "explicit"
        material = "m"
        spheres = [{ position = [0.005, 0.005, 0.005], radius = 0.005 }]
        [[walls]]
        kind = "plane"
        name = "floor"
        material = "m"
        point = [0.0, 0.0, 0.0]
        normal = [0.0, 0.0, 1.0]
        [[walls]]
        kind = "plane"
        name = "west"
        material = "m"
        point = [0.0, 0.0, 0.0]
        normal = [1.0, 0.0, 0.0]
        [[walls]]
        kind = "plane"
        name = "south"
        material = "m"
        point = [0.0, 0.0, 0.0]
        normal = [0.0, 1.0, 0.0]
        [[walls]]
        kind = "plane"
        name = "lid"
        material = "m"
        point = [0.0, 0.0, 0.1]
        normal = [0.0, 0.0, -1.0]
        "#,
    )
    .simulation;
    let run = |wall_slots: u32| {
        let options = GpuOptions {
            wall_slots,
            batch_steps: 100,
            ..GpuOptions::default()
        };
        let mut engine = GpuEngine::new(&ctx.device, &ctx.queue, &sim, options)
            .unwrap_or_else(|e| panic!("{e}"));
        engine.run(2000).unwrap_or_else(|e| panic!("{e}"));
        let mut out = sim.clone();
        engine.read_into(&mut out).unwrap_or_else(|e| panic!("{e}"));
        (out, engine.regrowths, engine.wall_slots())
    };
    let (small, regrowths, slots) = run(1);
    let (ample, ample_regrowths, _) = run(4);
    eprintln!(
        "1 wall slot: {regrowths} regrowths to {slots}; 4 slots: {ample_regrowths} regrowths"
    );
    assert!(regrowths > 0 && slots >= 3);
    assert_eq!(ample_regrowths, 0);
    assert_eq!(small.stats.wall_contacts, 3);
    assert_eq!(small.particles.position, ample.particles.position);
    assert_eq!(small.particles.velocity, ample.particles.velocity);
    for (a, b) in small.walls.iter().zip(&ample.walls) {
        assert_eq!(a.force, b.force);
    }
}

/// `profile_stages` (the per-stage timing of `wgdem bench`) starts here from tables far too
/// small for the bench's lattice: one neighbour slot (each sphere has six partners), one wall
/// slot (corner spheres touch three walls) and one row of wall slots. Each overflowing step
/// commits nothing, the tables are regrown and the step taken again, so the profiled steps end
/// bitwise where a batched run with tables sized from the scene does.
#[test]
fn profiling_regrows_overflowing_tables_instead_of_failing() {
    let Some(ctx) = gpu() else { return };
    let sim = wgdem_core::bench::specimen(1000, "hertz").unwrap_or_else(|e| panic!("{e}"));
    let steps = 30;
    let tiny = GpuOptions {
        slots: 1,
        wall_slots: 1,
        wall_rows: 1,
        ..GpuOptions::default()
    };
    let mut profiled =
        GpuEngine::new(&ctx.device, &ctx.queue, &sim, tiny).unwrap_or_else(|e| panic!("{e}"));
    let times = profiled
        .profile_stages(steps)
        .unwrap_or_else(|e| panic!("profiling failed: {e}"));
    let mut batched = GpuEngine::new(&ctx.device, &ctx.queue, &sim, GpuOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    batched.run(steps).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{} regrowths to {} neighbour slots, {} wall slots, {} wall rows; stage seconds {:?}",
        profiled.regrowths,
        profiled.slots(),
        profiled.wall_slots(),
        profiled.wall_rows(),
        times.cpu
    );
    assert_eq!(profiled.steps, steps);
    assert!(profiled.regrowths >= 3, "every table must have regrown");
    assert!(profiled.slots() >= 6 && profiled.wall_slots() >= 3);
    assert!(times.cpu.iter().all(|&t| t > 0.0));
    let (mut a, mut b) = (sim.clone(), sim.clone());
    profiled.read_into(&mut a).unwrap_or_else(|e| panic!("{e}"));
    batched.read_into(&mut b).unwrap_or_else(|e| panic!("{e}"));
    // (Profiling does not sum the contact counts, so only the state is compared.)
    assert_eq!(a.particles.position, b.particles.position);
    assert_eq!(a.particles.velocity, b.particles.velocity);
    assert_eq!(a.particles.angular_velocity, b.particles.angular_velocity);
}
