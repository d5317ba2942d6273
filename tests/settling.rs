//! Potyondy (2016) memo, Section 2.2: a settled assembly's weight rests on the bottom wall.

mod common;

use std::path::Path;

use common::rel;
use wgdem_core::scene::load_scene;

/// The bundled scene `assets/scenes/potyondy_27_balls.toml`: 27 balls of 10 mm diameter,
/// ρ = 2650 kg/m³, settle in a box. At static equilibrium the bottom wall carries their weight,
/// W = 27 ρ (4/3 π R³) g = 0.36752 N, which the memo rounds to 0.368 N. Tolerance 0.5 %
/// against both (issue requirement); kinetic energy must have decayed so that the state is
/// static, not a snapshot of a bounce.
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
    assert!(rel(carried, weight) < 0.005, "{carried} N vs {weight} N");
    assert!(
        rel(carried, 0.368) < 0.005,
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
