//! Each pair evaluated once, on its A side (the smaller stable id), which hands the force and
//! torque on B, with the pair's contact work, to B's neighbour slot (`GpuOptions::pairs_once`),
//! against both sides evaluating it. The two evaluations of a pair are bit-identical (canonical
//! order), B's share is added as one term either way, and every sum runs in the same order
//! (walls, then A sides, then B sides in list order), so the runs must end in the same bits:
//! a tolerance would hide a share handed to the wrong slot, a stale one, or a torque about the
//! wrong centre. Pours of 1 000 spheres of 2–3 mm onto a floor (hundreds of contacts that
//! form, slide, stick and end; rebuilds, the tables regrown and a reorder) with each kind of slot: the 16-byte slots of
//! the Hertz spring (also in 32-bit words), the 32-byte slots of Kuhn's linear model (with its
//! contact work; also on the single-workgroup path), of the hill model and of Type C rolling
//! resistance (with its rolling torque), and Jäger's.

mod common;

use common::{assert_same_bits, gpu, random_spheres_on_a_floor};
use wgdem_core::cpu::Simulation;
use wgdem_gpu::{GpuEngine, GpuOptions};

/// `count` spheres poured from up to `height` m onto a floor `side` m wide, Hertz with true
/// history, with the `[contact]` keys `pairs` for the spheres' pairs.
fn pour(count: u32, side: f64, height: f64, pairs: &str) -> Simulation {
    random_spheres_on_a_floor(
        count,
        [side, side, height],
        5,
        &format!("law = \"hertz\"\nhistory = \"true\"\n{pairs}"),
    )
}

/// The pair models compared, as `[contact]` keys for the pairs of material "m", with the least
/// contacts a run must end with to test anything (soft models hold fewer at once).
const MODELS: [(&str, &str, usize); 5] = [
    ("hertz", "", 300),
    (
        "linear",
        "[[contact.pairs]]\nmaterials = [\"m\", \"m\"]\nmodel = \"linear\"\nkn = 2000.0\nkt = 2000.0",
        40,
    ),
    (
        "hill",
        "[[contact.pairs]]\nmaterials = [\"m\", \"m\"]\nmodel = \"hill\"\ndamping_constant = 0.2",
        300,
    ),
    (
        "epsd rolling",
        "[[contact.pairs]]\nmaterials = [\"m\", \"m\"]\nmodel = \"spring\"\nrolling = \"epsd\"\nrolling_friction = 0.1",
        300,
    ),
    (
        "jager",
        "[[contact.pairs]]\nmaterials = [\"m\", \"m\"]\nmodel = \"jager\"\ndp_max = 0.05\ncapacity = 16",
        150,
    ),
];

// One test a model, so that the test runner compiles and runs them side by side.
#[test]
fn hertz_pairs_evaluated_once_give_the_bits_of_both_sides() {
    pairs_evaluated_once_give_the_bits_of_both_sides("hertz");
}

#[test]
fn linear_pairs_evaluated_once_give_the_bits_of_both_sides() {
    pairs_evaluated_once_give_the_bits_of_both_sides("linear");
}

#[test]
fn hill_pairs_evaluated_once_give_the_bits_of_both_sides() {
    pairs_evaluated_once_give_the_bits_of_both_sides("hill");
}

#[test]
fn rolling_pairs_evaluated_once_give_the_bits_of_both_sides() {
    pairs_evaluated_once_give_the_bits_of_both_sides("epsd rolling");
}

#[test]
fn jager_pairs_evaluated_once_give_the_bits_of_both_sides() {
    pairs_evaluated_once_give_the_bits_of_both_sides("jager");
}

/// The pours of the model `model` (a name in [`MODELS`]) evaluated once and from both sides.
fn pairs_evaluated_once_give_the_bits_of_both_sides(model: &str) {
    let Some(ctx) = gpu() else { return };
    let (what, pairs, least) = MODELS
        .into_iter()
        .find(|m| m.0 == model)
        .unwrap_or_else(|| panic!("{model} is not in MODELS"));
    let sim = pour(1000, 0.035, 0.03, pairs);
    let steps = (0.05 / sim.dt).ceil() as u64;
    // (single workgroup, 64-bit words): the general path for every model, and the other
    // variants of the kernels where they differ: the single workgroup's loop for the
    // model with contact work, 32-bit words for the 16-byte slots.
    let mut variants = vec![(false, true)];
    match what {
        "linear" => variants.push((true, true)),
        "hertz" => variants.push((false, false)),
        _ => {}
    }
    for (single_workgroup, words64) in variants {
        let run = |once: bool| {
            let options = GpuOptions {
                pairs_once: Some(once),
                single_workgroup: Some(single_workgroup),
                words64,
                // A reorder inside the run: the links must follow the particles.
                reorder_every: steps / 2,
                ..GpuOptions::default()
            };
            let mut engine = GpuEngine::new(&ctx.device, &ctx.queue, &sim, options)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(engine.pairs_once(), once, "{what}: the engine's choice");
            engine.run(steps).unwrap_or_else(|e| panic!("{e}"));
            let mut out = sim.clone();
            engine.read_into(&mut out).unwrap_or_else(|e| panic!("{e}"));
            out
        };
        let (once, both) = (run(true), run(false));
        let label = format!("{what}, single workgroup {single_workgroup}, 64-bit words {words64}");
        eprintln!(
            "{label}: {steps} steps, {} contacts, {} sliding, work {:e} J",
            both.stats.contacts, both.stats.sliding, both.work.dissipated
        );
        assert!(
            both.stats.contacts > least,
            "{label}: too few contacts to test anything"
        );
        assert!(
            what != "linear" || both.work.dissipated > 0.0,
            "{label}: no contact work was accounted"
        );
        assert_same_bits(&label, &both, &once);
    }
}

/// The default: on a software adapter pairs once where the slots are wide (and one chunk
/// holds them), both sides for the spring's 16-byte slots; on a GPU both sides for every
/// model.
#[test]
fn pairs_are_evaluated_once_by_default_where_the_slots_are_wide() {
    let Some(ctx) = gpu() else { return };
    let software = ctx.device.adapter_info().device_type == wgpu::DeviceType::Cpu;
    for (what, pairs, _) in MODELS {
        let sim = pour(100, 0.02, 0.02, pairs);
        let engine = GpuEngine::new(&ctx.device, &ctx.queue, &sim, GpuOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(engine.pairs_once(), software && what != "hertz", "{what}");
    }
}
