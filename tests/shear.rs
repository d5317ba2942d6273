//! Direct shear tests on the bundled quick presets (`assets/shear/*_quick*.toml`).
//!
//! - Fleischmann et al. (2015), Fig. 2: with true tangential history the peak stress ratio is
//!   several times that of no history (we require at least twice), and pseudo history is no
//!   better than none (within 25 %): under quasi-static shear the relative tangential
//!   velocity, on which pseudo history depends, is nearly zero.
//! - He, Zheng & Li (2020), Fig. 8: a dense specimen dilates, a loose one contracts.
//! - The servo holds the normal stress within ±2 % during shear.
//! - A run stopped mid-shear and resumed from its checkpoint gives the same bits as one run
//!   straight through (CPU here; the GPU in `gpu_shear.rs`, the killed CLI in the CLI tests).
//! - `specimen.local_damping` acts in the preparation alone, a resume included; scaling a test
//!   scales its box, shear displacement and settling bounds; expansion reaches its void ratio.

mod common;

use std::path::Path;

use wgdem_core::runner::CpuBackend;
use wgdem_core::shear::{ShearRun, ShearSetup, ShearSummary, Stage};

fn run_cpu(setup: ShearSetup, dir: &Path) -> ShearSummary {
    let mut run = ShearRun::create(setup, dir, false, Box::new(wgdem_io::TestFiles))
        .unwrap_or_else(|e| panic!("{e}"));
    let summary = run
        .run(&mut CpuBackend, None, |_| {})
        .unwrap_or_else(|e| panic!("{e}"))
        .expect("ran to the end");
    assert_eq!(
        summary.gpu_bytes_per_particle, None,
        "the CPU holds no GPU memory"
    );
    summary
}

/// The plots draw the shear rows: each SVG's one blue line (`plots.rs`) has a point per row of
/// `shear.csv` in the shear stage, and each PNG (900 × 600) draws it across the plot: blue
/// pixels in at least 600 of its columns (the strain axis spans the data with a 5 % margin
/// either side, in a plot area about 800 pixels wide). An empty, truncated or blank plot, or
/// one of another stage's rows, fails.
fn check_plots(name: &str, dir: &Path) {
    let csv = std::fs::read_to_string(dir.join("shear.csv")).expect("shear.csv");
    let shear_rows = csv.lines().filter(|l| l.contains(",shear,")).count();
    assert!(shear_rows > 10, "{name}: {shear_rows} shear rows");
    for plot in ["stress_ratio", "vertical_displacement"] {
        let svg = std::fs::read_to_string(dir.join(format!("plots/{plot}.svg"))).expect("svg");
        let line = svg
            .split("<polyline")
            .find(|p| p.contains("stroke=\"#0000FF\""))
            .unwrap_or_else(|| panic!("{name}: {plot}.svg has no blue line"));
        let points = line
            .split("points=\"")
            .nth(1)
            .and_then(|p| p.split('"').next())
            .expect("points");
        assert_eq!(
            points.split_whitespace().count(),
            shear_rows,
            "{name}: {plot}.svg's line against the shear rows"
        );
        let file = std::fs::File::open(dir.join(format!("plots/{plot}.png"))).expect("png");
        let mut reader = png::Decoder::new(file).read_info().expect("a PNG");
        let mut rgb = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut rgb).expect("its pixels");
        assert_eq!((info.width, info.height), (900, 600), "{name}: {plot}.png");
        let columns = (0..900)
            .filter(|&x| {
                (0..600).any(|y| {
                    let k = 3 * (y * 900 + x);
                    rgb[k..k + 3] == [0, 0, 255]
                })
            })
            .count();
        assert!(
            columns >= 600,
            "{name}: {plot}.png draws its line over {columns} columns"
        );
    }
}

