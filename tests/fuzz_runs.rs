//! Property test over the engines' inputs: a small scene (a lattice on a floor under a moving
//! plate, an explicit sphere with a load) with its values replaced, a few at a time with a
//! fixed seed, by values near the limits of each field (0, ±1e±300, the largest gravity and
//! speed a scene may give and just past them, NaN, ±inf, tiny and huge radii and stiffnesses).
//! Every mutant must either be refused with one line, or run 300 steps to a finite state or a
//! blow-up the guard reports, on the CPU reference and (for the first four mutants that build) on
//! the GPU engine; none may panic. Before this round, `gravity = [0, 0, -1e300]` ran to the
//! end on the CPU with an infinite kinetic energy.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wgdem_core::scene::{SceneConfig, build_scene};

const BASE: &str = r#"
[simulation]
duration = 0.01
output_interval = 0.001
gravity = [0.0, 0.0, -9.81]

[contact]
law = "hertz"
history = "true"

[[materials]]
name = "glass"
density = 2550.0
friction = 0.3
young_modulus = 4e7
poisson_ratio = 0.22
restitution = 0.5

[[particles]]
kind = "lattice"
material = "glass"
radius = 0.003
origin = [0.003, 0.003, 0.003]
counts = [3, 3, 2]
velocity = [0.0, 0.0, -0.1]

[[particles]]
kind = "explicit"
material = "glass"
spheres = [{ position = [0.03, 0.03, 0.03], radius = 0.002, velocity = [0.5, 0.0, 0.0] }]

[[loads]]
group = 1
force = [0.0, 0.0, -0.01]

[[walls]]
kind = "plane"
name = "floor"
material = "glass"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]

[[walls]]
kind = "plate"
name = "lid"
material = "glass"
center = [0.01, 0.01, 0.05]
normal = [0.0, 0.0, -1.0]
u_axis = [1.0, 0.0, 0.0]
half_extents = [0.02, 0.02]
velocity = [0.0, 0.0, -0.5]
"#;

/// Values near the limits of the fields they replace (the scene's limits: gravity 1e6 m/s²,
/// speeds 1e5 m/s, a tenth of the smallest radius per step for a wall).
const NEAR_LIMITS: [&str; 22] = [
    "0",
    "-1",
    "1e-300",
    "1e300",
    "-1e300",
    "1.7976931348623157e308",
    "nan",
    "inf",
    "-inf",
    "1e6",
    "-1e6",
    "1.000001e6",
    "1e5",
    "-1e5",
    "100001.0",
    "1e-9",
    "1e12",
    "0.999999",
    "[0.0, 0.0, -1e6]",
    "[0.0, 0.0, -1e300]",
    "[1e5, 0.0, 0.0]",
    "[nan, 0.0, 0.0]",
];

/// Replaces one value of `text` (a `key = value` line, or a number inside an array or inline
/// table) with a value near the limits.
fn mutate(text: &str, rng: &mut ChaCha8Rng) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let candidates: Vec<usize> = (0..lines.len())
        .filter(|&k| {
            lines[k].contains(" = ") && !lines[k].contains("name =") && !lines[k].contains("kind =")
        })
        .collect();
    let k = candidates[rng.random_range(0..candidates.len())];
    let value = NEAR_LIMITS[rng.random_range(0..NEAR_LIMITS.len())];
    let line = lines[k];
    let eq = line.find(" = ").expect("a key") + 3;
    let rest = &line[eq..];
    // Inside an array or table, replace one number; else the whole value.
    let numbers: Vec<(usize, usize)> = number_spans(rest);
    let new_line = if rest.starts_with(['[', '{']) && !numbers.is_empty() && !value.starts_with('[')
    {
        let (a, b) = numbers[rng.random_range(0..numbers.len())];
        format!("{}{}{}{}", &line[..eq], &rest[..a], value, &rest[b..])
    } else {
        format!("{}{}", &line[..eq], value)
    };
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    out[k] = new_line;
    out.join("\n")
}

