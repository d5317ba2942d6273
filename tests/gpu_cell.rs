//! The periodic cell on the GPU engine (`[cell]`; engine/cell.rs and the kernels' periodic
//! branches) against the CPU reference and closed forms: an elastic gas through the faces, a
//! packing compressed and sheared in a deforming cell, a compressed lattice's stress, the
//! same bits on every path and after a checkpoint, a cell squeezed too narrow refused, and
//! walls beside a cell: a sphere sliding on a floor with the affine field, a packing between
//! two planes in a cell periodic along x and y.
//!
//! GPU against CPU: the GPU keeps positions and velocities in double-single and the cell's
//! edges too, but evaluates forces in f32 (6e-8 relative). Between contacts the two engines
//! agree to rounding; each contact episode amplifies a difference, and a packing that jams is
//! chaotic. So the comparisons run over the first contacts only, with bounds set from that
//! (each test says its measured figure and its bound).

mod common;

use common::{
    LATTICE_RADIUS, LATTICE_RATE, LATTICE_SIDE, compressed_lattice, gas, gas64, gpu,
    periodic_scene, plane, scene, sphere_on_a_floor_in_a_cell, touching_across,
};
use glam::{DMat3, DVec3};
use wgdem_core::contact::model::ContactKind;
use wgdem_core::cpu::Simulation;
use wgdem_gpu::{GpuEngine, GpuOptions};

/// The largest difference of the spheres' unwrapped positions (m).
fn worst_position(a: &Simulation, b: &Simulation) -> f64 {
    (0..a.particles.len())
        .map(|i| (a.unwrapped_position(i) - b.unwrapped_position(i)).length())
        .fold(0.0, f64::max)
}

/// The largest component of `a − b` (Pa).
fn worst_component(a: DMat3, b: DMat3) -> f64 {
    (a - b)
        .to_cols_array()
        .iter()
        .fold(0.0f64, |m, e| m.max(e.abs()))
}

/// The largest component of the two cells' stress difference over the largest component of
/// `a`'s stress (0 where `a` carries none).
fn stress_error(a: &Simulation, b: &Simulation) -> f64 {
    let (a, b) = (a.stress().expect("a stress"), b.stress().expect("a stress"));
    let norm = a.to_cols_array().iter().fold(0.0f64, |m, e| m.max(e.abs()));
    if norm > 0.0 {
        worst_component(a, b) / norm
    } else {
        0.0
    }
}

fn engine(ctx: &wgdem_gpu::GpuContext, sim: &Simulation, options: GpuOptions) -> GpuEngine {
    GpuEngine::new(&ctx.device, &ctx.queue, sim, options).unwrap_or_else(|e| panic!("{e}"))
}

/// `steps` more steps on the GPU, the state read into `sim`.
fn advance(engine: &mut GpuEngine, sim: &mut Simulation, steps: u64) {
    engine.run(steps).unwrap_or_else(|e| panic!("{e}"));
    engine.read_into(sim).unwrap_or_else(|e| panic!("{e}"));
}

