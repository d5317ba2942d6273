//! Probes of a hostile but fair user, kept as tests: two runs in one directory, overwriting,
//! damaged checkpoints, blow-ups and degenerate inputs. Each ends with one line on stderr and a
//! non-zero exit, and nothing already written is lost or mixed with another run's files.

mod common;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{SCENE, stderr, wgdem, write};

/// `wgdem COMMAND INPUT --backend BACKEND --out OUT` with `extra` arguments.
fn on(backend: &str, command: &str, input: &str, out: &Path, extra: &[&str]) -> Output {
    let out = out.display().to_string();
    let mut args = vec![command, input, "--backend", backend, "--out", &out];
    args.extend(extra);
    wgdem(&args)
}

/// The stderr of `o`, which must be a refusal: exit code 1 and one `error:` line.
fn refusal(o: &Output) -> String {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    let errors = e.lines().filter(|l| l.starts_with("error")).count();
    assert_eq!(errors, 1, "{e}");
    e
}

/// `SCENE` run long enough (200 s simulated) to be interrupted.
fn long_scene(dir: &Path) -> String {
    write(
        dir,
        "long.toml",
        &SCENE.replace("duration = 0.002", "duration = 200.0"),
    )
}

/// Starts `wgdem run scene --backend cpu --out out` and waits until it holds the directory's
/// lock and has written its first snapshot.
fn start_run(scene: &str, out: &Path) -> Child {
    let child = Command::new(env!("CARGO_BIN_EXE_wgdem"))
        .args(["run", scene, "--backend", "cpu", "--out"])
        .arg(out)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("wgdem starts");
    let third = out.join("particles/particles_000002.csv");
    wait_until("the run wrote nothing", || third.exists());
    child
}

/// The bundled shear preset `name`.
fn preset(name: &str) -> String {
    common::asset(&format!("shear/{name}"))
}

