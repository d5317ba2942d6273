//! Probes of a hostile but fair user, kept as tests: two runs in one directory, overwriting,
//! damaged checkpoints, blow-ups and degenerate inputs. Each ends with one line on stderr and a
//! non-zero exit, and nothing already written is lost or mixed with another run's files.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{SCENE, stderr, wgdem, write};

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
    let started = Instant::now();
    while !out.join("particles/particles_000002.csv").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the run wrote nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
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
    let out_s = out.display().to_string();
    let mut first = start_run(&long, &out);
    let input = std::fs::read(out.join("input.toml")).expect("input.toml");
    for overwrite in [false, true] {
        let mut args = vec!["run", &short, "--backend", "cpu", "--out", &out_s];
        if overwrite {
            args.push("--overwrite");
        }
        let o = wgdem(&args);
        assert_eq!(o.status.code(), Some(1));
        let e = stderr(&o);
        assert!(
            e.contains("is being written by another run")
                && e.contains(&format!("pid {}", first.id()))
                && e.contains("long.toml")
                && e.lines().count() == 1,
            "{e}"
        );
    }
    assert_eq!(std::fs::read(out.join("input.toml")).ok(), Some(input));
    first.kill().expect("kill");
    first.wait().expect("wait");
    // Killed, the first run holds nothing: the directory can be overwritten.
    let o = wgdem(&[
        "run",
        &short,
        "--backend",
        "cpu",
        "--out",
        &out_s,
        "--overwrite",
    ]);
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
    let out_s = out.display().to_string();
    let mut first = start_run(&long, &out);
    first.kill().expect("kill");
    first.wait().expect("wait");
    assert!(snapshots(&out) > 3);
    std::fs::write(out.join("notes.txt"), "mine").expect("notes");
    let o = wgdem(&[
        "run",
        &short,
        "--backend",
        "cpu",
        "--out",
        &out_s,
        "--overwrite",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Rows at 0, 1 and 2 ms: three snapshots, none of the earlier run's.
    assert_eq!(snapshots(&out), 3);
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt"))
            .ok()
            .as_deref(),
        Some("mine")
    );
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
    let out_s = out.display().to_string();
    let o = wgdem(&["run", &scene, "--backend", "cpu", "--out", &out_s]);
    assert!(o.status.success(), "{}", stderr(&o));
    let path = out.join("checkpoint.bin");
    let good = std::fs::read(&path).expect("checkpoint");
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
        let o = wgdem(&["run", &scene, "--backend", "cpu", "--resume", &out_s]);
        assert_eq!(o.status.code(), Some(1), "byte {at}");
        let e = stderr(&o);
        assert!(
            e.contains("checkpoint.bin") && e.contains(says) && e.lines().count() == 1,
            "byte {at}: {e}"
        );
    }
    // A checkpoint cut short, too.
    std::fs::write(&path, &good[..good.len() - 7]).expect("write");
    let e = stderr(&wgdem(&[
        "run",
        &scene,
        "--backend",
        "cpu",
        "--resume",
        &out_s,
    ]));
    assert!(e.contains("truncated"), "{e}");
    // The undamaged one resumes (at its end: nothing left to run).
    std::fs::write(&path, &good).expect("write");
    let o = wgdem(&["run", &scene, "--backend", "cpu", "--resume", &out_s]);
    assert!(o.status.success(), "{}", stderr(&o));
}
