//! `backend = "auto"` (`GpuBackend::auto`): the CPU reference where the adapter is a software
//! one and the scene is small, the GPU engine otherwise, with the reason in words.

mod common;

use wgdem_gpu::{GpuBackend, GpuOptions, backend::AUTO_SOFTWARE_CPU_BELOW};

/// Spheres of 1 mm on a lattice spaced 3 mm apart, `side`³ of them, no gravity.
fn lattice(side: usize) -> wgdem_core::cpu::Simulation {
    lattice_in(side, "")
}

/// [`lattice`] with `more` (TOML) after it.
fn lattice_in(side: usize, more: &str) -> wgdem_core::cpu::Simulation {
    common::scene(&format!(
        r#"
        [simulation]
        duration = 0.01
        output_interval = 0.01
        gravity = [0.0, 0.0, 0.0]
        [contact]
        law = "hertz"
        history = "true"
        # fixture: material_m
        [[particles]]
        kind = "lattice"
        material = "m"
        radius = 0.001
        origin = [0.0, 0.0, 0.0]
        spacing = 0.003
        counts = [{side}, {side}, {side}]
        {more}
        "#
    ))
    .simulation
}

/// On a software adapter (lavapipe, as CI has) a scene below the threshold goes to the CPU
/// reference and one at or above it to the GPU engine; on a hardware adapter both go to the
/// GPU engine. Either way the reason names the choice, the adapter and the count.
#[test]
fn auto_takes_the_cpu_reference_for_small_scenes_on_a_software_adapter() {
    let Some(software) = common::gpu_is_software() else {
        return;
    };
    let small = lattice(10);
    let large = lattice(22);
    assert!(small.particles.len() < AUTO_SOFTWARE_CPU_BELOW);
    assert!(large.particles.len() >= AUTO_SOFTWARE_CPU_BELOW);
    for (sim, gpu_expected) in [(&small, !software), (&large, true)] {
        let (backend, why) =
            GpuBackend::auto(None, sim, GpuOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("{why}");
        assert_eq!(backend.is_some(), gpu_expected, "{why}");
        let engine = if gpu_expected { "gpu" } else { "cpu" };
        assert!(
            why.starts_with(&format!("auto: {engine}, because")),
            "{why}"
        );
        if !gpu_expected {
            assert!(
                why.contains("software") && why.contains(&sim.particles.len().to_string()),
                "{why}"
            );
        }
    }
    // An adapter asked for by name that is not there is refused, not replaced by the CPU.
    let refused = GpuBackend::auto(Some("no such adapter"), &small, GpuOptions::default());
    assert!(refused.is_err());
}

/// A periodic cell, alone or with walls beside it, is the GPU engine's: `auto` chooses by size,
/// with a periodic cell's threshold on a software adapter, where a cell of 22³ = 10 648 spheres
/// (above the plain threshold) goes to the CPU reference with the cell named in the reason;
/// on a hardware adapter every cell goes to the GPU engine.
#[test]
fn a_periodic_cell_with_or_without_walls_is_the_gpu_engines() {
    use wgdem_gpu::backend::AUTO_SOFTWARE_CPU_BELOW_PERIODIC;
    let Some(software) = common::gpu_is_software() else {
        return;
    };
    let spheres = "{ position = [0.005, 0.005, 0.005], radius = 0.002 }";
    let cell = "edges = [[0.02, 0.0, 0.0], [0.0, 0.02, 0.0], [0.0, 0.0, 0.02]]";
    let alone = common::scene(&common::periodic_scene("hertz", 0.2, cell, spheres)).simulation;
    let walled = common::scene(
        &(common::periodic_scene("hertz", 0.2, cell, spheres)
            + &common::plane("floor", 0.0, 1.0, 0.0)),
    )
    .simulation;
    assert_eq!(walled.walls.len(), 1);
    for sim in [&alone, &walled] {
        GpuBackend::new(None, sim, GpuOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let (backend, why) =
            GpuBackend::auto(None, sim, GpuOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(backend.is_some(), !software, "{why}");
        assert!(!why.contains("wall"), "{why}");
    }
    let cell = lattice_in(
        22,
        "[cell]\nedges = [[0.066, 0.0, 0.0], [0.0, 0.066, 0.0], [0.0, 0.0, 0.066]]",
    );
    let n = cell.particles.len();
    assert!((AUTO_SOFTWARE_CPU_BELOW..AUTO_SOFTWARE_CPU_BELOW_PERIODIC).contains(&n));
    let (backend, why) =
        GpuBackend::auto(None, &cell, GpuOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{why}");
    assert_eq!(backend.is_some(), !software, "{why}");
    if software {
        assert!(
            why.contains("periodic cell") && why.contains(&n.to_string()),
            "{why}"
        );
    }
}

/// A linear pair run by the conventional algorithm (`refined = false`, for comparisons) is the
/// CPU reference's alone: the GPU engine refuses it by name, saying so (the CLI and Python add
/// how to choose the CPU reference, each in its own words), and `auto` takes the CPU.
#[test]
fn a_conventional_linear_pair_goes_to_the_cpu_reference() {
    use wgdem_core::contact::model::{LinearStiffness, PairModel};
    if common::gpu_is_software().is_none() {
        return;
    }
    let mut sim = lattice(3);
    let pair = sim.pair(0, 0).with_model(PairModel::Linear {
        stiffness: LinearStiffness::Direct { kn: 1e4, kt: 1e4 },
        twirl: true,
        refined: false,
    });
    sim.set_pair_params(vec![pair]);
    let (backend, why) =
        GpuBackend::auto(None, &sim, GpuOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        backend.is_none() && why.contains("refined = false"),
        "{why}"
    );
    let e = GpuBackend::new(None, &sim, GpuOptions::default())
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("refined = false") && e.contains("CPU reference only"),
        "{e}"
    );
}

/// A Jäger pair whose history capacity is beyond the GPU engine's slots
/// (`JAGER_GPU_CAPACITY`, 32 points; Kuhn & Jäger's presets keep exact histories of 4 096) is
/// the CPU reference's: `auto` takes the CPU naming the pair and both capacities, and the GPU
/// engine refuses it with the fix. At 32 points the GPU engine takes it (the CPU only for the
/// size here, on a software adapter).
#[test]
fn a_jager_capacity_beyond_the_gpu_slots_goes_to_the_cpu_reference() {
    use wgdem_core::contact::model::PairModel;
    if common::gpu_is_software().is_none() {
        return;
    }
    let with_capacity = |capacity: usize| {
        let mut sim = lattice(3);
        let pair = sim.pair(0, 0).with_model(PairModel::Jager {
            shear_modulus: 4e6,
            poisson_ratio: 0.25,
            dp_max: 0.0,
            capacity,
        });
        sim.set_pair_params(vec![pair]);
        sim
    };
    let sim = with_capacity(4096);
    let (backend, why) =
        GpuBackend::auto(None, &sim, GpuOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        backend.is_none() && why.contains("Jäger") && why.contains("4096") && why.contains("32"),
        "{why}"
    );
    let e = GpuBackend::new(None, &sim, GpuOptions::default())
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("capacity ≤ 32") && e.contains("(0, 0)"), "{e}");
    let (_, why) = GpuBackend::auto(None, &with_capacity(32), GpuOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!why.contains("Jäger"), "{why}");
    GpuBackend::new(None, &with_capacity(32), GpuOptions::default())
        .unwrap_or_else(|e| panic!("32 points: {e}"));
}