/// Waits (up to a minute) until `done` holds; `what` names it in the failure.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(60), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn snapshots(out: &Path) -> usize {
    std::fs::read_dir(out.join("particles"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// A second run into a directory another run is writing is refused, with or without
/// `--overwrite`, naming the holder; the first run's files are untouched by the attempt.
#[test]
fn one_writer_per_output_directory() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let long = long_scene(tmp.path());
    let short = write(tmp.path(), "short.toml", SCENE);
    let out = tmp.path().join("out");
    let mut first = start_run(&long, &out);
    let input = std::fs::read(out.join("input.toml")).expect("input.toml");
    for extra in [&[][..], &["--overwrite"]] {
        let e = refusal(&on("cpu", "run", &short, &out, extra));
        assert!(
            e.contains("is being written by another run")
                && e.contains(&format!("pid {}", first.id()))
                && e.contains("long.toml"),
            "{e}"
        );
    }
    // A shear test is refused there too (the same lock), also with --overwrite.
    let shear = preset("hartl_ooi_quick.toml");
    let e = refusal(&on("cpu", "shear", &shear, &out, &["--overwrite"]));
    assert!(e.contains("is being written by another run"), "{e}");
    assert_eq!(std::fs::read(out.join("input.toml")).ok(), Some(input));
    first.kill().expect("kill");
    first.wait().expect("wait");
    // Killed, the first run holds nothing: the directory can be overwritten.
    let o = on("cpu", "run", &short, &out, &["--overwrite"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `--overwrite` removes every file of the run before (by its manifest), so a shorter run
/// does not leave the longer one's snapshots beside its results; files the run did not write
/// stay.
#[test]
fn overwriting_removes_the_earlier_runs_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let long = long_scene(tmp.path());
    let short = write(tmp.path(), "short.toml", SCENE);
    let out = tmp.path().join("out");
    let mut first = start_run(&long, &out);
    // More snapshots than the short run will write.
    wait_until("the run stalled", || snapshots(&out) >= 10);
    first.kill().expect("kill");
    first.wait().expect("wait");
    std::fs::write(out.join("notes.txt"), "mine").expect("notes");
    let o = on("cpu", "run", &short, &out, &["--overwrite"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Rows at 0, 1 and 2 ms: three snapshots, none of the earlier run's.
    assert_eq!(snapshots(&out), 3);
    let notes = std::fs::read_to_string(out.join("notes.txt"));
    assert_eq!(notes.ok().as_deref(), Some("mine"));
    let manifest = std::fs::read_to_string(out.join("manifest.json")).expect("manifest");
    assert!(
        manifest.contains("\"particles\"") && manifest.contains("short.toml"),
        "{manifest}"
    );
}

/// A checkpoint with one bit flipped (at 50, 75 and 90 % of the file, and in its header) is
/// refused on resume with one line saying why, instead of resuming to different results.
#[test]
fn a_damaged_checkpoint_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let scene = write(tmp.path(), "scene.toml", SCENE);
    let out = tmp.path().join("out");
    let o = on("cpu", "run", &scene, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let path = out.join("checkpoint.bin");
    let good = std::fs::read(&path).expect("checkpoint");
    let out_s = out.display().to_string();
    let resume = || wgdem(&["run", &scene, "--backend", "cpu", "--resume", &out_s]);
    // The exponent bit of a stored f64 (as in the probe) or any other: the hash sees them all.
    for (at, bit, says) in [
        (good.len() / 2, 6, "damaged"),
        (good.len() * 3 / 4, 0, "damaged"),
        (good.len() * 9 / 10, 3, "damaged"),
        (3, 1, "not a wgdem checkpoint"),
        (30, 2, "different input"),
    ] {
        let mut bad = good.clone();
        bad[at] ^= 1 << bit;
        std::fs::write(&path, &bad).expect("write");
        let e = refusal(&resume());
        assert!(
            e.contains("checkpoint.bin") && e.contains(says),
            "byte {at}: {e}"
        );
    }
    // A checkpoint cut short, too.
    std::fs::write(&path, &good[..good.len() - 7]).expect("write");
    let e = refusal(&resume());
    assert!(e.contains("truncated"), "{e}");
    // The undamaged one resumes (at its end: nothing left to run).
    std::fs::write(&path, &good).expect("write");
    let o = resume();
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The backends to probe: the gpu is skipped where `WGDEM_SKIP_GPU_TESTS=1`.
fn backends() -> Vec<&'static str> {
    if common::skip::gpu_tests_skipped() {
        vec!["cpu"]
    } else {
        vec!["cpu", "gpu"]
    }
}

/// Spheres faster than `max_speed` stop the run (gravity at the largest a scene may give,
/// 10⁶ m/s², and a bound of 1 m/s, which they pass within a millisecond; gravity far beyond it,
/// which blew them up before, is now refused up front, `tests/config_errors.rs`): on both
/// backends the run stops with one line naming the step and the first sphere, leaves its
/// state in `blowup.csv`, writes no summary and no row with a NaN or an infinity; a shear test
/// stops likewise.
#[test]
fn a_blow_up_stops_the_run_with_one_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let huge = "output_interval = 0.001\ngravity = [0.0, 0.0, -1e6]\nmax_speed = 1.0";
    let scene = SCENE.replace("output_interval = 0.001", huge);
    let scene = write(tmp.path(), "huge_gravity.toml", &scene);
    for backend in backends() {
        let out = tmp.path().join(backend);
        let e = refusal(&on(backend, "run", &scene, &out, &[]));
        assert!(
            e.contains("blew up by step")
                && e.contains("8 sphere(s)")
                && e.contains("sphere 0,")
                && e.contains("blowup.csv"),
            "{backend}: {e}"
        );
        check_blowup_csv(&out.join("blowup.csv"), 8, 1.0, &e);
        assert!(!out.join("summary.json").exists(), "{backend}");
        let mut results = std::fs::read_to_string(out.join("timeseries.csv")).expect("series");
        for entry in std::fs::read_dir(out.join("particles")).expect("particles") {
            results += &std::fs::read_to_string(entry.expect("entry").path()).expect("csv");
        }
        let lower = results.to_lowercase();
        assert!(
            !lower.contains("nan") && !lower.contains("inf"),
            "{backend}"
        );
    }
    // A shear test stops at its first row, instead of going on at an infinite speed.
    let config = std::fs::read_to_string(preset("hartl_ooi_quick.toml")).expect("preset");
    let config = config.replace(
        "[simulation]",
        "[simulation]\ngravity = [0.0, 0.0, -1e6]\nmax_speed = 1.0",
    );
    let config = write(tmp.path(), "shear.toml", &config);
    let out = tmp.path().join("shear");
    let e = refusal(&on("cpu", "shear", &config, &out, &[]));
    assert!(e.contains("blew up by step"), "{e}");
    check_blowup_csv(&out.join("blowup.csv"), 300, 1.0, &e);
    assert!(!out.join("summary.json").exists());
}

/// `blowup.csv` holds the state the message describes: a row per sphere (`spheres`, ids 0 to
/// spheres − 1, the particle CSV's columns), as many of them non-finite or faster than
/// `max_speed` as the message counts, and the sphere it names first at the position it gives.
fn check_blowup_csv(path: &Path, spheres: usize, max_speed: f64, message: &str) {
    let csv = std::fs::read_to_string(path).expect("blowup.csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    assert_eq!(
        &header[..7],
        ["id", "x_m", "y_m", "z_m", "vx_m_s", "vy_m_s", "vz_m_s"]
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().expect("a number")).collect())
        .collect();
    assert_eq!(rows.len(), spheres, "{}", path.display());
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(row.len(), header.len());
        assert_eq!(row[0], k as f64, "ids in order");
    }
    let runaway = |row: &Vec<f64>| {
        let v = (row[4] * row[4] + row[5] * row[5] + row[6] * row[6]).sqrt();
        v > max_speed || row[1..7].iter().any(|x| !x.is_finite())
    };
    let counted: usize = message
        .split(" sphere(s)")
        .next()
        .and_then(|m| m.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {message}"));
    assert_eq!(
        rows.iter().filter(|r| runaway(r)).count(),
        counted,
        "{message}"
    );
    let first: usize = message
        .split("the first, sphere ")
        .nth(1)
        .and_then(|m| m.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no first sphere in {message}"));
    let row = &rows[first];
    assert!(runaway(row), "sphere {first} is not running away: {row:?}");
    let at = format!("is at ({:e}, {:e}, {:e}) m", row[1], row[2], row[3]);
    assert!(message.contains(&at), "{message} against {at}");
}

/// Spheres placed overlapping (a lattice spaced at a tenth of a diameter) are refused before
/// the run, the worst pair named and the key that allows it; `allow_overlap` lets it run.
#[test]
fn spheres_placed_overlapping_are_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let packed = SCENE.replace("counts = [2, 2, 2]", "counts = [2, 2, 2]\nspacing = 0.0006");
    let e = refusal(&wgdem(&[
        "check",
        &write(tmp.path(), "overlap.toml", &packed),
    ]));
    assert!(
        e.contains("simulation.allow_overlap")
            && e.contains("pair(s) of spheres start overlapping")
            && e.contains("by 1.800 of it"),
        "{e}"
    );
    let allow = "output_interval = 0.001\nallow_overlap = 2.0";
    let allowed = packed.replace("output_interval = 0.001", allow);
    let o = wgdem(&["check", &write(tmp.path(), "allowed.toml", &allowed)]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Inputs that would hang or abort are refused up front with the quantities that cause them:
/// a vanishing density or an absurd stiffness (time step), a billion spheres (memory), a size
/// range in the far tail of a log-normal (nothing to draw).
#[test]
fn degenerate_inputs_are_refused_up_front() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let lognormal = SCENE.replace(
        "kind = \"lattice\"\nmaterial = \"glass\"\nradius = 0.003\norigin = [0.003, 0.003, 0.0031]\ncounts = [2, 2, 2]",
        "kind = \"random\"\nmaterial = \"glass\"\ncount = 10\nregion = { min = [0.0, 0.0, 0.0], max = [0.1, 0.1, 0.1] }\nsize = { distribution = \"lognormal\", d50 = 0.003, cu = 1.5, min_diameter = 0.02, max_diameter = 0.021 }",
    );
    assert_ne!(lognormal, SCENE);
    let billion = "1.000e9 spheres in all need about";
    for (name, text, says) in [
        (
            "density",
            SCENE.replace("density = 2550.0", "density = 1e-300"),
            "`simulation.dt`".to_owned(),
        ),
        (
            "stiffness",
            SCENE.replace("young_modulus = 4e7", "young_modulus = 1e300"),
            "above the ceiling of 1e12".to_owned(),
        ),
        (
            "lattice",
            SCENE.replace("counts = [2, 2, 2]", "counts = [1000, 1000, 1000]"),
            format!("`particles[0].counts`: {billion}"),
        ),
        ("lognormal", lognormal.clone(), "holds".to_owned()),
        (
            "count",
            lognormal.replace("count = 10", "count = 1000000000"),
            format!("`particles[0].count`: {billion}"),
        ),
    ] {
        let scene = write(tmp.path(), &format!("{name}.toml"), &text);
        let started = Instant::now();
        let e = refusal(&wgdem(&["check", &scene]));
        assert!(e.contains(&says), "{name}: {e}");
        let took = started.elapsed();
        assert!(took < Duration::from_secs(10), "{name} took {took:?}");
    }
}

/// `--particles` asking for a billion spheres is refused before anything is allocated.
#[test]
fn a_billion_particles_are_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let shear = preset("hartl_ooi_quick.toml");
    let out = tmp.path().join("out");
    let e = refusal(&on(
        "cpu",
        "shear",
        &shear,
        &out,
        &["--particles", "1000000000"],
    ));
    assert!(e.contains("need about"), "{e}");
}

/// A contact case moving a body out of what a computer holds is refused, no NaN rows written;
/// one of four billion steps is refused for its memory before it starts.
#[test]
fn a_contact_case_out_of_scale_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let text =
        std::fs::read_to_string(common::asset("contact/hertz_true_slip.toml")).expect("case");
    let first = text.find("translate = [").expect("a translating stage");
    let end = first + text[first..].find(']').expect("]") + 1;
    let far = "translate = [0.0, 0.0, -1e300]";
    let far = format!("{}{far}{}", &text[..first], &text[end..]);
    let out = tmp.path().join("out");
    let e = refusal(&on(
        "cpu",
        "contact",
        &write(tmp.path(), "far.toml", &far),
        &out,
        &[],
    ));
    assert!(e.contains("out of what a computer holds"), "{e}");
    assert!(!out.join("contact.csv").exists());
    let long = text.replacen("steps = 20", "steps = 4000000000", 1);
    assert_ne!(long, text);
    let e = refusal(&on(
        "cpu",
        "contact",
        &write(tmp.path(), "long.toml", &long),
        &out,
        &[],
    ));
    assert!(e.contains("`stages`") && e.contains("need about"), "{e}");
}

/// Without a Vulkan driver the GPU engine does not fall back to OpenGL unasked: it refuses
/// with the install hint (naming the GL adapter where one exists).
#[test]
fn no_silent_fallback_to_opengl() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let scene = write(tmp.path(), "scene.toml", SCENE);
    let o = Command::new(env!("CARGO_BIN_EXE_wgdem"))
        .args(["run", &scene, "--backend", "gpu", "--out"])
        .arg(tmp.path().join("out"))
        .env("RUST_LOG", "warn")
        .env("VK_ICD_FILENAMES", "/nonexistent.json")
        .env_remove("WGPU_ADAPTER_NAME")
        .env_remove("WGDEM_ALLOW_GL")
        .env_remove("WGPU_BACKEND")
        .output()
        .expect("wgdem runs");
    let e = refusal(&o);
    assert!(e.contains("install a Vulkan driver"), "{e}");
}
