//! GPU against the CPU reference on a pour of 2 000 polydisperse spheres.

mod common;

use common::{gpu, scene};
use wgdem_core::cpu::Simulation;
use wgdem_gpu::{GpuEngine, GpuOptions};

/// 2 000 glass spheres (d = 2.5–3.5 mm) rain into a 40 mm box and settle.
const POUR: &str = r#"
[simulation]
duration = 0.46
output_interval = 0.01
seed = 3
[contact]
law = "hertz"
history = "true"
[[materials]]
name = "glass"
density = 2550.0
friction = 0.3
young_modulus = 1e7
poisson_ratio = 0.22
restitution = 0.4
[[particles]]
kind = "random"
material = "glass"
count = 2000
region = { min = [0.0, 0.0, 0.0], max = [0.04, 0.04, 0.06] }
size = { distribution = "uniform", min_diameter = 0.0025, max_diameter = 0.0035 }
[[walls]]
kind = "plane"
name = "bottom"
material = "glass"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
[[walls]]
kind = "plane"
name = "xmin"
material = "glass"
point = [0.0, 0.0, 0.0]
normal = [1.0, 0.0, 0.0]
[[walls]]
kind = "plane"
name = "xmax"
material = "glass"
point = [0.04, 0.0, 0.0]
normal = [-1.0, 0.0, 0.0]
[[walls]]
kind = "plane"
name = "ymin"
material = "glass"
point = [0.0, 0.0, 0.0]
normal = [0.0, 1.0, 0.0]
[[walls]]
kind = "plane"
name = "ymax"
material = "glass"
point = [0.0, 0.04, 0.0]
normal = [0.0, -1.0, 0.0]
"#;

fn max_diff(a: &Simulation, b: &Simulation) -> f64 {
    a.particles
        .position
        .iter()
        .zip(&b.particles.position)
        .map(|(x, y)| x.distance(*y))
        .fold(0.0, f64::max)
}

/// Mean centre height and the bed's surface: the 95th percentile of the spheres' tops (m).
/// Not the single highest top: which sphere ends perched highest is one sample of a chaotic
/// pour, and it moved by 1.5 % to 2.2 % between CPU and GPU with changes in the GPU's rounding
/// alone, while the bed beneath stayed within 0.2 %.
fn heights(s: &Simulation) -> (f64, f64) {
    let p = &s.particles;
    let mean = p.position.iter().map(|x| x.z).sum::<f64>() / p.len() as f64;
    let mut tops: Vec<f64> = (0..p.len())
        .map(|i| p.position[i].z + p.radius[i])
        .collect();
    tops.sort_by(f64::total_cmp);
    let surface = tops[(tops.len() * 95 / 100).min(tops.len() - 1)];
    (mean, surface)
}