fn run_preset(name: &str, servo_bound: bool) -> ShearSummary {
    let dir = tempfile::tempdir().expect("temp dir");
    let s = run_cpu(common::load_shear(name), dir.path());
    // The outputs a researcher opens.
    for f in [
        "shear.csv",
        "summary.json",
        "plots/stress_ratio.png",
        "plots/stress_ratio.svg",
        "plots/vertical_displacement.png",
        "plots/vertical_displacement.svg",
        "vtk/shear.pvd",
        "vtk/particles_0000.vtu",
        "vtk/contacts_0000.vtu",
    ] {
        assert!(dir.path().join(f).is_file(), "{name}: {f} missing");
    }
    check_plots(name, dir.path());
    eprintln!(
        "{name}: peak τ/σ {:.3} (φ_p {:.1}°), residual {:.3} (φ_r {:.1}°), max dilation {:.1}°, e0 {:.3}, σ error {:.2} %, I ≤ {:.1e}",
        s.peak_stress_ratio,
        s.peak_friction_angle_deg,
        s.residual_stress_ratio,
        s.residual_friction_angle_deg,
        s.max_dilation_angle_deg,
        s.initial_void_ratio,
        100.0 * s.normal_stress_error_max_fraction,
        s.max_inertial_number
    );
    assert!(
        !servo_bound || s.normal_stress_error_max_fraction <= 0.02,
        "{name}: normal stress strayed {:.2} % from its target during shear (bound ±2 %)",
        100.0 * s.normal_stress_error_max_fraction
    );
    assert!(
        !s.consolidation_timed_out,
        "{name}: consolidation did not settle"
    );
    assert!(
        s.max_inertial_number < 1e-3,
        "{name}: not quasi-static, I = {:e}",
        s.max_inertial_number
    );
    check_stage_steps(name, &s, dir.path());
    s
}

/// The summary's steps per stage are those of `shear.csv`'s rows (each stage ends on a row of
/// its name) and add up to the run's; the preparation's mean speed is the one its last row's
/// kinetic energy gives, and "settled" compares it with `specimen.settle_speed`.
fn check_stage_steps(name: &str, s: &ShearSummary, dir: &Path) {
    let text = std::fs::read_to_string(dir.join("shear.csv")).expect("shear.csv");
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let column = |key: &str| {
        wgdem_core::shear::HEADER
            .iter()
            .position(|h| *h == key)
            .unwrap_or_else(|| panic!("no column {key}"))
    };
    let last = |stage: &str| {
        rows.iter()
            .rev()
            .find(|r| r[column("stage")] == stage)
            .unwrap_or_else(|| panic!("{name}: no {stage} row"))
    };
    let step = |r: &Vec<&str>| r[column("step")].parse::<u64>().expect("step");
    let (p, c) = (step(last("preparation")), step(last("consolidation")));
    assert_eq!(s.preparation_steps, p, "{name}");
    assert_eq!(s.consolidation_steps, c - p, "{name}");
    assert_eq!(s.shear_steps, s.steps - c, "{name}");
    assert!(s.preparation_steps > 0 && s.consolidation_steps > 0 && s.shear_steps > 0);
    let config = common::load_shear(name).config;
    let density = config
        .materials
        .iter()
        .find(|m| m.name == config.specimen.material)
        .and_then(|m| m.density)
        .expect("the specimen's density");
    let prepared = wgdem_io::read_packing(&dir.join("specimen_prepared.csv"))
        .unwrap_or_else(|e| panic!("{e}"));
    let mass: f64 = prepared
        .spheres
        .iter()
        .map(|p| density * 4.0 / 3.0 * std::f64::consts::PI * p.radius.powi(3))
        .sum();
    let energy: f64 = last("preparation")[column("kinetic_energy_J")]
        .parse()
        .expect("kinetic energy");
    let speed = s.preparation_mean_speed_m_per_s.expect("prepared here");
    assert!(
        common::rel(speed, (2.0 * energy / mass).sqrt()) < 1e-9,
        "{name}: {speed} m/s"
    );
    assert_eq!(
        s.preparation_settled,
        Some(speed < config.specimen.settle_speed),
        "{name}"
    );
    eprintln!(
        "{name}: {p} steps of preparation (mean speed {speed:.3e} m/s at its end), {} of consolidation, {} of shear",
        s.consolidation_steps, s.shear_steps
    );
}

