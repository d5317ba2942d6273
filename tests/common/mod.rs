//! Helpers shared by the physics tests.
#![allow(dead_code)]

use wgdem_core::scene::{Scene, SceneConfig, build_scene};

/// Builds a scene from inline TOML, panicking with the library's message on error.
pub fn scene(toml: &str) -> Scene {
    let config = SceneConfig::parse(toml, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    build_scene(config, "test.toml").unwrap_or_else(|e| panic!("{e}"))
}

/// Relative difference |a − b| / |b|.
pub fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}
