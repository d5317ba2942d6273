//! Helpers shared by the CLI's test binaries.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

#[path = "../../../../tests/common/skip.rs"]
pub mod skip;

/// Runs the `wgdem` binary with `args` to the end, logging warnings and errors.
pub fn wgdem(args: &[&str]) -> Output {
    wgdem_logging(args, "warn")
}

/// Runs the `wgdem` binary with `args` to the end, logging at `level` (`RUST_LOG`).
pub fn wgdem_logging(args: &[&str], level: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wgdem"))
        .args(args)
        .env("RUST_LOG", level)
        .output()
        .expect("the wgdem binary runs")
}

/// The run's stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Eight glass spheres dropped on a plane for 2 ms: the smallest scene that writes everything.
pub const SCENE: &str = r#"
[simulation]
duration = 0.002
output_interval = 0.001

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
kind = "lattice"
material = "glass"
radius = 0.003
origin = [0.003, 0.003, 0.0031]
counts = [2, 2, 2]

[[walls]]
kind = "plane"
name = "bottom"
material = "glass"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
"#;

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write scene");
    path.display().to_string()
}

/// The path of a bundled input, `assets/NAME` (e.g. `shear/hartl_ooi_quick.toml`).
pub fn asset(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../assets")
        .join(name)
        .display()
        .to_string()
}