/// The pour on both backends.
///
/// - First 300 steps, sphere by sphere: positions agree within 1e-9 m (a three-millionth of a
///   diameter). The spheres fall freely and the lowest ones meet the floor, so the only
///   difference is f32 arithmetic: forces carry ≈ 1e-6 relative error (the contact-law test's
///   bound), which over these few hundred steps moves a sphere by ≈ 1e-10 m (measured 1.8e-10).
///   Later, collisions amplify any difference exponentially (1e-8 m by step 1 000, 0.1 mm by
///   step 4 000), so trajectories cannot be compared sphere by sphere, only in aggregate:
/// - kinetic energy at every 1 000 steps of the pour within 2 % of its peak;
/// - after 0.46 s both packings are at rest (kinetic energy below 1e-6 of the peak: what is left
///   is round-off noise, 1e-11 to 1e-9 J, which no relative comparison can mean anything for);
/// - the settled packings' mean centre height, surface height (95th percentile of the tops)
///   and contact count agree within 2 %.
#[test]
fn gpu_pour_matches_the_cpu_reference() {
    let Some(ctx) = gpu() else { return };
    let s = scene(POUR);
    let total = (s.duration / s.simulation.dt).ceil() as u64;
    let mut cpu = s.simulation.clone();
    let mut gpu_sim = s.simulation.clone();
    let mut engine = GpuEngine::new(
        &ctx.device,
        &ctx.queue,
        &s.simulation,
        GpuOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));

    engine.run(300).unwrap_or_else(|e| panic!("{e}"));
    engine
        .read_into(&mut gpu_sim)
        .unwrap_or_else(|e| panic!("{e}"));
    cpu.run(300);
    let early = max_diff(&cpu, &gpu_sim);
    eprintln!("after 300 steps: largest position difference {early:.3e} m");
    assert!(
        early < 1e-9,
        "positions differ by {early:e} m after 300 steps"
    );

    let mut peak: f64 = 0.0;
    let mut worst: f64 = 0.0;
    let mut done = 300;
    while done < total {
        let n = 1000.min(total - done);
        engine.run(n).unwrap_or_else(|e| panic!("{e}"));
        engine
            .read_into(&mut gpu_sim)
            .unwrap_or_else(|e| panic!("{e}"));
        cpu.run(n);
        done += n;
        let (kc, kg) = (
            cpu.particles.kinetic_energy(),
            gpu_sim.particles.kinetic_energy(),
        );
        peak = peak.max(kc);
        worst = worst.max((kc - kg).abs());
    }
    eprintln!(
        "kinetic energy: largest difference {:.3} % of the peak {peak:.4e} J",
        100.0 * worst / peak
    );
    assert!(
        worst <= 0.02 * peak,
        "kinetic energies differ by {worst:e} J, peak {peak:e} J"
    );

    let (kc, kg) = (
        cpu.particles.kinetic_energy(),
        gpu_sim.particles.kinetic_energy(),
    );
    assert!(
        kc < 1e-6 * peak && kg < 1e-6 * peak,
        "not settled: {kc:e} J, {kg:e} J"
    );
    let ((mc, tc), (mg, tg)) = (heights(&cpu), heights(&gpu_sim));
    let (cc, cg) = (cpu.stats.contacts as f64, gpu_sim.stats.contacts as f64);
    eprintln!(
        "settled: mean height {mc:.6} / {mg:.6} m, surface {tc:.6} / {tg:.6} m, contacts {cc} / {cg} (CPU / GPU)"
    );
    assert!(((mg - mc) / mc).abs() < 0.02);
    assert!(((tg - tc) / tc).abs() < 0.02);
    assert!(((cg - cc) / cc).abs() < 0.02);
    assert!(cc > 3000.0, "the packing must be dense: {cc} contacts");
}

/// Two GPU runs of the same input are bitwise identical (no float atomics; every sum has a
/// fixed order), and a run whose neighbour table starts far too small (1 slot per particle)
/// stops at each overflow, is regrown and continues from the failed step to exactly the same
/// result as one whose tables are sized from the scene and grow as contacts form, and as one
/// that starts with 16 slots. The last also starts its wall table with one row for the
/// hundreds of spheres that come near a wall; there the rows particles get differ (they are
/// handed out by atomics, and given back as spheres bounce off a wall), which must not change
/// anything either.
/// 3 000 steps take the pour into its collisional phase, where any difference in summation
/// order would show.
#[test]
fn gpu_runs_are_bitwise_reproducible_and_regrowth_changes_nothing() {
    let Some(ctx) = gpu() else { return };
    let s = scene(POUR);
    let run = |slots: u32, wall_rows: u32| {
        let options = GpuOptions {
            slots,
            wall_rows,
            ..GpuOptions::default()
        };
        let mut engine = GpuEngine::new(&ctx.device, &ctx.queue, &s.simulation, options)
            .unwrap_or_else(|e| panic!("{e}"));
        let rows_at_start = engine.wall_rows();
        engine.run(3000).unwrap_or_else(|e| panic!("{e}"));
        let mut out = s.simulation.clone();
        engine.read_into(&mut out).unwrap_or_else(|e| panic!("{e}"));
        (
            out,
            engine.regrowths,
            engine.slots(),
            (rows_at_start, engine.wall_rows()),
        )
    };
    // Tables sized from the scene (the rain starts with no contact, so `SLOT_HEADROOM` slots).
    let (a, grown_a, slots_a, rows_a) = run(0, 0);
    let (b, _, _, _) = run(0, 0);
    let (c, grown_c, slots_c, _) = run(1, 0);
    let (d, grown_d, _, rows_d) = run(16, 1);
    eprintln!(
        "sized from the scene: {grown_a} regrowths, now {slots_a} slots and {} → {} wall rows; {grown_c} regrowths from 1 slot (now {slots_c}); {grown_d} from 16 slots and 1 wall row (now {})",
        rows_a.0, rows_a.1, rows_d.1
    );
    assert!(
        a.stats.contacts > 500,
        "too few contacts to test anything: {}",
        a.stats.contacts
    );
    assert!(
        a.stats.wall_contacts > 100,
        "too few wall contacts to test anything: {}",
        a.stats.wall_contacts
    );
    assert!(grown_c > 0, "the 1-slot table never overflowed");
    assert!(
        grown_d > 0 && rows_d.1 > 1,
        "the 1-row wall table never overflowed"
    );
    for other in [&b, &c, &d] {
        assert_eq!(a.particles.position, other.particles.position);
        assert_eq!(a.particles.velocity, other.particles.velocity);
        assert_eq!(
            a.particles.angular_velocity,
            other.particles.angular_velocity
        );
        assert_eq!(a.stats, other.stats);
        for (wa, wb) in a.walls.iter().zip(&other.walls) {
            assert_eq!(wa.force, wb.force);
            assert_eq!(wa.torque, wb.torque);
        }
    }
}

