//! What a run reads and refuses before it starts: the input as run pinned to its packing
//! files' bytes, the output-size estimate of `check`, and contradictory flags.

mod common;

use std::path::Path;
use std::process::Command;

use common::{SCENE, stderr, wgdem, write};

/// The input as run covers the packing files' bytes: `input.toml` gives each file's absolute
/// path and BLAKE3, so `wgdem run DIR/input.toml` runs a packing-file scene again from another
/// working directory to the same rows; once the packing is edited, running that input again is
/// refused naming the file, and so is resuming the run (the checkpoint's input hash covers the
/// hash), where before both went on silently with other spheres. A directory given as the
/// packing is named as one.
#[test]
fn the_input_as_run_pins_its_packing_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let pk = tmp.path().join("pk");
    std::fs::create_dir_all(&pk).expect("dir");
    let packing = write(
        &pk,
        "ok.csv",
        "x,y,z,radius\n0.003,0.003,0.0031,0.003\n0.0091,0.003,0.0031,0.003\n",
    );
    let scene_text = SCENE.replace(
        "kind = \"lattice\"\nmaterial = \"glass\"\nradius = 0.003\norigin = [0.003, 0.003, 0.0031]\ncounts = [2, 2, 2]",
        "kind = \"file\"\nmaterial = \"glass\"\npath = \"ok.csv\"",
    );
    assert!(scene_text.contains("ok.csv"), "the lattice group replaced");
    let scene = write(&pk, "scene.toml", &scene_text);
    let first = tmp.path().join("first");
    let run = |args: &[&str], cwd: &Path| {
        Command::new(env!("CARGO_BIN_EXE_wgdem"))
            .args(args)
            .current_dir(cwd)
            .env("RUST_LOG", "warn")
            .output()
            .expect("the wgdem binary runs")
    };
    let o = run(
        &[
            "run",
            &scene,
            "--backend",
            "cpu",
            "--out",
            &first.display().to_string(),
        ],
        &pk,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let input = std::fs::read_to_string(first.join("input.toml")).expect("input.toml");
    let absolute = std::path::absolute(&packing).expect("absolute");
    assert!(
        input.contains(&format!("path = \"{}\"", absolute.display()))
            && input.contains("blake3 = \""),
        "{input}"
    );
    // From elsewhere (the output directory's parent is not the scene's).
    let again = tmp.path().join("again");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let input_path = first.join("input.toml").display().to_string();
    let o = run(
        &[
            "run",
            &input_path,
            "--backend",
            "cpu",
            "--out",
            &again.display().to_string(),
        ],
        elsewhere.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = |dir: &Path| std::fs::read_to_string(dir.join("timeseries.csv")).expect("rows");
    assert_eq!(rows(&first), rows(&again), "the same rows from input.toml");
    // The packing edited: one sphere 0.1 mm higher.
    std::fs::write(
        &packing,
        "x,y,z,radius\n0.003,0.003,0.0032,0.003\n0.0091,0.003,0.0031,0.003\n",
    )
    .expect("edit");
    let o = run(
        &[
            "run",
            &input_path,
            "--backend",
            "cpu",
            "--out",
            &tmp.path().join("third").display().to_string(),
        ],
        elsewhere.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("particles[0].blake3") && e.contains("has changed"),
        "{e}"
    );
    let o = run(
        &[
            "run",
            &scene,
            "--backend",
            "cpu",
            "--resume",
            &first.display().to_string(),
        ],
        &pk,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("different input"), "{e}");
    // A directory as the packing.
    let dir_scene = write(
        &pk,
        "dir.toml",
        &scene_text.replace("path = \"ok.csv\"", "path = \".\""),
    );
    let o = run(
        &[
            "run",
            &dir_scene,
            "--backend",
            "cpu",
            "--out",
            &tmp.path().join("fourth").display().to_string(),
        ],
        &pk,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("particles[0].path") && e.contains("is a directory"),
        "{e}"
    );
}

/// `check` estimates a run's outputs and warns above 10 GB (20 000 spheres with a snapshot
/// every step wrote 2.8 GB in 25 s while `check` said "ok"); the warning names the keys to
/// raise. A small scene gets the estimate without it.
#[test]
fn check_estimates_the_outputs_and_warns_when_they_are_huge() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let small = write(tmp.path(), "small.toml", SCENE);
    let o = wgdem(&["check", &small]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.contains("outputs of `wgdem run`: about") && !out.contains("warning"),
        "{out}"
    );
    let big = write(
        tmp.path(),
        "big.toml",
        &format!(
            "{}\n[output]\nvtk_interval = 1e-9\n",
            SCENE
                .replace("duration = 0.002", "duration = 0.1")
                .replace("counts = [2, 2, 2]", "counts = [20, 20, 50]")
        ),
    );
    let o = wgdem(&["check", &big]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.contains("warning: more than 10 GB of outputs")
            && out.contains("output.vtk_interval")
            && out.contains("ParaView snapshots"),
        "{out}"
    );
}

/// `--overwrite` with `--resume` was ignored without a word: it is refused, on `run` and
/// `shear`, before anything is read or written.
#[test]
fn overwrite_with_resume_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let scene = write(tmp.path(), "scene.toml", SCENE);
    let dir = tmp.path().join("out").display().to_string();
    let config = common::asset("shear/hartl_ooi_quick.toml");
    for (command, input) in [("run", scene.as_str()), ("shear", config.as_str())] {
        let o = wgdem(&[command, input, "--resume", &dir, "--overwrite"]);
        assert_eq!(o.status.code(), Some(2), "{command}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("--overwrite")
                && e.contains("cannot be used with")
                && e.contains("--resume"),
            "{command}: {e}"
        );
        assert!(!tmp.path().join("out").exists(), "{command}");
    }
}