#[test]
fn true_history_doubles_the_peak_and_pseudo_history_is_no_better_than_none() {
    let [t, p, n] = std::thread::scope(|scope| {
        let h = ["true", "pseudo", "none"]
            .map(|m| scope.spawn(move || run_preset(&format!("fleischmann_quick_{m}.toml"), true)));
        h.map(|h| h.join().expect("run"))
    });
    assert!(
        t.peak_stress_ratio >= 2.0 * n.peak_stress_ratio,
        "true history peak {:.3} is not at least twice no history's {:.3}",
        t.peak_stress_ratio,
        n.peak_stress_ratio
    );
    let d = common::rel(p.peak_stress_ratio, n.peak_stress_ratio);
    assert!(
        d <= 0.25,
        "pseudo history peak {:.3} differs from no history's {:.3} by {:.0} % (bound 25 %)",
        p.peak_stress_ratio,
        n.peak_stress_ratio,
        100.0 * d
    );
}

#[test]
#[ignore = "long tier: two quick He presets, about 1.5 minutes"]
fn dense_specimens_dilate_and_loose_ones_contract() {
    let [dense, loose] = std::thread::scope(|scope| {
        // A loose specimen collapses in bursts as it contracts, faster than the servo
        // follows: the ±2 % bound is checked on the dense one only.
        [
            ("he_quick_dense.toml", true),
            ("he_quick_loose.toml", false),
        ]
        .map(|(m, bound)| scope.spawn(move || run_preset(m, bound)))
        .map(|h| h.join().expect("run"))
    });
    assert!(
        loose.initial_void_ratio > dense.initial_void_ratio,
        "μ_prep = 1 gave e0 {:.3}, not looser than μ_prep = 0's {:.3}",
        loose.initial_void_ratio,
        dense.initial_void_ratio
    );
    assert!(
        dense.max_dilation_angle_deg > 0.0 && dense.final_vertical_displacement_m > 0.0,
        "dense: max dilation angle {:.2}°, final rise {:e} m",
        dense.max_dilation_angle_deg,
        dense.final_vertical_displacement_m
    );
    assert!(
        loose.final_vertical_displacement_m < 0.0,
        "loose: the top plate rose by {:e} m",
        loose.final_vertical_displacement_m
    );
}

#[test]
#[ignore = "long tier: a shear test stopped and resumed"]
fn a_run_stopped_mid_shear_resumes_to_the_same_bits() {
    let text = common::short_shear();
    let setup = || ShearSetup::parse(&text, "short.toml").unwrap_or_else(|e| panic!("{e}"));
    let straight = tempfile::tempdir().expect("temp dir");
    let full = run_cpu(setup(), straight.path());
    let csv = std::fs::read_to_string(straight.path().join("shear.csv")).expect("csv");
    let rows = csv.lines().count() - 1;
    let shear_rows = csv.lines().filter(|l| l.contains(",shear,")).count();
    assert!(shear_rows > 10, "only {shear_rows} shear rows");

    // Stop a few rows after a checkpoint, in the middle of shear.
    let stopped = tempfile::tempdir().expect("temp dir");
    let stop = rows - shear_rows / 2;
    let mut run = ShearRun::create(
        setup(),
        stopped.path(),
        false,
        Box::new(wgdem_io::TestFiles),
    )
    .expect("create");
    let none = run
        .run(&mut CpuBackend, Some(stop), |_| {})
        .expect("first part");
    assert!(none.is_none(), "the run should have stopped early");
    drop(run);
    let mut backend = CpuBackend;
    let mut run = ShearRun::resume(
        setup(),
        stopped.path(),
        &mut backend,
        Box::new(wgdem_io::TestFiles),
    )
    .expect("resume");
    // Where the resume starts: at the last checkpoint before the stop, which is taken every
    // 20 rows (`checkpoint_rows`), not at the start (a restart from row 0 would also end with
    // the same bytes).
    let resumed_at = run.state().rows.len();
    assert!(
        resumed_at <= stop && resumed_at + 20 > stop,
        "resumed at row {resumed_at}, not at the last checkpoint before row {stop}"
    );
    let resumed = run
        .run(&mut backend, None, |_| {})
        .expect("second part")
        .expect("done");
    let csv2 = std::fs::read_to_string(stopped.path().join("shear.csv")).expect("csv");
    assert!(csv == csv2, "shear.csv differs after resuming");
    assert_eq!(
        full.peak_stress_ratio.to_bits(),
        resumed.peak_stress_ratio.to_bits()
    );
    assert_eq!(full.steps, resumed.steps);
    for f in [
        "vtk/particles_0003.vtu",
        "vtk/contacts_0003.vtu",
        "vtk/shear.pvd",
    ] {
        let a = std::fs::read(straight.path().join(f)).expect(f);
        let b = std::fs::read(stopped.path().join(f)).expect(f);
        assert!(a == b, "{f} differs after resuming");
    }
}

