//! Potyondy (2016) memo, Section 2.2: a settled assembly's weight rests on the bottom wall;
//! and the local damping that settles a specimen, switched off between stages on both engines.

#[macro_use]
mod common;

use std::path::Path;

use common::{On, rel};
use wgdem_core::runner::{Backend, CpuBackend};
use wgdem_core::scene::load_scene;

/// The bundled scene `assets/scenes/potyondy_27_balls.toml`: 27 balls of 10 mm diameter,
/// ρ = 2650 kg/m³, settle in a box. At static equilibrium the bottom wall carries their weight,
/// W = 27 ρ (4/3 π R³) g = 0.36752 N, which the memo rounds to 0.368 N. Kinetic energy must
/// have decayed so that the state is static, not a snapshot of a bounce (below 1e-12 J; it
/// ends at 4e-30 J); at rest the walls hold the weight exactly but for what still moves and
/// f64 rounding (measured 3e-16 relative), so the bound is 1e-8 against W, far below a
/// ball missing (3.7 %) or a density, radius or g off by a digit's rounding (1e-4 and up); and
/// half a unit of the third figure against the memo's rounded 0.368 N (0.0005 N).
#[test]
fn bottom_wall_carries_the_weight_of_27_balls() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/potyondy_27_balls.toml");
    let mut scene = load_scene(&path).unwrap_or_else(|e| panic!("{e}"));
    let steps = (scene.duration / scene.simulation.dt).ceil() as u64;
    let sim = &mut scene.simulation;
    assert_eq!(sim.particles.len(), 27);
    sim.run(steps);

    let weight = weight_of_27_balls();
    let carried = bottom_force(sim);
    eprintln!(
        "bottom wall {carried:.6} N, weight {weight:.6} N, kinetic energy {:.3e} J",
        sim.particles.kinetic_energy()
    );
    eprintln!("relative to the weight: {:.2e}", rel(carried, weight));
    assert!(rel(carried, weight) < 1e-8, "{carried} N vs {weight} N");
    assert!(
        (carried - 0.368).abs() < 0.0005,
        "{carried} N vs the memo's 0.368 N"
    );
    // Potential energy of a 1 µm drop of the whole assembly is 3.7e-7 J; far less must remain.
    assert!(sim.particles.kinetic_energy() < 1e-12);
    // Side walls carry no vertical load.
    for w in sim.walls.iter().filter(|w| w.name != "bottom") {
        assert!(
            w.force.z.abs() < 1e-9 * weight,
            "{} carries {:?}",
            w.name,
            w.force
        );
    }
}

/// The memo's own contact assignment (`assets/scenes/potyondy_27_balls_hill.toml`): hill at
/// ball–ball contacts, linear (E* = 29 MPa) at ball–facet contacts, local damping 0.7. The
/// issue's 0.1 % is applied to the exact weight 0.36752 N; the memo's 0.368 N is that weight
/// rounded to three figures (0.13 % away), so against it the bound is half a unit of the third
/// figure, 0.0005 N.
#[test]
fn hill_and_linear_assembly_carries_the_weight_of_27_balls() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/potyondy_27_balls_hill.toml");
    let mut scene = load_scene(&path).unwrap_or_else(|e| panic!("{e}"));
    let steps = (scene.duration / scene.simulation.dt).ceil() as u64;
    let sim = &mut scene.simulation;
    sim.run(steps);
    let weight = weight_of_27_balls();
    let carried = bottom_force(sim);
    eprintln!(
        "hill/linear: bottom wall {carried:.6} N, weight {weight:.6} N, kinetic energy {:.3e} J, {} ball contacts",
        sim.particles.kinetic_energy(),
        sim.stats.contacts
    );
    assert!(rel(carried, weight) < 1e-3, "{carried} N vs {weight} N");
    assert!(
        (carried - 0.368).abs() <= 5e-4,
        "{carried} N vs the memo's 0.368 N"
    );
    assert!(sim.particles.kinetic_energy() < 1e-12);
    // Nine columns of three: 9 balls on the floor, 18 ball–ball contacts between the layers
    // (neighbours within a layer are 0.2 mm apart).
    assert_eq!(sim.stats.wall_contacts, 9);
    assert_eq!(sim.stats.contacts, 18);
}