/// Byte spans of the numbers in `s`.
fn number_spans(s: &str) -> Vec<(usize, usize)> {
    let bytes = s.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_digit() || (c == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let start = i;
            i += 1;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || b".-+".contains(&bytes[i]))
            {
                i += 1;
            }
            spans.push((start, i));
        } else {
            i += 1;
        }
    }
    spans
}

/// Whether every sphere's state is finite.
fn finite(sim: &wgdem_core::cpu::Simulation) -> bool {
    let p = &sim.particles;
    (0..p.len()).all(|i| p.position[i].is_finite() && p.velocity[i].is_finite())
        && p.kinetic_energy().is_finite()
}

const STEPS: u64 = 300;
const MUTANTS: usize = 300;
const ON_THE_GPU: usize = 4;

#[test]
fn mutated_scenes_are_refused_with_one_line_or_run_finite_on_both_engines() {
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let ctx = common::gpu();
    let (mut refused, mut ran, mut blew_up, mut gpu_runs) = (0, 0, 0, 0);
    for round in 0..MUTANTS {
        let mut text = BASE.to_owned();
        for _ in 0..rng.random_range(1..=2) {
            text = mutate(&text, &mut rng);
        }
        let built = catch_unwind(AssertUnwindSafe(|| {
            SceneConfig::parse(&text, "mutant.toml").and_then(|c| build_scene(c, "mutant.toml"))
        }));
        let scene = match built {
            Err(_) => panic!("round {round}: building panicked on:\n{text}"),
            Ok(Err(e)) => {
                let m = e.to_string();
                assert!(
                    !m.is_empty() && !m.contains('\n') && m.starts_with("mutant.toml"),
                    "round {round}: not one line naming the file: {m}\non:\n{text}"
                );
                refused += 1;
                continue;
            }
            Ok(Ok(scene)) => scene,
        };
        // The CPU reference: a finite state, or a blow-up its guard reports.
        let cpu = catch_unwind(AssertUnwindSafe(|| {
            let mut sim = scene.simulation.clone();
            for _ in 0..STEPS {
                sim.step();
                if wgdem_core::guard::blew_up(&sim) {
                    return (sim, true);
                }
            }
            (sim, false)
        }));
        let Ok((sim, runaway)) = cpu else {
            panic!("round {round}: the CPU reference panicked on:\n{text}");
        };
        if runaway {
            assert!(
                wgdem_core::guard::check(&sim, "x").is_err(),
                "round {round}"
            );
            blew_up += 1;
        } else {
            assert!(
                finite(&sim),
                "round {round}: a non-finite state passed the guard on:\n{text}"
            );
            ran += 1;
        }
        // The GPU engine on the first mutants that build: a finite state or its runaway error.
        if let Some(ctx) = ctx.as_ref().filter(|_| gpu_runs < ON_THE_GPU) {
            gpu_runs += 1;
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                let mut engine = match wgdem_gpu::GpuEngine::new(
                    &ctx.device,
                    &ctx.queue,
                    &scene.simulation,
                    wgdem_gpu::GpuOptions::default(),
                ) {
                    Ok(engine) => engine,
                    Err(e) => return Err(e.to_string()),
                };
                match engine.run(STEPS) {
                    Ok(()) => {
                        let mut out = scene.simulation.clone();
                        engine.read_into(&mut out).map_err(|e| e.to_string())?;
                        Ok(Some(out))
                    }
                    Err(wgdem_gpu::GpuError::Runaway { .. }) => Ok(None),
                    Err(e) => Err(e.to_string()),
                }
            }));
            match outcome {
                Err(_) => panic!("round {round}: the GPU engine panicked on:\n{text}"),
                Ok(Err(m)) => assert!(!m.contains('\n'), "round {round}: {m}"),
                Ok(Ok(Some(out))) => assert!(
                    finite(&out),
                    "round {round}: a non-finite GPU state passed its guard on:\n{text}"
                ),
                Ok(Ok(None)) => {}
            }
        }
    }
    eprintln!(
        "{refused} refused, {ran} ran finite, {blew_up} blew up (reported), {gpu_runs} on the GPU"
    );
    // A property test whose every input is refused (or accepted) tests less than it seems.
    assert!(refused > 0 && ran > 0, "{refused} refused, {ran} ran");
}