/// `wgdem shear --particles N`: the box, the shear displacement and the bounds on the settling
/// stages grow by (N / count)^(1/3) and nothing else changes, so the specimen keeps its shape,
/// the strain it is sheared to and (for the expansion method) its target void ratio. 300 →
/// 2 400 spheres is a factor of 2.
#[test]
fn a_test_scaled_to_more_spheres_keeps_its_shape_strain_and_packing() {
    for name in ["fleischmann_quick_true.toml", "scale_check.toml"] {
        let path = common::shear_preset(name);
        let text = std::fs::read_to_string(&path).expect("preset");
        let base = ShearSetup::parse(&text, name).unwrap_or_else(|e| panic!("{e}"));
        let big =
            ShearSetup::parse_scaled(&text, name, Some(2400)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(base.scene.simulation.particles.len(), 300, "{name}");
        assert_eq!(big.scene.simulation.particles.len(), 2400, "{name}");
        let (b, s) = (&base.config.shear_box, &big.config.shear_box);
        for (what, x, y) in [
            ("length", b.length, s.length),
            ("width", b.width, s.width),
            ("lower_height", b.lower_height, s.lower_height),
            ("upper_height", b.upper_height, s.upper_height),
            (
                "shear displacement",
                base.config.shear.displacement,
                big.config.shear.displacement,
            ),
            // Bounds on the settling stages, not their lengths.
            (
                "specimen.max_time",
                base.config.specimen.max_time,
                big.config.specimen.max_time,
            ),
            (
                "consolidation.max_time",
                base.config.consolidation.max_time,
                big.config.consolidation.max_time,
            ),
        ] {
            assert!(
                common::rel(y, 2.0 * x) < 1e-12,
                "{name}: {what} {y} is not twice {x}"
            );
        }
        assert!(common::rel(big.area, 4.0 * base.area) < 1e-12, "{name}");
        assert_eq!(s.gap, b.gap, "{name}: the gap is a fraction of a diameter");
        // What the test is made of and how it is loaded stay as in the file.
        assert_eq!(big.scene.simulation.dt, base.scene.simulation.dt, "{name}");
        // A mean of equal diameters: the same to the rounding of its sum.
        assert!(
            common::rel(big.mean_diameter, base.mean_diameter) < 1e-12,
            "{name}"
        );
        assert_eq!(
            big.config.consolidation.normal_stress,
            base.config.consolidation.normal_stress
        );
        assert_eq!(big.config.shear.speed, base.config.shear.speed);
        if let (Some(h0), Some(h1)) = (base.expansion_height, big.expansion_height) {
            // h = V_s (1 + e) / A: 8 times the solid in 4 times the area.
            assert!(common::rel(h1, 2.0 * h0) < 1e-12, "{name}: {h1} vs {h0}");
        }
        assert!(
            big.text.ends_with("# scaled to 2400 spheres\n"),
            "{name}: the checkpoint text does not record the scaling"
        );
    }
}

#[test]
fn scaling_errors_name_the_argument_and_the_field() {
    let name = "fleischmann_quick_true.toml";
    let text = std::fs::read_to_string(common::shear_preset(name)).expect("preset");
    let error = |n| match ShearSetup::parse_scaled(&text, name, Some(n)) {
        Ok(_) => panic!("--particles {n} accepted"),
        Err(e) => e.to_string(),
    };
    let zero = error(0);
    assert!(
        zero.contains("`particles`") && zero.contains("at least 1"),
        "{zero}"
    );
    // One sphere of 5 mm would need a box of 4.5 mm.
    let one = error(1);
    assert!(
        one.contains("scaled to 1 spheres") && one.contains("box.length"),
        "{one}"
    );
}

/// A checkpoint records the scaling: resuming without `--particles`, or with another N, is
/// refused with a message that names the particle count; the same N resumes.
#[test]
fn a_scaled_test_resumes_only_with_the_same_scaling() {
    let text = common::short_shear();
    let setup = |n: Option<u32>| {
        ShearSetup::parse_scaled(&text, "short.toml", n).unwrap_or_else(|e| panic!("{e}"))
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut run = ShearRun::create(
        setup(Some(320)),
        dir.path(),
        false,
        Box::new(wgdem_io::TestFiles),
    )
    .expect("create");
    // The first stage change writes a checkpoint; stop soon after it.
    let mut rows = 0;
    while !dir.path().join("checkpoint.bin").exists() {
        assert!(rows < 200, "no checkpoint after {rows} rows");
        run.run(&mut CpuBackend, Some(1), |_| {}).expect("a row");
        rows += 1;
    }
    drop(run);
    for other in [None, Some(300), Some(400)] {
        match ShearRun::resume(
            setup(other),
            dir.path(),
            &mut CpuBackend,
            Box::new(wgdem_io::TestFiles),
        ) {
            Ok(_) => panic!("resumed a test scaled to 320 spheres with {other:?}"),
            Err(e) => assert!(e.to_string().contains("particle count"), "{e}"),
        }
    }
    let run = ShearRun::resume(
        setup(Some(320)),
        dir.path(),
        &mut CpuBackend,
        Box::new(wgdem_io::TestFiles),
    )
    .expect("resume");
    assert_eq!(run.simulation().particles.len(), 320);
}

/// A zero control interval is refused with the default the docs give (20 steps), and the line.
#[test]
fn a_zero_control_interval_names_the_documented_default() {
    let text = std::fs::read_to_string(common::shear_preset("hartl_ooi_quick.toml"))
        .expect("preset")
        .replace(
            "[simulation]\n",
            "[simulation]\ncontrol_interval_steps = 0\n",
        );
    match ShearSetup::parse(&text, "zero.toml") {
        Ok(_) => panic!("a zero control interval was accepted"),
        Err(e) => {
            let e = e.to_string();
            assert!(
                e.contains("simulation.control_interval_steps")
                    && e.contains("default 20")
                    && e.contains("line "),
                "{e}"
            );
        }
    }
}

/// Every bundled shear preset loads: parsed, checked, its pair table built (per-pair models and
/// rolling resistance included) and its specimen generated. A preset with a mistyped key or a
/// combination the engine refuses fails here rather than in a user's run.
#[test]
fn every_bundled_shear_preset_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/shear");
    let mut loaded = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("assets/shear") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let name = path
                .file_name()
                .expect("file name")
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&path).expect("preset");
            let setup = ShearSetup::parse(&text, &name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!setup.scene.simulation.particles.is_empty(), "{name}");
            loaded.push(name);
        }
    }
    loaded.sort();
    eprintln!("{} presets: {}", loaded.len(), loaded.join(", "));
    assert!(loaded.len() >= 20, "presets missing from {}", dir.display());
    assert!(loaded.iter().any(|n| n == "he_quick_dense_rolling.toml"));
}