/// The elastic gas of tests/cell.rs (27 spheres at up to 0.5 m/s in a 3 cm periodic cube,
/// μ = 0, restitution 1) for 9 000 steps, read back every 500: it collides, through the faces
/// too, and spheres wrap. The GPU's unwrapped positions follow the CPU's within 1e-7 m (0.005 %
/// of a radius; 2.2e-8 m measured: the free flights agree to 1e-11 m, each collision
/// amplifies), and its momentum stays within 1e-6 of Σ m|v| of its start (the forces of a pair
/// are equal and opposite to the bit, and f32 increments of double-single velocities leave
/// 7e-9 measured).
#[test]
fn an_elastic_gas_follows_the_cpu_reference_through_the_faces() {
    let Some(ctx) = gpu() else { return };
    let cell = "edges = [[0.03, 0.0, 0.0], [0.0, 0.03, 0.0], [0.0, 0.0, 0.03]]";
    let sim = scene(&periodic_scene("hertz", 0.1, cell, &gas(3, 3))).simulation;
    let mut gpu = engine(&ctx, &sim, GpuOptions::default());
    let (mut cpu, mut on_gpu) = (sim.clone(), sim.clone());
    let p0 = sim.particles.momentum();
    let scale: f64 = (0..sim.particles.len())
        .map(|i| sim.particles.mass[i] * sim.particles.velocity[i].length())
        .sum();
    let (mut touching, mut across, mut worst, mut drift) = (0, 0, 0.0f64, 0.0f64);
    for _ in 0..18 {
        cpu.run(500);
        advance(&mut gpu, &mut on_gpu, 500);
        touching += usize::from(cpu.stats.contacts > 0);
        across += touching_across(&cpu);
        worst = worst.max(worst_position(&cpu, &on_gpu));
        drift = drift.max((on_gpu.particles.momentum() - p0).length() / scale);
    }
    let wrapped = (0..sim.particles.len())
        .filter(|&i| on_gpu.unwrapped_position(i) != on_gpu.particles.position[i])
        .count();
    eprintln!(
        "{touching} reads with a contact, {across} across a face, {wrapped} spheres wrapped; positions within {worst:e} m, momentum within {drift:e} of Σ m|v|"
    );
    assert!(drift <= 1e-6, "momentum drifted by {drift:e} of Σ m|v|");
    assert!(touching >= 3 && across >= 1 && wrapped >= 3);
    assert!(worst <= 1e-7, "positions differ by {worst:e} m");
    common::assert_inside_cell(&on_gpu);
}

/// 64 frictional spheres (μ = 0.3, local damping 0.7) in a cell compressed at 5 /s and
/// sheared at 3 /s at once (`L_xz`: Lees–Edwards across the z faces) for 4 000 steps, read back
/// every 500, up to 23 contacts: the GPU's cell is the CPU's to the bit (the host advances it
/// in f64 as the reference does), its positions follow within 1e-7 m (3e-9 m measured), and
/// its Love–Weber stress within 5e-4 of the largest stress component (2e-5 measured, where the
/// newest contacts' overlaps of 1e-8 m differ by the positions' 3e-10 m).
#[test]
fn a_packing_in_a_deforming_cell_follows_the_cpu_reference() {
    let Some(ctx) = gpu() else { return };
    let sim = deforming_packing();
    let mut gpu = engine(&ctx, &sim, GpuOptions::default());
    let (mut cpu, mut on_gpu) = (sim.clone(), sim.clone());
    let (mut worst_x, mut worst_s) = (0.0f64, 0.0f64);
    for _ in 0..8 {
        cpu.run(500);
        advance(&mut gpu, &mut on_gpu, 500);
        assert_eq!(cpu.cell(), on_gpu.cell(), "the cells differ");
        worst_x = worst_x.max(worst_position(&cpu, &on_gpu));
        worst_s = worst_s.max(stress_error(&cpu, &on_gpu));
    }
    eprintln!(
        "{} contacts; positions within {worst_x:e} m, stress within {worst_s:e}",
        cpu.stats.contacts
    );
    assert!(cpu.stats.contacts >= 15 && on_gpu.stats.contacts == cpu.stats.contacts);
    assert!(worst_x <= 1e-7, "positions differ by {worst_x:e} m");
    assert!(
        worst_s <= 5e-4,
        "stresses differ by {worst_s:e} of the largest"
    );
}

/// The packing of the test above, at the start.
fn deforming_packing() -> Simulation {
    let cell = "edges = [[0.024, 0.0, 0.0], [0.0, 0.024, 0.0], [0.0, 0.0, 0.024]]
        velocity_gradient = [[-5.0, 0.0, 3.0], [0.0, -5.0, 0.0], [0.0, 0.0, -5.0]]";
    let toml = periodic_scene("hertz", 0.2, cell, &gas64())
        .replace("friction = 0.0", "friction = 0.3")
        .replace("restitution = 1.0", "restitution = 0.3")
        .replace("gravity = [", "local_damping = 0.7\n        gravity = [");
    scene(&toml).simulation
}

