//! The contact kernels are compiled for the contact models a scene uses
//! (`GpuOptions::specialize`, on by default). Dropping the other models' branches must not
//! change a single bit of what is computed: each run here is compared bitwise with the same run
//! on kernels compiled for every model. A pair table that brings in a model the kernels lack
//! recompiles them; one whose history needs wider slots is refused by name.
//!
//! The specialised runs take the engine's default path (at 1 000 spheres on lavapipe, the
//! single workgroup); the runs they are compared with take the general path, whose bits the
//! single workgroup gives (tests/gpu_paths.rs). So each comparison covers the path too, and
//! lavapipe does not compile a single-workgroup kernel with every model in it, its largest
//! (about half a minute of LLVM each on a cold shader cache, which every CI run starts with:
//! docs/decisions/parallel-pipeline-compile.md).

mod common;

use common::{assert_same_bits, gpu, random_spheres_on_a_floor};
use wgdem_core::cpu::Simulation;
use wgdem_core::material::PairParams;
use wgdem_gpu::{GpuEngine, GpuOptions};

/// 1 000 spheres poured onto a floor with the given extra `[contact]` keys (for the pairs of
/// material "m"; the floor is of material "floor").
fn pour(law: &str, history: &str, pairs: &str) -> Simulation {
    random_spheres_on_a_floor(
        1000,
        [0.035, 0.035, 0.03],
        5,
        &format!("law = \"{law}\"\nhistory = \"{history}\"\n{pairs}"),
    )
}

const LINEAR: &str = r#"
    [[contact.pairs]]
    materials = ["m", "m"]
    model = "linear"
    kn = 2000.0
    kt = 2000.0
"#;

const HILL: &str = r#"
    [[contact.pairs]]
    materials = ["m", "m"]
    model = "hill"
    damping_constant = 0.2
"#;

fn pairs_of(sim: &Simulation) -> Vec<PairParams> {
    let nm = sim.n_materials();
    (0..nm * nm).map(|k| *sim.pair(k / nm, k % nm)).collect()
}

/// Runs `sim` for `steps`, then, if given, switches to the pair table `then` for `steps`
/// more; returns the final state.
fn run(
    ctx: &wgdem_gpu::GpuContext,
    sim: &Simulation,
    specialize: bool,
    steps: u64,
    then: Option<&[PairParams]>,
) -> Simulation {
    let options = GpuOptions {
        specialize,
        single_workgroup: (!specialize).then_some(false),
        ..GpuOptions::default()
    };
    run_with(ctx, sim, options, steps, then)
}

/// [`run`] with the given engine options.
fn run_with(
    ctx: &wgdem_gpu::GpuContext,
    sim: &Simulation,
    options: GpuOptions,
    steps: u64,
    then: Option<&[PairParams]>,
) -> Simulation {
    let mut engine =
        GpuEngine::new(&ctx.device, &ctx.queue, sim, options).unwrap_or_else(|e| panic!("{e}"));
    engine.run(steps).unwrap_or_else(|e| panic!("{e}"));
    let mut out = sim.clone();
    if let Some(pairs) = then {
        out.set_pair_params(pairs.to_vec());
        engine
            .update_pair_table(&out)
            .unwrap_or_else(|e| panic!("{e}"));
        engine.run(steps).unwrap_or_else(|e| panic!("{e}"));
    }
    engine.read_into(&mut out).unwrap_or_else(|e| panic!("{e}"));
    out
}

/// Steps of `sim` in `seconds` of simulated time.
fn steps_for(sim: &Simulation, seconds: f64) -> u64 {
    (seconds / sim.dt).ceil() as u64
}

/// Hooke and Hertz with true, pseudo and no history: the specialised kernels give the generic
/// kernels' bits after 50 ms of a pour (the spheres land: hundreds of contacts form, slide and
/// stick).
#[test]
fn specialized_spring_kernels_give_the_generic_bits() {
    let Some(ctx) = gpu() else { return };
    for (law, history) in [("hertz", "true"), ("hertz", "pseudo"), ("hooke", "none")] {
        let sim = pour(law, history, "");
        let steps = steps_for(&sim, 0.05);
        let generic = run(&ctx, &sim, false, steps, None);
        let specialized = run(&ctx, &sim, true, steps, None);
        eprintln!(
            "{law}/{history}: {steps} steps, {} contacts",
            generic.stats.contacts
        );
        assert!(
            generic.stats.contacts > 300,
            "too few contacts to test anything"
        );
        assert_same_bits(&format!("{law}, {history} history"), &generic, &specialized);
    }
}