/// `[consolidation] friction_change` decides when the preparation friction (μ_prep = 1 on
/// the loose He preset) gives way to the material's (0.1): "resettle" once consolidated, with
/// a second settling under the servo; "at_shear" on the first shear step, so the shear meets
/// the packing consolidated with μ_prep. Run on a simple cubic lattice of 600 spheres (stable
/// under load at any friction, so consolidation takes a few rows) in the quick loose He box,
/// stepped row by row. The summary's initial void ratio is the last consolidation row's.
#[test]
fn the_preparation_friction_gives_way_when_friction_change_says() {
    use wgdem_core::packing::{MaterialRef, PackedSphere, Packing};
    let r = 0.0025;
    // Six layers: the specimen reaches two diameters above the shear plane (z = 0.015 m),
    // as a saved specimen must.
    let spheres = (0..6)
        .flat_map(|k| (0..10).flat_map(move |j| (0..10).map(move |i| (i, j, k))))
        .map(|(i, j, k)| PackedSphere {
            position: glam::DVec3::new(
                -0.025 + r * f64::from(2 * i + 1),
                -0.025 + r * f64::from(2 * j + 1),
                r * f64::from(2 * k + 1),
            ),
            radius: r,
            velocity: glam::DVec3::ZERO,
            angular_velocity: glam::DVec3::ZERO,
            material: MaterialRef::Default,
            id: None,
            density: None,
        })
        .collect();
    let packing = Packing {
        source: "lattice".to_owned(),
        spheres,
        lammps_types: false,
        recorded_max_overlap: None,
        recorded_cell: None,
    };
    let preset =
        std::fs::read_to_string(common::shear_preset("he_quick_loose.toml")).expect("preset");
    assert!(preset.contains("friction_change = \"at_shear\""));
    let preset = preset
        .replace("friction_change = \"at_shear\"", "friction_change = \"{}\"")
        .replace("count = 830", "count = 600");
    for mode in ["resettle", "at_shear"] {
        let text = preset.replace("{}", mode);
        let setup = ShearSetup::parse(&text, mode).unwrap_or_else(|e| panic!("{e}"));
        let dir = tempfile::tempdir().expect("temp dir");
        let mut run = ShearRun::create_from_specimen(
            setup,
            &packing,
            dir.path(),
            false,
            Box::new(wgdem_io::TestFiles),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let friction = |run: &ShearRun| {
            let m = run.simulation().particles.material[0];
            run.simulation().pair(m, m).friction()
        };
        // (stage, sphere–sphere friction) before each row.
        let mut seen = Vec::new();
        while run.state().stage != Stage::Shear {
            seen.push((run.state().stage, friction(&run)));
            assert!(
                seen.len() < 400,
                "{mode}: no shear after 400 rows: {seen:?}"
            );
            run.run(&mut CpuBackend, Some(1), |_| {})
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let consolidation: Vec<f64> = seen
            .iter()
            .filter(|(s, _)| *s == Stage::Consolidation)
            .map(|&(_, f)| f)
            .collect();
        eprintln!(
            "{mode}: {} consolidation rows, friction {:?} → {} in shear",
            consolidation.len(),
            consolidation,
            friction(&run)
        );
        assert_eq!(consolidation[0], 1.0, "{mode}: μ_prep while consolidating");
        assert_eq!(friction(&run), 0.1, "{mode}: the material's μ in shear");
        let resettled = consolidation.iter().filter(|&&f| f == 0.1).count();
        match mode {
            "resettle" => assert!(
                resettled >= 5,
                "resettle: {resettled} rows settled with μ = 0.1 (settle_rows is 5)"
            ),
            _ => assert_eq!(resettled, 0, "at_shear: μ changed before shear"),
        }
        run.run(&mut CpuBackend, Some(2), |_| {})
            .unwrap_or_else(|e| panic!("{e}"));
        let rows = &run.state().rows;
        let last_consolidated = rows
            .iter()
            .rev()
            .find(|r| r.stage == "consolidation")
            .expect("consolidation rows");
        let summary = run.summary(&CpuBackend);
        assert_eq!(summary.initial_void_ratio, last_consolidated.void_ratio);
        // A saved specimen is not prepared here.
        assert_eq!(summary.preparation_steps, 0);
        assert_eq!(summary.preparation_mean_speed_m_per_s, None);
        assert_eq!(summary.preparation_settled, None);
        assert_eq!(
            summary.consolidation_steps + summary.shear_steps,
            summary.steps
        );
    }
}

/// `method = "expansion"` reaches its `target_void_ratio` (docs/shear.md): `scale_check.toml`
/// (300 spheres of 5 mm, e = 0.7, two increments) places them shrunk under a lid at
/// h = V_s (1 + e) / A and grows them back, so at the end of preparation every radius is the
/// specimen's own again (to 1e-12: each increment multiplies by the same factor, whose power is
/// rounded) and the void ratio under the lid, A h / V_s − 1, is the target (1e-12), as the
/// summary says; and every sphere is under the lid but for its contact's overlap (2.1 % of a
/// radius at most here, where the settled packing still touches the lid; bound 10 %, far
/// below a sphere through it). A radius short of its last
/// increment or a lid at another height moves e by far more than the bound.
#[test]
fn expansion_prepares_the_target_void_ratio() {
    let name = "scale_check.toml";
    let setup = common::load_shear(name);
    let h = setup.expansion_height.expect("an expansion preset");
    let area = setup.area;
    let target = setup.config.specimen.target_void_ratio.expect("a target");
    let dir = tempfile::tempdir().expect("temp dir");
    let summary = run_cpu(setup, dir.path());
    let packing = wgdem_io::read_packing(&dir.path().join("specimen_prepared.csv"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(packing.spheres.len(), 300);
    let solid: f64 = packing
        .spheres
        .iter()
        .map(|s| {
            assert!(
                common::rel(s.radius, 0.0025) < 1e-12,
                "a radius of {} m at the end of preparation",
                s.radius
            );
            assert!(
                s.position.z + s.radius <= h + 0.1 * s.radius,
                "a sphere reaches {} m above the lid at {h} m",
                s.position.z + s.radius - h
            );
            4.0 / 3.0 * std::f64::consts::PI * s.radius.powi(3)
        })
        .sum();
    let e = area * h / solid - 1.0;
    eprintln!(
        "{name}: e = {e} under the lid (target {target}), summary {}",
        summary.preparation_void_ratio
    );
    assert!(common::rel(e, target) < 1e-12, "e = {e} against {target}");
    assert!(common::rel(summary.preparation_void_ratio, target) < 1e-12);
}

/// `scale_check.toml` (300 spheres, expansion; CPU) with `sets` applied as `--set` would.
fn scale_check_with(sets: &[&str]) -> String {
    common::with_sets(&common::shear_preset("scale_check.toml"), sets)
}

/// `specimen.local_damping` is the preparation's alone: every preparation row is stepped with
/// it, every consolidation and shear row without, and a test resumed from a checkpoint taken
/// in consolidation steps on without it, to the same bytes of `shear.csv` as a run straight
/// through (a resume that took the scene's damping back would part from the first row after
/// it). Its preparation ends settled here, in fewer steps than without damping (8 000 against
/// 18 400 with five increments), so the stages change where they would in a real test.
#[test]
fn preparation_damping_is_off_from_consolidation_on_and_after_a_resume() {
    let text = scale_check_with(&[
        "specimen.local_damping=0.7",
        "specimen.expansion_increments=5",
        "specimen.max_time=0.2",
        "output.checkpoint_rows=3",
        "output.checkpoint_seconds=0",
    ]);
    let setup = || ShearSetup::parse(&text, "damped.toml").unwrap_or_else(|e| panic!("{e}"));
    let straight = tempfile::tempdir().expect("temp dir");
    let mut run = ShearRun::create(
        setup(),
        straight.path(),
        false,
        Box::new(wgdem_io::TestFiles),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // (stage, damping) before each row.
    let mut seen = Vec::new();
    let summary = loop {
        seen.push((run.state().stage, run.simulation().local_damping));
        assert!(seen.len() < 1000, "no end after 1000 rows");
        if let Some(s) = run
            .run(&mut CpuBackend, Some(1), |_| {})
            .unwrap_or_else(|e| panic!("{e}"))
        {
            break s;
        }
    };
    assert_eq!(summary.preparation_settled, Some(true), "{summary:?}");
    for &(stage, alpha) in &seen {
        let expected = if stage == Stage::Preparation {
            0.7
        } else {
            0.0
        };
        assert_eq!(alpha, expected, "{stage:?}");
    }
    let rows = seen.len();
    let consolidating = seen
        .iter()
        .position(|&(s, _)| s == Stage::Consolidation)
        .expect("a consolidation row");
    assert!(consolidating + 4 < rows, "{consolidating} of {rows} rows");
    let csv = std::fs::read(straight.path().join("shear.csv")).expect("csv");

    let stopped = tempfile::tempdir().expect("temp dir");
    let mut run = ShearRun::create(
        setup(),
        stopped.path(),
        false,
        Box::new(wgdem_io::TestFiles),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let stop = consolidating + 4;
    let none = run
        .run(&mut CpuBackend, Some(stop), |_| {})
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(none.is_none(), "the run should have stopped early");
    drop(run);
    let mut run = ShearRun::resume(
        setup(),
        stopped.path(),
        &mut CpuBackend,
        Box::new(wgdem_io::TestFiles),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run.state().stage, Stage::Consolidation);
    assert!(
        run.state().rows.len() > consolidating,
        "resumed in preparation"
    );
    assert_eq!(run.simulation().local_damping, 0.0);
    run.run(&mut CpuBackend, None, |_| {})
        .unwrap_or_else(|e| panic!("{e}"))
        .expect("done");
    let resumed = std::fs::read(stopped.path().join("shear.csv")).expect("csv");
    assert!(csv == resumed, "shear.csv differs after resuming");
}

/// `specimen.local_damping` outside [0, 1) is refused with the field named, at f64's
/// extremes too; 0 and 0.99 are taken.
#[test]
fn bad_preparation_damping_is_refused_with_the_field_named() {
    for bad in ["1.0", "-0.1", "nan", "inf", "-inf", "1e308", "-1e-300"] {
        let text = scale_check_with(&[&format!("specimen.local_damping={bad}")]);
        let err = ShearSetup::parse(&text, "bad.toml").expect_err(bad);
        assert!(
            err.to_string().contains("specimen.local_damping"),
            "{bad}: {err}"
        );
    }
    for good in ["0.0", "0.99"] {
        let text = scale_check_with(&[&format!("specimen.local_damping={good}")]);
        ShearSetup::parse(&text, "good.toml").unwrap_or_else(|e| panic!("{good}: {e}"));
    }
}

/// `output.checkpoint_seconds` must be a number of seconds ≥ 0, at f64's extremes too.
#[test]
fn a_bad_checkpoint_pace_is_refused_with_the_field_named() {
    for bad in ["-1.0", "nan", "inf", "-inf", "-1e308", "-1e-300"] {
        let text = scale_check_with(&[&format!("output.checkpoint_seconds={bad}")]);
        let err = ShearSetup::parse(&text, "bad.toml").expect_err(bad);
        assert!(
            err.to_string().contains("output.checkpoint_seconds"),
            "{bad}: {err}"
        );
    }
    for good in ["0.0", "1e308"] {
        let text = scale_check_with(&[&format!("output.checkpoint_seconds={good}")]);
        ShearSetup::parse(&text, "good.toml").unwrap_or_else(|e| panic!("{good}: {e}"));
    }
}