/// The compressed lattice of tests/cell.rs on the GPU: Love–Weber's `σ_xx = k_n δ / (a_y a_z)`
/// (every other component zero) every 40 steps, within 1e-6 of σ_xx (f32 forces and branch
/// vectors, 6e-8 each, summed per sphere in f32 and over the spheres in f64; 1.2e-7 measured)
/// once the overlap exceeds 1e-7 m.
#[test]
fn a_compressed_lattice_gives_the_stress_of_its_closed_form_on_the_gpu() {
    let Some(ctx) = gpu() else { return };
    let (r, n) = (LATTICE_RADIUS, LATTICE_SIDE as f64);
    let sim = scene(&compressed_lattice()).simulation;
    let ContactKind::Spring(params) = sim.pair_kind(0, 1) else {
        panic!("not a spring contact")
    };
    let mut gpu = engine(&ctx, &sim, GpuOptions::default());
    let mut on_gpu = sim.clone();
    let (mut checked, mut worst) = (0, 0.0f64);
    while on_gpu.time < 2.5e-3 {
        advance(&mut gpu, &mut on_gpu, 40);
        let h = on_gpu.cell().expect("a periodic cell").matrix();
        let (ax, ay, az) = (h.x_axis.x / n, h.y_axis.y / n, h.z_axis.z / n);
        // The contacts were evaluated before the last step moved the cell.
        let before = 2.0 * r - ax * (LATTICE_RATE * on_gpu.dt).exp();
        if before <= 1e-7 {
            continue;
        }
        let expected = params.kn * before / (ay * az);
        let stress = on_gpu.stress().expect("a stress");
        let off = worst_component(stress, DMat3::from_diagonal(DVec3::new(expected, 0.0, 0.0)));
        worst = worst.max(off / expected);
        checked += 1;
    }
    eprintln!("{checked} reads; stress within {worst:e} of σ_xx");
    assert!(checked >= 5, "{checked} reads compared");
    assert!(worst <= 1e-6, "σ off the closed form by {worst:e}");
}

/// A periodic run gives the same bits on the general path with each pair evaluated on both
/// sides or once, and in one workgroup (whose steps loop inside a dispatch), with kernels
/// compiled for every model and for walls, and after a checkpoint restored into a new engine
/// halfway (the cell of the last build and the images are saved with the state).
#[test]
fn a_periodic_run_gives_the_same_bits_on_every_path_and_after_a_checkpoint() {
    let Some(ctx) = gpu() else { return };
    let sim = deforming_packing();
    let run = |options: GpuOptions| {
        let mut gpu = engine(&ctx, &sim, options);
        let mut out = sim.clone();
        advance(&mut gpu, &mut out, 4000);
        out
    };
    let general = GpuOptions {
        single_workgroup: Some(false),
        ..GpuOptions::default()
    };
    let straight = run(general);
    assert!(straight.stats.contacts >= 10, "{}", straight.stats.contacts);
    let once = run(GpuOptions {
        pairs_once: Some(true),
        ..general
    });
    same_bits("pairs once", &straight, &once);
    let single = run(GpuOptions {
        single_workgroup: Some(true),
        ..GpuOptions::default()
    });
    same_bits("one workgroup", &straight, &single);
    // The scene has no walls, so its kernels are compiled without the wall contacts
    // (`Specialization::walls`); kernels compiled for every model and for walls give its bits.
    assert!(sim.walls.is_empty());
    let generic = run(GpuOptions {
        specialize: false,
        ..general
    });
    same_bits("kernels for every model and for walls", &straight, &generic);

    let mut first = engine(&ctx, &sim, general);
    let mut half = sim.clone();
    advance(&mut first, &mut half, 2000);
    let saved = first.save_state().unwrap_or_else(|e| panic!("{e}"));
    let mut second = first
        .restore_state(&half, &saved)
        .unwrap_or_else(|e| panic!("{e}"));
    advance(&mut second, &mut half, 2000);
    same_bits("resumed", &straight, &half);
}