/// The hill/linear assembly on the GPU engine (wide contact slots, the WGSL hill and Kuhn
/// models, local damping). Same bound as on the CPU: 0.1 % of the exact weight. Against the
/// memo's printed 0.368 N the bound is that 0.1 % plus the half unit of the third figure the
/// memo rounded to (0.0005 N): the GPU reading sits 0.06 % below the weight, because a ball–ball
/// overlap (9e-8 m at E = 29 GPa) is resolved to one ulp of the 10 mm centre distance, 9e-10 m,
/// so the columns settle into a small limit cycle under local damping rather than an exact rest.
/// Each ball rests on the floor with an overlap of 8.9e-8 m; the plane overlap is taken from the
/// parts of the double-single position (0.5 % of that overlap per ulp of the 5 mm height
/// otherwise, which made the bottom force step by 2e-3 N), and the wall slots keep a two-part
/// tangential history so that the smooth normal force this gives does not let a resting contact
/// creep (`tests/gpu_history.rs`).
#[test]
#[ignore = "long tier: 27 balls settled on the GPU, about 2.5 minutes on lavapipe"]
fn gpu_hill_and_linear_assembly_carries_the_weight_of_27_balls() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/potyondy_27_balls_hill.toml");
    let scene = load_scene(&path).unwrap_or_else(|e| panic!("{e}"));
    // Settled (kinetic energy below 1e-15 J) by half the scene's duration.
    let steps = (0.5 * scene.duration / scene.simulation.dt).ceil() as u64;
    let (sim, _) = common::run_gpu(&ctx, &scene.simulation, steps, Default::default());
    let weight = weight_of_27_balls();
    let carried = bottom_force(&sim);
    eprintln!(
        "GPU hill/linear: bottom wall {carried:.6} N, weight {weight:.6} N, kinetic energy {:.3e} J",
        sim.particles.kinetic_energy()
    );
    assert!(rel(carried, weight) < 1e-3, "{carried} N vs {weight} N");
    assert!(
        (carried - 0.368).abs() <= 1e-3 * 0.368 + 5e-4,
        "{carried} N vs the memo's 0.368 N"
    );
    assert!(sim.particles.kinetic_energy() < 1e-13);
    assert_eq!(sim.stats.wall_contacts, 9);
    assert_eq!(sim.stats.contacts, 18);
}

/// W = 27 ρ (4/3 π R³) g of the memo's assembly (N).
fn weight_of_27_balls() -> f64 {
    27.0 * 2650.0 * 4.0 / 3.0 * std::f64::consts::PI * 0.005f64.powi(3) * 9.81
}

/// The vertical force the particles exert on the wall named "bottom" (N).
fn bottom_force(sim: &wgdem_core::cpu::Simulation) -> f64 {
    let bottom = sim
        .walls
        .iter()
        .find(|w| w.name == "bottom")
        .expect("bottom wall");
    -bottom.force.z
}

/// Builds a backend for a simulation.
type MakeBackend<'a> =
    Box<dyn Fn(&wgdem_core::cpu::Simulation) -> Box<dyn wgdem_core::runner::Backend> + 'a>;

