//! Bounded fuzzing of the scene and shear-test parsers: the bundled presets, each mutated a
//! few hundred times with a fixed seed (a value replaced by a hostile one — 0, −1, NaN, ±inf,
//! 1e±300, a huge integer, a string —, a line dropped or doubled, a character changed), must
//! each load or be refused with a one-line error; none may panic, hang or abort. The seed
//! makes every failure reproducible; the iteration count bounds the time (a few seconds).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::time::{Duration, Instant};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const HOSTILE: [&str; 14] = [
    "0",
    "-1",
    "nan",
    "inf",
    "-inf",
    "1e300",
    "1e-300",
    "-1e300",
    "4294967295",
    "18446744073709551615",
    "\"x\"",
    "[]",
    "[1e300, -1e300, nan]",
    "{}",
];

/// One random mutation of `text`.
fn mutate(text: &str, rng: &mut ChaCha8Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let k = rng.random_range(0..lines.len());
    match rng.random_range(0..4) {
        0 | 1 => {
            if let Some(eq) = lines[k].find(" = ") {
                let value = HOSTILE[rng.random_range(0..HOSTILE.len())];
                lines[k] = format!("{} = {value}", &lines[k][..eq]);
            }
        }
        2 => {
            if rng.random_bool(0.5) {
                lines.remove(k);
            } else {
                let line = lines[k].clone();
                lines.insert(k, line);
            }
        }
        _ => {
            let mut chars: Vec<char> = lines[k].chars().collect();
            if !chars.is_empty() {
                let at = rng.random_range(0..chars.len());
                chars[at] = ['0', '9', '-', '.', 'e', '"', '[', '=', ' '][rng.random_range(0..9)];
            }
            lines[k] = chars.into_iter().collect();
        }
    }
    lines.join("\n")
}

/// Mutates each preset `rounds` times (up to three mutations each) and feeds it to `load`,
/// which returns the error message of a refusal.
fn fuzz(presets: &[&str], rounds: usize, seed: u64, load: impl Fn(&str, &str) -> Option<String>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mut loaded, mut refused) = (0, 0);
    for preset in presets {
        let text = std::fs::read_to_string(root.join(preset)).expect("preset");
        for round in 0..rounds {
            let mut mutated = text.clone();
            for _ in 0..rng.random_range(1..=3) {
                mutated = mutate(&mutated, &mut rng);
            }
            let started = Instant::now();
            let result = catch_unwind(AssertUnwindSafe(|| load(&mutated, preset)));
            let took = started.elapsed();
            let Ok(outcome) = result else {
                panic!("{preset}, round {round} (seed {seed}) panicked on:\n{mutated}");
            };
            assert!(
                took < Duration::from_secs(20),
                "{preset}, round {round} took {took:?} on:\n{mutated}"
            );
            match outcome {
                None => loaded += 1,
                Some(message) => {
                    refused += 1;
                    assert!(
                        !message.is_empty() && !message.contains('\n'),
                        "{preset}, round {round}: not one line: {message}\non:\n{mutated}"
                    );
                }
            }
        }
    }
    // A fuzzer whose every input is refused (or accepted) tests less than it seems.
    assert!(
        loaded > 0 && refused > 0,
        "{loaded} loaded, {refused} refused"
    );
    eprintln!("{loaded} loaded, {refused} refused");
}

#[test]
fn scene_parser_survives_mutations() {
    fuzz(
        &[
            "assets/scenes/pour.toml",
            "assets/scenes/potyondy_27_balls.toml",
            "assets/scenes/potyondy_27_balls_hill.toml",
        ],
        150,
        1,
        |text, file| {
            wgdem_core::scene::SceneConfig::parse(text, file)
                .and_then(|config| wgdem_core::scene::build_scene(config, file))
                .err()
                .map(|e| e.to_string())
        },
    );
}

#[test]
fn shear_parser_survives_mutations() {
    fuzz(
        &[
            "assets/shear/hartl_ooi_quick.toml",
            "assets/shear/he_quick_loose.toml",
        ],
        150,
        2,
        |text, file| {
            // Scaled to 60 spheres, so that each specimen is placed in milliseconds.
            wgdem_core::shear::ShearSetup::parse_scaled(text, file, Some(60))
                .err()
                .map(|e| e.to_string())
        },
    );
}