/// The servo's stress summed on the device (`cell_reduce.wgsl`, read back with each batch in
/// place of the particles: `Backend::advance_for_stress`) against `Simulation::stress` of the
/// state read back whole, on the general path and in one workgroup, every 200 steps of the
/// deforming packing (contacts from about the 4 000th). Both sum the same f32 terms per sphere; the device adds the 64 spheres
/// in f32 over a tree of 6 levels (at most 6 · 6e-8 of the sum of the terms' magnitudes,
/// which in a jammed packing is a few times the largest component, since the off-diagonal
/// terms cancel), the host in f64: within 2e-6 of the largest component (1.0e-7 measured on
/// lavapipe; the kinetic part alone is 8e-5 to 2e-2 of it here). Reading the sums
/// changes nothing of the run: the state after is the same bits as that of a run read back
/// whole every time.
#[test]
fn the_stress_summed_on_the_device_is_the_stress_of_the_state() {
    use wgdem_core::runner::Backend;
    let Some(ctx) = gpu() else { return };
    let sim = deforming_packing();
    for single_workgroup in [false, true] {
        let options = GpuOptions {
            single_workgroup: Some(single_workgroup),
            ..GpuOptions::default()
        };
        let mut summed = common::gpu_backend(&ctx, &sim, options);
        let mut whole = common::gpu_backend(&ctx, &sim, options);
        let (mut a, mut b) = (sim.clone(), sim.clone());
        let (mut worst, mut reads) = (0.0f64, 0);
        for _ in 0..30 {
            let on_device = summed
                .advance_for_stress(&mut a, 200)
                .unwrap_or_else(|e| panic!("{e}"))
                .expect("a stress");
            whole.advance(&mut b, 200).unwrap_or_else(|e| panic!("{e}"));
            let host = b.stress().expect("a stress");
            let norm = host
                .to_cols_array()
                .iter()
                .fold(0.0f64, |m, e| m.max(e.abs()));
            if b.stats.contacts > 0 {
                worst = worst.max(worst_component(on_device, host) / norm);
                reads += 1;
            }
        }
        eprintln!("one workgroup {single_workgroup}: {reads} reads within {worst:e}");
        assert!(reads >= 10, "{reads} reads with contacts");
        assert!(worst <= 2e-6, "the device's stress off by {worst:e}");
        summed.advance(&mut a, 1).unwrap_or_else(|e| panic!("{e}"));
        whole.advance(&mut b, 1).unwrap_or_else(|e| panic!("{e}"));
        same_bits("stress read on the device", &a, &b);
    }
}

/// Asserts that two runs ended in the same bits: every sphere's position, velocity, spin and
/// images, the contact counts, the cell and its stress.
fn same_bits(what: &str, a: &Simulation, b: &Simulation) {
    let p = (&a.particles, &b.particles);
    let differ = (0..p.0.len())
        .filter(|&i| {
            p.0.position[i] != p.1.position[i]
                || p.0.velocity[i] != p.1.velocity[i]
                || p.0.angular_velocity[i] != p.1.angular_velocity[i]
                || a.unwrapped_position(i) != b.unwrapped_position(i)
        })
        .count();
    assert_eq!(differ, 0, "{what}: {differ} spheres differ");
    assert_eq!(a.stats, b.stats, "{what}: contact counts");
    assert_eq!(a.cell(), b.cell(), "{what}: the cell");
    let bits = |s: &Simulation| s.stress().map(|s| s.to_cols_array().map(f64::to_bits));
    assert_eq!(bits(a), bits(b), "{what}: the stress");
}