/// History survives neighbour-list rebuilds: the pour run with its lists rebuilt (and every
/// pair's history carried over by partner id) at every step matches the run that rebuilds only
/// when a particle has moved half the skin.
///
/// - Contact, wall-contact and sliding counts are equal at every 100 steps up to step 2 500,
///   well into the collisional phase (≈ 400 contacts). This is the check that catches lost
///   history: with a build that zeroes the carried history, the sliding counts differ by step
///   700 (measured by breaking `neighbours.wgsl` on purpose). The window ends before the
///   last-bit differences below have grown into a count: the first differing count, one
///   contact, appears at step 2 900 (measured).
/// - Positions agree within 1e-9 m at step 1 000. Both runs sum the same contact forces, but
///   possibly in a different list order, so f32 sums may differ in the last bit; collisions
///   amplify that chaotically later (6e-8 m by step 3 000, measured), so positions are compared
///   before that, as in the CPU comparison.
#[test]
fn gpu_history_survives_rebuilds() {
    let Some(ctx) = gpu() else { return };
    let s = scene(POUR);
    let make = |every: bool| {
        let options = GpuOptions {
            batch_steps: 100,
            rebuild_every_step: every,
            reorder_every: 0,
            ..GpuOptions::default()
        };
        GpuEngine::new(&ctx.device, &ctx.queue, &s.simulation, options)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let (mut every, mut skinned) = (make(true), make(false));
    let (mut a, mut b) = (s.simulation.clone(), s.simulation.clone());
    for batch in 1..=25 {
        every.run(100).unwrap_or_else(|e| panic!("{e}"));
        skinned.run(100).unwrap_or_else(|e| panic!("{e}"));
        every.read_into(&mut a).unwrap_or_else(|e| panic!("{e}"));
        skinned.read_into(&mut b).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.stats, b.stats, "step {}", a.steps);
        if batch == 10 {
            let diff = max_diff(&a, &b);
            eprintln!("step 1000: largest position difference {diff:.3e} m");
            assert!(diff < 1e-9, "positions differ by {diff:e} m at step 1000");
        }
    }
    let builds = (
        every.neighbour_builds().unwrap_or(0),
        skinned.neighbour_builds().unwrap_or(0),
    );
    eprintln!(
        "step 2500: {} contacts, {:.3e} m apart; builds {} vs {}",
        a.stats.contacts,
        max_diff(&a, &b),
        builds.0,
        builds.1
    );
    assert!(a.stats.contacts > 400, "too few contacts to test anything");
    // A step whose rebuild found a table full (here the wall table, sized for the spheres
    // near a wall at the start) begins its build again after the regrowth.
    assert_eq!(builds.0, 2500 + every.regrowths);
    assert!(builds.1 < 500, "the skinned run rebuilt {} times", builds.1);
}