/// `wgdem run` checkpoints and resumes to identical bits: the 27 balls run to the end in one
/// directory, and in another are stopped by a failure right after the checkpoint of row 6
/// (with rows and snapshots after it written, as a killed run may leave) and resumed from it.
/// Every CSV row, particle snapshot and ParaView file is the same byte for byte, on the CPU
/// reference and on the GPU engine.
#[test]
fn a_run_resumes_from_its_checkpoint_to_the_same_bits() {
    use wgdem_core::output::OutputDir;
    use wgdem_core::runner::{CpuBackend, resume, run};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/potyondy_27_balls.toml");
    let text = std::fs::read_to_string(&path).expect("scene");
    let dir = tempfile::tempdir().expect("dir");
    // A short run with a checkpoint every 3 rows.
    let scene_path = dir.path().join("scene.toml");
    std::fs::write(
        &scene_path,
        text.replace("duration = 0.6", "duration = 0.3")
            .replace("output_interval = 0.02", "output_interval = 0.01")
            + "\n[output]\ncheckpoint_rows = 3\ncheckpoint_seconds = 0\n",
    )
    .expect("write");
    let ctx = common::gpu();
    let backends: Vec<(&str, MakeBackend)> = {
        let mut b: Vec<(&str, MakeBackend)> = vec![("cpu", Box::new(|_| Box::new(CpuBackend)))];
        if let Some(ctx) = &ctx {
            b.push((
                "gpu",
                Box::new(move |sim| Box::new(common::gpu_backend(ctx, sim, Default::default()))),
            ));
        }
        b
    };
    for (name, make) in &backends {
        let load = || wgdem_io::load_scene(&scene_path).unwrap_or_else(|e| panic!("{e}"));
        let walls = |s: &wgdem_core::scene::Scene| -> Vec<String> {
            s.simulation.walls.iter().map(|w| w.name.clone()).collect()
        };
        let straight = dir.path().join(format!("{name}_straight"));
        let mut scene = load();
        let mut backend = make(&scene.simulation);
        let mut out =
            OutputDir::create(&straight, &walls(&scene), Default::default(), false).expect("dir");
        run(
            &mut scene,
            backend.as_mut(),
            &mut out,
            Some(&wgdem_io::VtkFiles),
            |_| {},
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let rows = std::fs::read_to_string(straight.join("timeseries.csv"))
            .expect("csv")
            .lines()
            .count();
        assert!(rows > 10, "{name}: {rows} lines");

        let broken = dir.path().join(format!("{name}_broken"));
        let mut scene = load();
        let mut backend = make(&scene.simulation);
        let mut out =
            OutputDir::create(&broken, &walls(&scene), Default::default(), false).expect("dir");
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut seen = 0;
            run(
                &mut scene,
                backend.as_mut(),
                &mut out,
                Some(&wgdem_io::VtkFiles),
                |_| {
                    seen += 1;
                    // Row 6 has just been checkpointed; fail after row 8 has been written too.
                    assert!(seen < 8, "a failure after row 8");
                },
            )
        }));
        assert!(failed.is_err(), "{name}: the run was not interrupted");
        drop(out);
        let mut scene = load();
        let mut backend = make(&scene.simulation);
        let every = (0.01 / scene.simulation.dt).round() as u64;
        // Where the resume starts: its first report is row 7, one row after the checkpoint
        // (a resume that ignored the checkpoint and ran from step 0 would report row 1 first,
        // and still end with the same files).
        let mut reported = Vec::new();
        resume(
            &mut scene,
            backend.as_mut(),
            &broken,
            Some(&wgdem_io::VtkFiles),
            |p| {
                reported.push(p.step);
                Ok(())
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            reported.first(),
            Some(&(7 * every)),
            "{name}: the resume did not start at row 6's checkpoint"
        );
        assert_eq!(
            reported.len(),
            // The CSV's lines less its header, the row at t = 0 and rows 1 to 6.
            rows - 2 - 6,
            "{name}: the resume reported other rows than those after row 6: {reported:?}"
        );
        let (a, b) = (common::outputs(&straight), common::outputs(&broken));
        assert_eq!(
            a.keys().collect::<Vec<_>>(),
            b.keys().collect::<Vec<_>>(),
            "{name}: the same files"
        );
        for (file, bytes) in &a {
            assert!(bytes == &b[file], "{name}: {file} differs after resuming");
        }
        eprintln!("{name}: {} files identical after resuming", a.len());
    }
}