/// The per-step kernels hold the particle arrays and slots as 64-bit words where the device
/// has 64-bit integers (`GpuOptions::words64`): the same bytes, loaded two words at a time.
/// The results must be those of 32-bit words bit for bit, for the 16-byte slots of a Hertz
/// pour and the 32-byte slots (with their contact work) of Kuhn's linear model, which the hill
/// model shares.
#[test]
fn words64_give_the_bits_of_32_bit_words() {
    let Some(ctx) = gpu() else { return };
    if !ctx.device.features().contains(wgpu::Features::SHADER_INT64) {
        common::skip::cannot_run(&format!("{} has no 64-bit integers", ctx.describe()));
        return;
    }
    // The soft, undamped linear pairs (k = 2000 N/m) hold fewer contacts at once, and how many
    // varies with the device: the pour's trajectory is chaotic and a driver may contract
    // `a * b + c` into one rounding (108 contacts at 0.06 s on lavapipe, 95 on an NVIDIA H100).
    // The guard asks for a scene with contacts, not for a count.
    for (what, pairs, seconds, least) in [("hertz", "", 0.05, 300), ("linear", LINEAR, 0.06, 50)] {
        let sim = pour("hertz", "true", pairs);
        let steps = steps_for(&sim, seconds);
        let options32 = GpuOptions {
            words64: false,
            single_workgroup: Some(false),
            ..GpuOptions::default()
        };
        let mut engine = GpuEngine::new(&ctx.device, &ctx.queue, &sim, GpuOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            engine.words64(),
            "{what}: the engine did not take 64-bit words"
        );
        engine.run(steps).unwrap_or_else(|e| panic!("{e}"));
        let mut words64 = sim.clone();
        engine
            .read_into(&mut words64)
            .unwrap_or_else(|e| panic!("{e}"));
        let words32 = run_with(&ctx, &sim, options32, steps, None);
        eprintln!(
            "{what}: {steps} steps, {} contacts, work {:e} J",
            words32.stats.contacts, words32.work.dissipated
        );
        assert!(
            words32.stats.contacts > least,
            "too few contacts to test anything"
        );
        // Kuhn's model accounts its contact work in the 32-byte slots that this compares.
        assert!(
            what == "hertz" || words32.work.dissipated > 0.0,
            "{what}: no contact work was accounted"
        );
        assert_same_bits(&format!("{what}, 64-bit words"), &words32, &words64);
    }
}

/// Kuhn's linear contact for 30 ms of a pour, then the hill model for 30 ms: the kernels compiled for the
/// linear model alone are recompiled for the hill model when its table arrives, and give the
/// bits of kernels compiled for every model from the start.
#[test]
fn a_pair_table_with_a_new_model_recompiles_the_kernels() {
    let Some(ctx) = gpu() else { return };
    let sim = pour("hertz", "true", LINEAR);
    let hill = pairs_of(&pour("hertz", "true", HILL));
    let steps = steps_for(&sim, 0.03);
    let generic = run(&ctx, &sim, false, steps, Some(&hill));
    let specialized = run(&ctx, &sim, true, steps, Some(&hill));
    let linear_only = run(&ctx, &sim, true, 2 * steps, None);
    eprintln!(
        "linear then hill: 2 × {steps} steps, {} contacts",
        generic.stats.contacts
    );
    assert!(
        generic.stats.contacts > 300,
        "too few contacts to test anything"
    );
    // The switch mattered: the hill model moved the spheres differently.
    assert_ne!(
        linear_only.particles.position, generic.particles.position,
        "the hill table changed nothing"
    );
    assert_same_bits("linear then hill", &generic, &specialized);
}

/// An engine with 16-byte slots (spring–dashpot pairs only) cannot take a table whose model
/// keeps more state per contact: the update is refused with a message saying what to do.
#[test]
fn a_pair_table_needing_wider_slots_is_refused() {
    let Some(ctx) = gpu() else { return };
    let sim = pour("hertz", "true", "");
    let mut engine = GpuEngine::new(&ctx.device, &ctx.queue, &sim, GpuOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut linear = sim.clone();
    linear.set_pair_params(pairs_of(&pour("hertz", "true", LINEAR)));
    let err = engine
        .update_pair_table(&linear)
        .expect_err("a spring engine took a linear-model table")
        .to_string();
    assert!(err.contains("new engine"), "{err}");
}