/// History survives reordering: the pour run with its lists rebuilt and its particles
/// reordered by cell at every step (stable ids, neighbour slots and their history moved with
/// the particles, partner indices remapped) against the same run never reordered.
///
/// - Contact, wall-contact and sliding counts are equal at every 100 steps up to step 2 000
///   (212 contacts by then). With the pair order taken from current indices instead of stable
///   ids (so that a reorder flips the sign of stored history), the sliding counts differ by
///   step 1 400 (measured by breaking `contact_forces.wgsl` on purpose).
/// - Positions (read back by stable id) agree within 1e-9 m at step 1 000 (measured: exactly).
///   Reordering changes the order in which each particle sums its contacts, so f32 sums may
///   differ in the last bit, which collisions amplify chaotically (6.7e-10 m by step 2 000;
///   the first differing wall contact appears near step 2 900), hence the comparison window.
#[test]
fn gpu_history_survives_reordering() {
    let Some(ctx) = gpu() else { return };
    let s = scene(POUR);
    let make = |reorder_every: u64| {
        let options = GpuOptions {
            batch_steps: 1,
            rebuild_every_step: true,
            reorder_every,
            ..GpuOptions::default()
        };
        GpuEngine::new(&ctx.device, &ctx.queue, &s.simulation, options)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let (mut reordered, mut fixed) = (make(1), make(0));
    let (mut a, mut b) = (s.simulation.clone(), s.simulation.clone());
    for batch in 1..=20 {
        reordered.run(100).unwrap_or_else(|e| panic!("{e}"));
        fixed.run(100).unwrap_or_else(|e| panic!("{e}"));
        reordered
            .read_into(&mut a)
            .unwrap_or_else(|e| panic!("{e}"));
        fixed.read_into(&mut b).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.stats, b.stats, "step {}", a.steps);
        if batch == 10 {
            let diff = max_diff(&a, &b);
            eprintln!("step 1000: largest position difference {diff:.3e} m");
            assert!(diff < 1e-9, "positions differ by {diff:e} m at step 1000");
        }
    }
    eprintln!(
        "step 2000: {} contacts, {:.3e} m apart",
        a.stats.contacts,
        max_diff(&a, &b)
    );
    assert!(a.stats.contacts > 150, "too few contacts to test anything");
}