/// A run whose rows lie far apart reports its progress every `runner::progress_steps` steps
/// between them (a run of 3·10⁹ steps with one row at its end showed nothing for hours), and
/// splitting its steps so leaves the results alone: eight spheres dropped on a floor for 50 000
/// steps with a row only at the start and the end report three times, and on the GPU end with
/// the bits of the same 50 000 steps taken in one call.
#[test]
fn distant_rows_get_progress_reports_between_them_with_the_same_bits() {
    use wgdem_core::output::OutputDir;
    use wgdem_core::runner::{CpuBackend, progress_steps, run};
    let scene = || eight_over_a_floor("duration = 0.5\noutput_interval = 0.5\ndt = 1e-5");
    assert_eq!(progress_steps(8), 20_000);
    let dir = tempfile::tempdir().expect("dir");
    let mut cpu = scene();
    let mut out = OutputDir::create(
        &dir.path().join("cpu"),
        &["floor".to_owned()],
        Default::default(),
        false,
    )
    .expect("dir");
    let mut reports = Vec::new();
    run(&mut cpu, &mut CpuBackend, &mut out, None, |p| {
        reports.push(p.step)
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reports, [20_000, 40_000, 50_000]);
    let rows = std::fs::read_to_string(dir.path().join("cpu/timeseries.csv")).expect("csv");
    assert_eq!(
        rows.lines().count(),
        3,
        "the header, t = 0 and the end: {rows}"
    );

    let Some(ctx) = common::gpu() else { return };
    let mut split = scene();
    let mut backend = common::gpu_backend(&ctx, &split.simulation, Default::default());
    let mut out = OutputDir::create(
        &dir.path().join("gpu"),
        &["floor".to_owned()],
        Default::default(),
        false,
    )
    .expect("dir");
    run(&mut split, &mut backend, &mut out, None, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let (whole, _) = common::run_gpu(&ctx, &scene().simulation, 50_000, Default::default());
    common::assert_same_bits("split by progress reports", &split.simulation, &whole);
    // f32 forces: each sphere's weight (1.6e-3 N) to about 1e-7 of itself.
    check_force_balance(&dir.path().join("gpu"), &split.simulation, 1e-9);
}

/// Eight 2 mm spheres in a cube 1 mm over a floor, with `simulation` as the body of the
/// `[simulation]` table (gravity as default).
fn eight_over_a_floor(simulation: &str) -> wgdem_core::scene::Scene {
    common::scene(&format!(
        r#"
[simulation]
{simulation}

[contact]
law = "hertz"
history = "true"

# fixture: material_m

[[particles]]
kind = "lattice"
material = "m"
radius = 0.002
origin = [0.002, 0.002, 0.003]
counts = [2, 2, 2]
spacing = 0.0041

[[walls]]
kind = "plane"
name = "floor"
material = "m"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
"#
    ))
}

/// The last particle CSV of the run in `dir` against its last row: the forces on the spheres
/// sum to their weight less the force they exert on the walls (the pair forces cancel), to
/// `tol` N in each component.
fn check_force_balance(dir: &Path, sim: &wgdem_core::cpu::Simulation, tol: f64) {
    let read = |path: &Path| -> (Vec<String>, Vec<Vec<f64>>) {
        let text = std::fs::read_to_string(path).expect("csv");
        let mut lines = text.lines();
        let header = lines
            .next()
            .expect("header")
            .split(',')
            .map(str::to_owned)
            .collect();
        let rows = lines
            .map(|l| l.split(',').map(|c| c.parse().expect("number")).collect())
            .collect();
        (header, rows)
    };
    let (series, rows) = read(&dir.join("timeseries.csv"));
    let last = rows.last().expect("a row");
    let column = |name: &str| series.iter().position(|c| c == name).expect(name);
    let snapshot = rows.len() - 1;
    let (header, spheres) = read(&dir.join(format!("particles/particles_{snapshot:06}.csv")));
    let mass: f64 = sim.particles.mass.iter().sum();
    for (k, axis) in ["x", "y", "z"].iter().enumerate() {
        let f = header
            .iter()
            .position(|c| c == &format!("f{axis}_N"))
            .expect("force column");
        let total: f64 = spheres.iter().map(|r| r[f]).sum();
        let walls: f64 = sim
            .walls
            .iter()
            .map(|w| last[column(&format!("wall_{}_f{axis}_N", w.name))])
            .sum();
        let expected = mass * sim.gravity[k] - walls;
        assert!(
            (total - expected).abs() <= tol,
            "Σ f{axis} {total} N against weight less wall forces {expected} N (bound {tol})"
        );
    }
}

/// With no `dt` given, the step divides `output_interval`, so that the rows of
/// `timeseries.csv` fall on its whole multiples and print as them (`df[df.time_s == 0.05]`
/// finds a row), and a duration that is a multiple of it ends on a row, with none after.
#[test]
fn rows_fall_on_whole_multiples_of_the_output_interval() {
    use wgdem_core::output::OutputDir;
    use wgdem_core::runner::{CpuBackend, run};
    let mut scene = eight_over_a_floor("duration = 0.1\noutput_interval = 0.01");
    let (dt, max_dt) = (scene.simulation.dt, scene.max_dt);
    let k = (0.01 / dt).round();
    assert!(
        dt <= max_dt && dt > max_dt * (k - 1.0) / k,
        "dt {dt}, max {max_dt}"
    );
    assert_ne!(
        max_dt, dt,
        "the stable step divides 0.01 s: the test shows nothing"
    );
    let dir = tempfile::tempdir().expect("dir");
    let mut out = OutputDir::create(dir.path(), &["floor".to_owned()], Default::default(), false)
        .expect("dir");
    run(&mut scene, &mut CpuBackend, &mut out, None, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let rows = std::fs::read_to_string(dir.path().join("timeseries.csv")).expect("csv");
    let times: Vec<&str> = rows
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).expect("time_s"))
        .collect();
    let expected = [
        "0.0", "0.01", "0.02", "0.03", "0.04", "0.05", "0.06", "0.07", "0.08", "0.09", "0.1",
    ];
    assert_eq!(times, expected);
    // f64 sums of 8 forces of about 1e-3 N.
    check_force_balance(dir.path(), &scene.simulation, 1e-15);
}

both_backends!(
    local_damping_is_taken_over_between_stages,
    gpu_local_damping_is_taken_over_between_stages,
    check_damping_switch
);

/// `Backend::update_gravity_and_damping` (what a shear test's preparation uses to switch
/// `specimen.local_damping` off at consolidation): one sphere falls freely with Cundall's
/// local damping α = 0.7, then without. Damping takes α |F| off each component against the
/// velocity; in a free fall the force is the weight, along the velocity, so the sphere
/// gains g Δt in the first step (v = 0: sign 0) and (1 − α) g Δt in each step after, then
/// g Δt a step once damping is off:
/// `v = g Δt (1 + (n₁ − 1)(1 − α) + n₂)`. The CPU reference (f64) meets it to 1e-12; the GPU
/// (f32 g and Δt, rounded to 6e-8 relative; a double-single velocity that loses nothing of
/// the sum) to 1e-5. An engine that kept the damping (v short by 0.7 g Δt n₂, 35 % here) or
/// never had it fails by far more.
fn check_damping_switch(on: On) {
    let (n1, n2, alpha, g, dt) = (200u64, 100u64, 0.7, 9.81, 1e-5);
    let mut sim = common::scene(&format!(
        r#"
[simulation]
duration = 1.0
output_interval = 1.0
dt = {dt}
gravity = [0.0, 0.0, -{g}]
local_damping = {alpha}

[contact]
law = "hertz"
history = "true"

# fixture: material_m

[[particles]]
kind = "explicit"
material = "m"
spheres = [{{ position = [0.0, 0.0, 0.0], radius = 0.002 }}]
"#
    ))
    .simulation;
    let mut backend: Box<dyn Backend> = match on {
        On::Cpu => Box::new(CpuBackend),
        On::Gpu => {
            let Some(ctx) = common::gpu() else { return };
            Box::new(common::gpu_backend(&ctx, &sim, Default::default()))
        }
    };
    backend
        .advance(&mut sim, n1)
        .unwrap_or_else(|e| panic!("{e}"));
    let damped = g * dt * (1.0 + (n1 - 1) as f64 * (1.0 - alpha));
    sim.local_damping = 0.0;
    backend
        .update_gravity_and_damping(&sim)
        .unwrap_or_else(|e| panic!("{e}"));
    backend
        .advance(&mut sim, n2)
        .unwrap_or_else(|e| panic!("{e}"));
    let expected = -(damped + g * dt * n2 as f64);
    let v = sim.particles.velocity[0].z;
    let tol = match on {
        On::Cpu => 1e-12,
        On::Gpu => 1e-5,
    };
    eprintln!("{on:?}: v_z = {v} m/s, closed form {expected} m/s");
    assert!(
        rel(v, expected) < tol,
        "{on:?}: v_z = {v} against {expected}"
    );
}