/// A cell compressed until it is narrower than twice the neighbour reach stops the run with
/// the reason and the step, before any step in so narrow a cell is taken.
#[test]
fn a_cell_squeezed_below_twice_the_reach_is_refused() {
    let Some(ctx) = gpu() else { return };
    let spheres = "{ position = [0.005, 0.005, 0.005], radius = 0.002 }";
    let cell = "edges = [[0.01, 0.0, 0.0], [0.0, 0.02, 0.0], [0.0, 0.0, 0.02]]
        velocity_gradient = [[-50.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]";
    let sim = scene(&periodic_scene("hertz", 0.2, cell, spheres)).simulation;
    let mut gpu = engine(&ctx, &sim, GpuOptions::default());
    let e = gpu.run(100_000).expect_err("refused").to_string();
    assert!(
        e.contains("periodic cell at step") && e.contains("twice the neighbour reach"),
        "{e}"
    );
    let width = gpu.cell().expect("a periodic cell").widths()[0];
    assert!(
        width > 0.0088,
        "the engine stepped into a {width:e} m wide cell"
    );
}

/// The CPU reference continues from the GPU engine's state with the contacts' histories it
/// kept (`Simulation::adopt_histories`, which the cell test's probes and rotation use): 300
/// steps of the frictional packing above from the GPU's state at step 4 000 follow the GPU's
/// own 300 within 1e-9 m (3.4e-10 m measured, the f32 histories and forces), while the same
/// steps with the histories forgotten (each tangential spring starting again from zero)
/// differ by more than ten times as much (5.6e-6 m measured).
#[test]
fn the_cpu_reference_continues_from_the_gpu_engines_contact_histories() {
    let Some(ctx) = gpu() else { return };
    let sim = deforming_packing();
    let mut gpu = engine(&ctx, &sim, GpuOptions::default());
    let mut state = sim.clone();
    advance(&mut gpu, &mut state, 4000);
    let histories = gpu
        .contact_histories(&mut state)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(histories.pairs.len() >= 15 && histories.unreadable == 0);
    let mut adopted = state.clone();
    adopted.adopt_histories(histories);
    let mut forgotten = state.clone();
    forgotten.reset_history();
    let mut on_gpu = state.clone();
    advance(&mut gpu, &mut on_gpu, 300);
    adopted.run(300);
    forgotten.run(300);
    let (a, f) = (
        worst_position(&on_gpu, &adopted),
        worst_position(&on_gpu, &forgotten),
    );
    eprintln!("after 300 steps: with the histories {a:e} m, without {f:e} m");
    assert!(a <= 1e-9, "{a:e} m with the GPU's histories");
    assert!(f > 10.0 * a, "{f:e} m without them, {a:e} m with");
}

/// The sphere of tests/cell.rs sliding on a floor with the affine field (`L_xx = 0.5 /s`, u =
/// 7.5 mm/s until it rolls at 5/7 u): settled and run on both engines, the GPU's fluctuation
/// velocity and spin follow the CPU's within 1e-5 of u (2.1e-7 and 2.6e-7 measured: f32
/// contact forces, 6e-8 relative, over a slip and a roll of 3 ms), and the floor's force
/// within 1e-5 of the sphere's weight (1.2e-7 measured).
#[test]
fn a_sphere_slides_on_a_floor_with_the_affine_field_as_on_the_cpu() {
    let Some(ctx) = gpu() else { return };
    let sim = sphere_on_a_floor_in_a_cell(0);
    let l = DMat3::from_cols(DVec3::new(0.5, 0.0, 0.0), DVec3::ZERO, DVec3::ZERO);
    let steps = (0.003 / sim.dt).ceil() as u64;
    let mut cpu = sim.clone();
    cpu.run(4000);
    cpu.set_velocity_gradient(l)
        .unwrap_or_else(|e| panic!("{e}"));
    cpu.run(steps);
    let mut gpu = engine(&ctx, &sim, GpuOptions::default());
    let mut on_gpu = sim.clone();
    gpu.run(4000).unwrap_or_else(|e| panic!("{e}"));
    gpu.set_velocity_gradient(l)
        .unwrap_or_else(|e| panic!("{e}"));
    advance(&mut gpu, &mut on_gpu, steps);
    let u = 0.5 * 0.015;
    let radius = sim.particles.radius[0];
    let (dv, dw) = (
        (cpu.particles.velocity[0] - on_gpu.particles.velocity[0]).length() / u,
        (cpu.particles.angular_velocity[0] - on_gpu.particles.angular_velocity[0]).length()
            * radius
            / u,
    );
    let weight = sim.particles.mass[0] * 9.81;
    let df = (cpu.walls[0].force - on_gpu.walls[0].force).length() / weight;
    eprintln!(
        "velocity within {dv:e} of u, spin within {dw:e}, floor force within {df:e} of the weight"
    );
    assert_eq!(on_gpu.cell(), cpu.cell(), "the cells differ");
    assert!(
        cpu.particles.velocity[0].x < -0.2 * u,
        "the sphere did not slide"
    );
    assert!(dv <= 1e-5 && dw <= 1e-5 && df <= 1e-5);
}

/// The 64 frictional spheres of the deforming cell above, drifting at 0.36 m/s in the x–y
/// plane, between a floor and a lid (planes at z = 0 and 24 mm, the lid coming down at
/// 0.2 m/s) in a cell periodic along x and y (its z edge, 40 mm, is taller than the gap between
/// the planes and twice the reach, so no pair acts across z), compressed along x at 2 /s and
/// sheared in its plane at 3 /s (`L_xy`): the spheres slide on the planes with the affine field
/// and wrap across the x and y faces (28 of them). Read every 250 steps for 3 000: the GPU's
/// cell is the CPU's to the bit and its contact counts the CPU's; its positions follow within
/// 1e-7 m (2.9e-8 m measured), its Love–Weber stress (wall contacts included) within 5e-4 of
/// the largest component (6.2e-5 measured) and the planes' forces within 5e-4 of the largest
/// (3.7e-5 measured): as for the packing above, the newest contacts' f32 forces and overlaps.
#[test]
fn a_packing_between_two_planes_in_a_periodic_cell_follows_the_cpu_reference() {
    let Some(ctx) = gpu() else { return };
    let cell = "edges = [[0.024, 0.0, 0.0], [0.0, 0.024, 0.0], [0.0, 0.0, 0.04]]
        velocity_gradient = [[-2.0, 3.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]";
    let planes = plane("floor", 0.0, 1.0, 0.0) + &plane("lid", 0.024, -1.0, -0.2);
    let drifting = gas64().replace("radius =", "velocity = [0.3, 0.2, 0.0], radius =");
    let toml = periodic_scene("hertz", 0.2, cell, &drifting)
        .replace("friction = 0.0", "friction = 0.3")
        .replace("restitution = 1.0", "restitution = 0.3")
        + &planes;
    let sim = scene(&toml).simulation;
    assert_eq!(sim.walls.len(), 2);
    let mut gpu = engine(&ctx, &sim, GpuOptions::default());
    let (mut cpu, mut on_gpu) = (sim.clone(), sim.clone());
    let (mut worst_x, mut worst_s, mut worst_f, mut largest_f) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let (mut on_walls, mut contacts) = (0, 0);
    for _ in 0..12 {
        cpu.run(250);
        advance(&mut gpu, &mut on_gpu, 250);
        assert_eq!(cpu.cell(), on_gpu.cell(), "the cells differ");
        assert_eq!(on_gpu.stats, cpu.stats, "step {}", cpu.steps);
        worst_x = worst_x.max(worst_position(&cpu, &on_gpu));
        worst_s = worst_s.max(stress_error(&cpu, &on_gpu));
        for (a, b) in cpu.walls.iter().zip(&on_gpu.walls) {
            largest_f = largest_f.max(a.force.length());
            worst_f = worst_f.max((a.force - b.force).length());
        }
        on_walls += usize::from(cpu.stats.wall_contacts > 0);
        contacts = contacts.max(cpu.stats.contacts + cpu.stats.wall_contacts);
    }
    let wrapped = (0..sim.particles.len())
        .filter(|&i| on_gpu.unwrapped_position(i) != on_gpu.particles.position[i])
        .count();
    let worst_f = worst_f / largest_f;
    eprintln!(
        "up to {contacts} contacts, {on_walls} reads with one on a plane, {wrapped} spheres wrapped; positions within {worst_x:e} m, stress within {worst_s:e}, plane forces within {worst_f:e} of the largest ({largest_f:e} N)"
    );
    assert!(on_walls >= 6 && wrapped >= 10 && contacts >= 8);
    assert!(worst_x <= 1e-7, "positions differ by {worst_x:e} m");
    assert!(worst_s <= 5e-4, "stresses differ by {worst_s:e}");
    assert!(worst_f <= 5e-4, "wall forces differ by {worst_f:e}");
    common::assert_inside_cell(&on_gpu);
}