/// Each sphere's inverse moment of inertia moves with it when the particles are reordered (it
/// rides in the w word of the positions at the last build, which the reorder moves; the
/// build it forces rewrites only their xyz): 64 free spheres of diameters 2–6 mm, scattered
/// in random order with no contact, each turned about z by a constant torque T (`[[loads]]`),
/// reordered at every step. Semi-implicit Euler integrates a constant torque exactly, so after
/// n steps ω_z = n Δt T / I with I = 2/5 m r², up to the f32 rounding of 1/I and of the n
/// additions (at most about n · 2⁻²⁴ = 6e-6 relative for n = 100; bound 1e-5). A sphere
/// given another's inertia is off by the ratio of their m r², at least 1.3 here for all but
/// near-equal sizes, so a wrong move fails the check. Where the arrays were not reordered
/// (the check that they were fails first), nothing is tested.
#[test]
fn gpu_inertia_moves_with_its_sphere_when_reordered() {
    let Some(ctx) = gpu() else { return };
    let s = scene(
        r#"
[simulation]
duration = 0.001
dt = 1e-5
output_interval = 0.001
seed = 11
gravity = [0.0, 0.0, 0.0]
[contact]
law = "hertz"
history = "true"
# fixture: material_m
[[particles]]
kind = "random"
material = "m"
count = 64
region = { min = [0.0, 0.0, 0.0], max = [0.2, 0.2, 0.2] }
size = { distribution = "uniform", min_diameter = 0.002, max_diameter = 0.006 }
[[loads]]
group = 0
torque = [0.0, 0.0, 1e-9]
"#,
    );
    // A reorder comes at a batch's start: one step a batch reorders at every step.
    let options = GpuOptions {
        batch_steps: 1,
        reorder_every: 1,
        ..GpuOptions::default()
    };
    let mut engine = GpuEngine::new(&ctx.device, &ctx.queue, &s.simulation, options)
        .unwrap_or_else(|e| panic!("{e}"));
    let steps = 100u64;
    engine.run(steps).unwrap_or_else(|e| panic!("{e}"));
    let order = engine.particle_order().unwrap_or_else(|e| panic!("{e}"));
    let moved = order
        .iter()
        .enumerate()
        .filter(|&(k, &id)| k != id as usize)
        .count();
    assert!(moved > 32, "the reorder moved only {moved} of 64 spheres");
    let mut out = s.simulation.clone();
    engine.read_into(&mut out).unwrap_or_else(|e| panic!("{e}"));
    let p = &out.particles;
    let mut worst = 0.0f64;
    for i in 0..p.len() {
        let inertia = 0.4 * p.mass[i] * p.radius[i] * p.radius[i];
        assert!(
            (p.inertia[i] / inertia - 1.0).abs() < 1e-12,
            "sphere {i}: inertia {} against 2/5 m r² = {inertia}",
            p.inertia[i]
        );
        let expected = steps as f64 * 1e-5 * 1e-9 / inertia;
        let w = p.angular_velocity[i];
        worst = worst.max((w.z / expected - 1.0).abs());
        assert!(
            w.x == 0.0 && w.y == 0.0,
            "sphere {i}: spin about x or y {w:?}"
        );
    }
    eprintln!("{moved} of 64 spheres moved by the reorder; ω_z within {worst:.2e} of n Δt T / I");
    assert!(worst < 1e-5, "ω_z off by {worst:e} relative");
}

/// A reorder puts particles close in space close in memory. The pour's spheres are generated
/// in random order; after a reorder, the median distance between neighbours in memory
/// (consecutive positions of the per-particle arrays) is below two diameters, where the spheres
/// are about 3.6 mm apart on average at the start. Measured: 4.5e-3 m reordered, 3.0e-2 m in
/// the scene's order; reordered by hash bucket, as before the Morton order, 2.6e-2 m (the
/// test fails then).
#[test]
fn gpu_reorder_puts_neighbours_together() {
    let Some(ctx) = gpu() else { return };
    let s = scene(POUR);
    let mut engine = GpuEngine::new(
        &ctx.device,
        &ctx.queue,
        &s.simulation,
        GpuOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut sim = s.simulation.clone();
    let median_gap = |engine: &GpuEngine, sim: &mut Simulation| {
        engine.read_into(sim).unwrap_or_else(|e| panic!("{e}"));
        let order = engine.particle_order().unwrap_or_else(|e| panic!("{e}"));
        let p = &sim.particles.position;
        let mut d: Vec<f64> = order
            .windows(2)
            .map(|w| (p[w[1] as usize] - p[w[0] as usize]).length())
            .collect();
        d.sort_by(f64::total_cmp);
        d[d.len() / 2]
    };
    engine.run(10).unwrap_or_else(|e| panic!("{e}"));
    let before = median_gap(&engine, &mut sim);
    engine.reorder_next_batch();
    engine.run(1).unwrap_or_else(|e| panic!("{e}"));
    let after = median_gap(&engine, &mut sim);
    eprintln!(
        "median distance between neighbours in memory: {before:.2e} m in the scene's order, \
         {after:.2e} m reordered"
    );
    assert!(
        after < 2.0 * 0.003,
        "reordered, neighbours in memory are {after:e} m apart"
    );
    assert!(
        before > 5.0 * after,
        "the scene's order was already local: {before:e} m"
    );
    // Every slot's canonical-order bit agrees with the stable ids in the new order
    // (`neighbour_lists` reports one that does not).
    let lists = engine.neighbour_lists().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !lists.is_empty(),
        "the pour lists no pairs after its reorder"
    );
}
