//! Bad scene files give one clear line naming the file and field, never a panic.

use std::path::Path;

use wgdem_core::scene::{SceneConfig, build_scene, load_scene};

const GOOD: &str = r#"
[simulation]
duration = 0.1
output_interval = 0.01

[contact]
law = "hertz"
history = "true"

[[materials]]
name = "glass"
density = 2550.0
friction = 0.18
young_modulus = 4e7
poisson_ratio = 0.22
restitution = 0.5

[[particles]]
kind = "explicit"
material = "glass"
spheres = [{ position = [0.01, 0.01, 0.01], radius = 0.003 }]

[[walls]]
kind = "plane"
name = "bottom"
material = "glass"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
"#;

fn error_of(text: &str) -> String {
    let result =
        SceneConfig::parse(text, "bad.toml").and_then(|c| build_scene(c, "bad.toml").map(|_| ()));
    match result {
        Ok(()) => panic!("accepted a bad scene:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn assert_names(message: &str, parts: &[&str]) {
    assert!(!message.contains('\n'), "not one line: {message}");
    assert!(message.starts_with("bad.toml"), "no file name: {message}");
    for p in parts {
        assert!(message.contains(p), "`{p}` missing from: {message}");
    }
}

#[test]
fn the_good_scene_builds() {
    let c = SceneConfig::parse(GOOD, "good.toml").unwrap_or_else(|e| panic!("{e}"));
    let scene = build_scene(c, "good.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.simulation.particles.len(), 1);
}

#[test]
fn negative_radius_is_refused() {
    let m = error_of(&GOOD.replace("radius = 0.003", "radius = -0.003"));
    assert_names(&m, &["particles[0].spheres[0].radius", "positive"]);
}

#[test]
fn negative_friction_is_refused() {
    let m = error_of(&GOOD.replace("friction = 0.18", "friction = -0.1"));
    assert_names(&m, &["materials[0].friction", "≥ 0"]);
}

#[test]
fn time_step_above_the_critical_step_is_refused_with_the_estimate() {
    let m = error_of(&GOOD.replace(
        "output_interval = 0.01",
        "output_interval = 0.01\ndt = 1e-3",
    ));
    assert_names(&m, &["simulation.dt", "critical time step", "set dt ≤"]);
    // The message quotes the estimate the scene would get by default.
    let c = SceneConfig::parse(GOOD, "good.toml").unwrap_or_else(|e| panic!("{e}"));
    let scene = build_scene(c, "good.toml").unwrap_or_else(|e| panic!("{e}"));
    assert!(m.contains(&format!("{:.3e}", scene.critical_dt)), "{m}");
}

#[test]
fn particle_outside_its_box_is_refused() {
    let m = error_of(&GOOD.replace(
        "position = [0.01, 0.01, 0.01]",
        "position = [0.01, 0.01, -0.02]",
    ));
    assert_names(
        &m,
        &[
            "particles[0].spheres[0].position",
            "outside wall \"bottom\"",
        ],
    );
}

#[test]
fn unknown_key_is_refused_with_its_line() {
    let m = error_of(&GOOD.replace("friction = 0.18", "friction = 0.18\nfricton = 0.2"));
    assert_names(&m, &["line 14", "fricton", "unknown field"]);
}

#[test]
fn wrong_type_and_unknown_kind_are_refused() {
    let m = error_of(&GOOD.replace("density = 2550.0", "density = \"heavy\""));
    assert_names(&m, &["materials[0].density"]);
    let m = error_of(&GOOD.replace("kind = \"explicit\"", "kind = \"cloud\""));
    assert_names(&m, &["particles[0]", "cloud"]);
}

#[test]
fn undefined_material_and_incomplete_material_are_refused() {
    let m = error_of(&GOOD.replace(
        "material = \"glass\"\nspheres",
        "material = \"sand\"\nspheres",
    ));
    assert_names(&m, &["particles[0].material", "\"sand\"", "\"glass\""]);
    let m = error_of(&GOOD.replace("restitution = 0.5\n", ""));
    assert_names(&m, &["materials[0].restitution", "missing"]);
}

#[test]
fn missing_file_names_the_file() {
    let err = load_scene(Path::new("no/such/scene.toml"))
        .err()
        .map(|e| e.to_string());
    let m = err.expect("a missing file must be an error");
    assert!(m.starts_with("no/such/scene.toml: "), "{m}");
    assert!(!m.contains('\n'));
}

/// `[[loads]]` and wall velocity schedules: every bad key named, with the fix.
#[test]
fn bad_loads_and_schedules_are_refused() {
    for (load, parts) in [
        (
            "particles = [3]\nforce = [1.0, 0.0, 0.0]",
            &["loads[0].particles", "particle 3 does not exist"][..],
        ),
        (
            "particles = [0]\ngroup = 0\nforce = [1.0, 0.0, 0.0]",
            &["loads[0].particles", "not both"][..],
        ),
        (
            "group = 2\nforce = [1.0, 0.0, 0.0]",
            &["loads[0].group", "not a [[particles]] group"][..],
        ),
        ("particles = [0]", &["loads[0].force", "does nothing"][..]),
        (
            "particles = [0]\nforce = { times = [0.0, 0.0], values = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]] }",
            &["loads[0].force", "increase strictly"][..],
        ),
        (
            "particles = [0]\nvelocity = { times = [0.0], values = [] }",
            &["loads[0].velocity", "as many `values` as `times`"][..],
        ),
        (
            "particles = [0]\nlock = [\"w\"]",
            &["loads[0].lock", "line"][..],
        ),
        // A lock would win over the prescribed component without a word.
        (
            "particles = [0]\nvelocity = [0.1, 0.0, 0.0]\nlock = [\"x\", \"y\", \"z\", \"rx\"]",
            &["loads[0].lock", "locks x, y, z of the prescribed velocity"][..],
        ),
        (
            "particles = [0]\nangular_velocity = [0.0, 0.0, 1.0]\nlock = [\"x\", \"rz\"]",
            &[
                "loads[0].lock",
                "locks rz of the prescribed angular_velocity",
            ][..],
        ),
    ] {
        let e = error_of(&format!("{GOOD}\n[[loads]]\n{load}\n"));
        assert_names(&e, parts);
    }
    let e = error_of(&format!(
        "{GOOD}\n[[loads]]\nparticles = [0]\nlock = [\"x\"]\n[[loads]]\nparticles = [0]\nlock = [\"y\"]\n"
    ));
    assert_names(&e, &["loads[1].particles", "already driven by loads[0]"]);
    let e = error_of(&GOOD.replace(
        "normal = [0.0, 0.0, 1.0]\n",
        "normal = [0.0, 0.0, 1.0]\nvelocity_schedule = { times = [1.0, 0.5], values = [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]] }\n",
    ));
    assert_names(&e, &["walls[0].velocity_schedule", "increase strictly"]);
}

/// Message defects: a non-finite friction is called what it is, not "negative"; a gradation
/// too wide for the default size range names `cu`, the key the file gave, not `min_diameter`.
#[test]
fn non_finite_friction_and_too_wide_gradations_are_named() {
    for bad in ["inf", "nan"] {
        let e = error_of(&GOOD.replace("friction = 0.18", &format!("friction = {bad}")));
        assert_names(&e, &["materials[0].friction", "not a finite number"]);
    }
    let e = error_of(&GOOD.replace(
        "spheres = [{ position = [0.01, 0.01, 0.01], radius = 0.003 }]",
        "count = 5\nregion = { min = [0.0, 0.0, 0.0], max = [0.1, 0.1, 0.1] }\nsize = { distribution = \"lognormal\", d50 = 0.003, cu = 1e300 }",
    )
    .replace("kind = \"explicit\"", "kind = \"random\""));
    assert_names(&e, &["particles[0].size.cu", "1e300 is too wide"]);
    assert!(!e.contains("min_diameter`"), "{e}");
    assert!(e.len() < 400, "a 301-digit number: {e}");
    // A schedule value of two components is named, not "no variant of an untagged enum".
    let e = error_of(&format!(
        "{GOOD}\n[[loads]]\nparticles = [0]\nforce = {{ times = [0.0, 1.0], values = [[0.0, 0.0, 0.0], [1.0, 0.0]] }}\n"
    ));
    assert_names(
        &e,
        &["loads[0].force", "values[1] has 2 components", "[x, y, z]"],
    );
    let e = error_of(&format!(
        "{GOOD}\n[[loads]]\nparticles = [0]\nforce = [1.0, 0.0]\n"
    ));
    assert_names(&e, &["loads[0].force", "the vector has 2 components"]);
}

/// Tsuji's dashpot is the Hertz law's and derives from a restitution coefficient: under the
/// Hooke law, or with materials that give their dashpots directly, it is refused with the
/// field and the way out.
#[test]
fn tsuji_damping_outside_the_hertz_law_with_elastic_materials_is_refused() {
    let tsuji = GOOD.replace(
        "history = \"true\"",
        "history = \"true\"\ndamping = \"tsuji\"",
    );
    let c = SceneConfig::parse(&tsuji, "good.toml").unwrap_or_else(|e| panic!("{e}"));
    build_scene(c, "good.toml").unwrap_or_else(|e| panic!("{e}"));
    let hooke = tsuji.replace("law = \"hertz\"", "law = \"hooke\"");
    assert_names(
        &error_of(&hooke),
        &["contact.damping", "hooke", "law = \"hertz\""],
    );
    let direct = tsuji.replace(
        "young_modulus = 4e7\npoisson_ratio = 0.22\nrestitution = 0.5",
        "kn = 1e9\nkt = 8e8\ngamma_n = 40.0\ngamma_t = 20.0",
    );
    assert_names(
        &error_of(&direct),
        &[
            "contact.damping",
            "\"glass\"",
            "young_modulus",
            "restitution",
        ],
    );
    let unknown = GOOD.replace(
        "history = \"true\"",
        "history = \"true\"\ndamping = \"stokes\"",
    );
    assert_names(&error_of(&unknown), &["damping", "tsuji"]);
}

/// Rolling resistance keys: each wrong combination named with its field and the fix.
#[test]
fn bad_rolling_resistance_is_refused_by_field() {
    let with_pair = |keys: &str| {
        GOOD.replace(
            "history = \"true\"",
            &format!(
                "history = \"true\"\n[[contact.pairs]]\nmaterials = [\"glass\", \"glass\"]\nmodel = \"spring\"\n{keys}"
            ),
        )
    };
    let good = with_pair("rolling = \"epsd\"\nrolling_friction = 0.1\nrolling_damping = 0.3");
    let c = SceneConfig::parse(&good, "good.toml").unwrap_or_else(|e| panic!("{e}"));
    build_scene(c, "good.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_names(
        &error_of(&with_pair("rolling_friction = 0.1")),
        &["contact.pairs[0].rolling_friction", "rolling = \"cdt\""],
    );
    assert_names(
        &error_of(&with_pair("rolling = \"cdt\"")),
        &["contact.pairs[0].rolling_friction", "μ_r"],
    );
    assert_names(
        &error_of(&with_pair(
            "rolling = \"cdt\"\nrolling_friction = 0.1\nrolling_stiffness = 1.0",
        )),
        &["contact.pairs[0].rolling_stiffness", "epsd"],
    );
    assert_names(
        &error_of(&with_pair(
            "rolling = \"epsd\"\nrolling_friction = 0.1\nrolling_damping = 1.5",
        )),
        &["contact.pairs[0].rolling_damping", "[0, 1]"],
    );
    assert_names(
        &error_of(&with_pair("rolling = \"epsd\"\nrolling_friction = -0.1")),
        &["contact.pairs[0].rolling_friction", "≥ 0"],
    );
    assert_names(
        &error_of(&with_pair("rolling = \"tdc\"\nrolling_friction = 0.1")),
        &["rolling", "cdt"],
    );
    let hill = with_pair("rolling = \"cdt\"\nrolling_friction = 0.1")
        .replace("model = \"spring\"", "model = \"hill\"");
    assert_names(&error_of(&hill), &["contact.pairs[0].rolling", "spring"]);
}

/// `GOOD` with a 3 × 2 × 2 lattice of 1 mm spheres 3 mm apart in place of its sphere, and
/// `extra` added to the lattice group.
fn lattice_scene(extra: &str) -> String {
    GOOD.replace(
        "kind = \"explicit\"\nmaterial = \"glass\"\nspheres = [{ position = [0.01, 0.01, 0.01], radius = 0.003 }]",
        &format!(
            "kind = \"lattice\"\nmaterial = \"glass\"\nradius = 0.001\norigin = [0.01, 0.01, 0.01]\ncounts = [3, 2, 2]\nspacing = 0.003\n{extra}"
        ),
    )
}

fn lattice_positions(extra: &str) -> Vec<glam::DVec3> {
    let text = lattice_scene(extra);
    let c = SceneConfig::parse(&text, "good.toml").unwrap_or_else(|e| panic!("{e}"));
    build_scene(c, "good.toml")
        .unwrap_or_else(|e| panic!("{e}"))
        .simulation
        .particles
        .position
}

#[test]
fn a_lattice_keeps_its_first_count_sites_and_jitters_within_bounds() {
    let all = lattice_positions("");
    assert_eq!(all.len(), 12);
    // x fastest, then y, then z (LAMMPS's create_atoms order): the 8th site is (1, 0, 1).
    let o = glam::DVec3::splat(0.01);
    assert!((all[7] - (o + glam::DVec3::new(0.003, 0.0, 0.003))).length() < 1e-15);
    let kept = lattice_positions("count = 8");
    assert_eq!(kept, all[..8].to_vec());
    // Each component moved by at most the jitter, some by a good part of it, and the same
    // draw from the same seed.
    let jittered = lattice_positions("count = 8\njitter = 2e-4");
    assert_eq!(jittered, lattice_positions("count = 8\njitter = 2e-4"));
    let moved: Vec<f64> = jittered
        .iter()
        .zip(&kept)
        .flat_map(|(a, b)| (*a - *b).abs().to_array())
        .collect();
    assert!(moved.iter().all(|&d| d <= 2e-4), "{moved:?}");
    assert!(moved.iter().any(|&d| d > 1e-4), "{moved:?}");
}

#[test]
fn bad_lattice_count_and_jitter_are_refused() {
    for (extra, parts) in [
        ("count = 0", &["particles[0].count", "1 to 12"][..]),
        ("count = 13", &["particles[0].count", "12 sites"][..]),
        (
            "jitter = -1e-4",
            &["particles[0].jitter", "zero or a positive"][..],
        ),
        (
            "jitter = 1.5e-3",
            &["particles[0].jitter", "half the spacing"][..],
        ),
        // At the extremes: NaN, infinity, and a finite jitter whose double overflows.
        ("jitter = nan", &["particles[0].jitter"][..]),
        ("jitter = inf", &["particles[0].jitter"][..]),
        (
            "jitter = 1.7e308",
            &["particles[0].jitter", "half the spacing"][..],
        ),
    ] {
        let m = error_of(&lattice_scene(extra));
        assert_names(&m, parts);
    }
    // Sites beyond f64's range: named, not placed at infinity (where every wall check passes).
    let m = error_of(&lattice_scene("").replace("spacing = 0.003", "spacing = 1.7e308"));
    assert_names(&m, &["particles[0].spacing", "non-finite"]);
}

/// Gravity, initial and prescribed speeds beyond any granular scene are refused up front,
/// also near f64's range, where they would overflow the blow-up guard's bound (before, the
/// CPU engine ran `gravity = [0, 0, -1e300]` to the end with infinite kinetic energy).
#[test]
fn absurd_gravity_and_speeds_are_refused_at_the_extremes() {
    for g in ["-1e300", "-1.7976931348623157e308", "-1.1e6"] {
        let m = error_of(&GOOD.replace(
            "output_interval = 0.01",
            &format!("output_interval = 0.01\ngravity = [0.0, 0.0, {g}]"),
        ));
        assert_names(&m, &["simulation.gravity", "at most 1e6 m/s²"]);
    }
    // 1e6 m/s² itself is allowed (a limit, not a unit test of one value).
    let ok = GOOD.replace(
        "output_interval = 0.01",
        "output_interval = 0.01\ngravity = [0.0, 0.0, -1e6]",
    );
    let c = SceneConfig::parse(&ok, "ok.toml").unwrap_or_else(|e| panic!("{e}"));
    build_scene(c, "ok.toml").unwrap_or_else(|e| panic!("{e}"));
    for v in ["1e200", "1e300", "2e5"] {
        let m = error_of(&GOOD.replace(
            "radius = 0.003 }",
            &format!("radius = 0.003, velocity = [{v}, {v}, 0.0] }}"),
        ));
        assert_names(
            &m,
            &["particles[0].velocity", "sphere 0", "at most 1e5 m/s"],
        );
    }
}

/// A wall that would move more than a tenth of the smallest radius in one step (a lid
/// scheduled to 10⁶ m/s passed through every sphere in a step), or one given both a velocity
/// and a schedule, is refused with the field and the fix.
#[test]
fn walls_that_jump_through_spheres_or_contradict_themselves_are_refused() {
    let dt = "output_interval = 0.01\ndt = 1e-5";
    // 0.1 × 3 mm / 1e-5 s = 30 m/s per step at most.
    let m = error_of(&GOOD.replace("output_interval = 0.01", dt).replace(
        "normal = [0.0, 0.0, 1.0]",
        "normal = [0.0, 0.0, 1.0]\nvelocity = [0.0, 0.0, 31.0]",
    ));
    assert_names(
        &m,
        &[
            "walls[0].velocity (bottom)",
            "smallest radius",
            "at most 9.677e-6 s",
        ],
    );
    let m = error_of(&GOOD.replace("output_interval = 0.01", dt).replace(
        "normal = [0.0, 0.0, 1.0]",
        "normal = [0.0, 0.0, 1.0]\nvelocity_schedule = { times = [0.0, 0.1], values = [[0.0, 0.0, 0.0], [0.0, 0.0, 1e6]] }",
    ));
    assert_names(
        &m,
        &["walls[0].velocity_schedule (bottom)", "at most 1e5 m/s"],
    );
    let ok = GOOD.replace("output_interval = 0.01", dt).replace(
        "normal = [0.0, 0.0, 1.0]",
        "normal = [0.0, 0.0, 1.0]\nvelocity = [0.0, 0.0, 29.0]",
    );
    let c = SceneConfig::parse(&ok, "ok.toml").unwrap_or_else(|e| panic!("{e}"));
    build_scene(c, "ok.toml").unwrap_or_else(|e| panic!("{e}"));
    let m = error_of(&GOOD.replace(
        "normal = [0.0, 0.0, 1.0]",
        "normal = [0.0, 0.0, 1.0]\nvelocity = [0.1, 0.0, 0.0]\nvelocity_schedule = { times = [0.0, 0.1], values = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.1]] }",
    ));
    assert_names(&m, &["walls[0].velocity", "give one of them"]);
}

/// A sphere placed deep in a wall is refused as a pair is (before, one at 98 % of its radius
/// into the floor was shot away at 8.6 m/s without a word); at the limit it is accepted.
#[test]
fn a_sphere_starting_deep_in_a_wall_is_refused() {
    let m = error_of(&GOOD.replace(
        "position = [0.01, 0.01, 0.01]",
        "position = [0.01, 0.01, 0.00006]",
    ));
    assert_names(
        &m,
        &[
            "simulation.allow_overlap",
            "1 sphere(s) start overlapping a wall",
            "\"bottom\" by 0.980",
        ],
    );
    // 5 % into the floor: within the default 0.1.
    let ok = GOOD.replace(
        "position = [0.01, 0.01, 0.01]",
        "position = [0.01, 0.01, 0.00285]",
    );
    let c = SceneConfig::parse(&ok, "ok.toml").unwrap_or_else(|e| panic!("{e}"));
    build_scene(c, "ok.toml").unwrap_or_else(|e| panic!("{e}"));
    // Raised on purpose, it is accepted.
    let raised = GOOD
        .replace(
            "position = [0.01, 0.01, 0.01]",
            "position = [0.01, 0.01, 0.00006]",
        )
        .replace(
            "output_interval = 0.01",
            "output_interval = 0.01\nallow_overlap = 0.99",
        );
    let c = SceneConfig::parse(&raised, "ok.toml").unwrap_or_else(|e| panic!("{e}"));
    build_scene(c, "ok.toml").unwrap_or_else(|e| panic!("{e}"));
}

/// A scene placed far from the origin is refused by its distance, not as overlapping spheres
/// (at `origin = 1e300` a lattice collapses onto itself in f64), and a file group may give
/// `types` without `material` as docs/scene.md says.
#[test]
fn far_scenes_are_refused_by_their_distance() {
    let lattice = |origin: &str| {
        GOOD.replace(
            "kind = \"explicit\"\nmaterial = \"glass\"\nspheres = [{ position = [0.01, 0.01, 0.01], radius = 0.003 }]",
            &format!("kind = \"lattice\"\nmaterial = \"glass\"\nradius = 0.003\norigin = [{origin}, 0.01, 0.01]\ncounts = [2, 2, 2]"),
        )
    };
    assert!(
        lattice("1e300").contains("origin = [1e300"),
        "the lattice group replaced"
    );
    for origin in ["1e300", "1.7e308", "-4e5"] {
        let m = error_of(&lattice(origin));
        assert_names(
            &m,
            &[
                "particles",
                "farther from the origin than 1e8 of the smallest radius",
                "near the origin",
            ],
        );
        assert!(!m.contains("overlap"), "{m}");
    }
    // 2.9e5 m: within 1e8 radii of 3 mm.
    let c = SceneConfig::parse(&lattice("2.9e5"), "ok.toml").unwrap_or_else(|e| panic!("{e}"));
    build_scene(c, "ok.toml").unwrap_or_else(|e| panic!("{e}"));
}

/// Every bundled scene (`assets/scenes/`) builds: the benchmark scenes are not exercised by
/// any other test.
#[test]
fn every_bundled_scene_builds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes");
    let mut built = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("assets/scenes") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let scene = load_scene(&path).unwrap_or_else(|e| panic!("{e}"));
            assert!(!scene.simulation.particles.is_empty(), "{}", path.display());
            built.push(
                path.file_name()
                    .expect("name")
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    built.sort();
    assert!(
        built.contains(&"shear_box.toml".to_owned())
            && built.contains(&"liggghts_prep.toml".to_owned()),
        "{built:?}"
    );
}

/// `[output] checkpoint_seconds` is a finite number of seconds ≥ 0: a negative, NaN or
/// infinite one is refused naming the field, at the extremes too; 0 and f64's largest pass.
#[test]
fn a_checkpoint_pace_that_is_not_a_time_is_refused() {
    for s in [
        "-1.0",
        "-1e-300",
        "-1.7976931348623157e308",
        "nan",
        "inf",
        "-inf",
    ] {
        let m = error_of(&format!("{GOOD}\n[output]\ncheckpoint_seconds = {s}\n"));
        assert_names(&m, &["output.checkpoint_seconds", "≥ 0"]);
    }
    for s in ["0.0", "1.7976931348623157e308"] {
        let ok = format!("{GOOD}\n[output]\ncheckpoint_seconds = {s}\n");
        let c = SceneConfig::parse(&ok, "ok.toml").unwrap_or_else(|e| panic!("{e}"));
        build_scene(c, "ok.toml").unwrap_or_else(|e| panic!("{s}: {e}"));
    }
}
