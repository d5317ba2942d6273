//! The papers' contact models on the CPU reference, checked against each paper's numbers:
//! Potyondy's hill memo (two-grain problem, dashpots, liquid bridge) and Kuhn, Suzuki &
//! Daouadji's linear-frictional contact (work balance, objectivity under rigid rotation).
//!
//! Tolerance 0.1 % for the memo's values: they are printed to five significant figures, so a
//! correct f64 evaluation differs from them by at most half a unit in the fifth figure
//! (≤ 0.005 %, 0.01 % for 1.5960e3); 0.1 % is the issue's bound.

mod common;

use std::path::Path;

use common::rel;
use glam::{DMat3, DQuat, DVec3};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wgdem_core::contact::kuhn::{KuhnParams, KuhnState, KuhnStep, kuhn_step};
use wgdem_core::contact_case::{CaseRow, ContactCase, stage_ends};

fn run_case(name: &str) -> Vec<CaseRow> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/contact")
        .join(format!("{name}.toml"));
    ContactCase::load(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
}

fn tangential(row: &CaseRow) -> DVec3 {
    DVec3::new(
        row.tangential_force_x,
        row.tangential_force_y,
        row.tangential_force_z,
    )
}

fn assert_close(what: &str, got: f64, memo: f64) {
    assert!(
        rel(got, memo) <= 1e-3,
        "{what}: {got} against the memo's {memo} ({:.4} %)",
        100.0 * rel(got, memo)
    );
}

#[test]
fn two_grains_linear_model_matches_the_memo() {
    let rows = run_case("pfc_two_grains_linear");
    let ends = stage_ends(&rows);
    // Eq. 22–23: F_n = −1.8221e4 N (memo sign, compression negative), F_s = 7.2884e3 N along +x.
    assert_close("F_n after A", ends[0].normal_force, 1.8221e4);
    assert_close("F_n after B", ends[1].normal_force, 1.8221e4);
    assert_close("F_s after B", ends[1].tangential_force_x, 7.2884e3);
    assert!(ends[1].tangential_force_y.abs() < 1e-9 && ends[1].tangential_force_z.abs() < 1e-9);
}

#[test]
fn two_grains_hill_model_and_normal_dashpot_match_the_memo() {
    let rows = run_case("pfc_two_grains_hill");
    let ends = stage_ends(&rows);
    assert_close("F_n after A (Eq. 24)", ends[0].normal_force, 1.0833e3);
    assert_close("F_n after B (Eq. 24)", ends[1].normal_force, 1.0833e3);
    assert_close("F_s after B (Eq. 25)", ends[1].tangential_force_x, 433.32);
    assert_close(
        "F_n moving at 100 m/s (Eq. 26)",
        ends[2].normal_force,
        3.9604e3,
    );
    assert_close("F_n at rest (Eq. 26)", ends[3].normal_force, 3.0640e3);
}

#[test]
fn two_grains_hill_shear_dashpot_matches_eq_27() {
    let rows = run_case("pfc_two_grains_hill_shear_dashpot");
    let ends = stage_ends(&rows);
    assert_close(
        "F_s after B, μ = 1000 (Eq. 25)",
        ends[1].tangential_force_x,
        1.4783e3,
    );
    assert_close(
        "F_s turning at 1000 rad/s (Eq. 27)",
        ends[2].tangential_force_x,
        1.5960e3,
    );
    assert_close("F_s at rest (Eq. 27)", ends[3].tangential_force_x, 1.5522e3);
}

#[test]
fn liquid_bridge_equilibrium_rupture_and_rewetting_match_the_memo() {
    let rows = run_case("pfc_two_grains_moisture");
    let ends = stage_ends(&rows);
    let by_stage = |name: &str| {
        *ends
            .iter()
            .find(|r| r.stage.starts_with(name))
            .unwrap_or_else(|| panic!("no stage {name}"))
    };
    // Figures 13, 14 and 16: at rest F_n^s = −15.708 N balances F^m = 15.708 N.
    for stage in ["wet, released", "released", "wet (gap 2.5 mm), released"] {
        let r = by_stage(stage);
        assert_close(
            &format!("{stage}: surface force"),
            r.surface_normal_force,
            15.708,
        );
        assert_close(
            &format!("{stage}: moisture force"),
            r.moisture_force,
            15.708,
        );
        assert!(
            r.normal_force.abs() < 1e-6,
            "{stage}: net normal force {}",
            r.normal_force
        );
        assert!(tangential(r).length() < 1e-6, "{stage}: shear not relaxed");
    }
    // Pulled up 20 µm: the bridge holds the grains in tension.
    let pulled = by_stage("pulled up 20");
    assert!(pulled.overlap < 0.0 && pulled.normal_force < -15.0);
    // Figure 15: beyond 2 s_cr = 10 mm the bridge ruptures and stays broken on the way back.
    assert_eq!(by_stage("pulled up beyond").moisture_force, 0.0);
    let back = by_stage("moved down");
    assert!(back.overlap < -1.8e-3 && back.overlap > -2e-3);
    assert_eq!(back.moisture_force, 0.0);
}

#[test]
fn linear_elastic_plus_dissipated_work_equals_the_work_done_on_the_contact() {
    let rows = run_case("kuhn_energy");
    for row in stage_ends(&rows) {
        let balance = row.elastic_work + row.dissipated_work;
        assert!(
            rel(balance, row.contact_work) < 0.01,
            "{}: elastic {} + dissipated {} vs work {}",
            row.stage,
            row.elastic_work,
            row.dissipated_work,
            row.contact_work
        );
    }
    // The case really slides and dissipates, and the rigid turn does no work.
    let ends = stage_ends(&rows);
    assert!(ends[1].dissipated_work > 0.3 * ends[1].contact_work);
    assert_eq!(ends[3].contact_work, ends[2].contact_work);
}

/// A loaded assembly: a jittered face-centred cubic packing of 256 spheres, compressed and
/// sheared by an affine strain path through the Kuhn contact (so that contacts carry
/// tangential forces, some at the friction limit).
struct Assembly {
    position: Vec<DVec3>,
    radius: f64,
    contacts: Vec<(usize, usize, KuhnState)>,
}

const KN: f64 = 1e6;

fn loaded_assembly(twirl: bool) -> (Assembly, KuhnParams) {
    let params = KuhnParams {
        kn: KN,
        kt: KN,
        friction: 0.55,
        twirl,
    };
    let radius = 1e-3;
    let a = 2.0 * radius * std::f64::consts::SQRT_2 * 0.998; // 0.2 % overlap at contact
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut position = Vec::new();
    for i in 0..4 {
        for j in 0..4 {
            for k in 0..4 {
                let corner = DVec3::new(i as f64, j as f64, k as f64) * a;
                for offset in [
                    DVec3::ZERO,
                    DVec3::new(0.5, 0.5, 0.0),
                    DVec3::new(0.5, 0.0, 0.5),
                    DVec3::new(0.0, 0.5, 0.5),
                ] {
                    let jitter = DVec3::new(
                        rng.random_range(-1.0..1.0),
                        rng.random_range(-1.0..1.0),
                        rng.random_range(-1.0..1.0),
                    ) * (0.5e-3 * radius);
                    position.push(corner + offset * a + jitter);
                }
            }
        }
    }
    let mut contacts = Vec::new();
    for p in 0..position.len() {
        for q in p + 1..position.len() {
            if position[p].distance(position[q]) < 2.0 * radius * 1.01 {
                contacts.push((
                    p,
                    q,
                    KuhnState {
                        overlap: f64::NEG_INFINITY,
                        ..KuhnState::default()
                    },
                ));
            }
        }
    }
    let mut asm = Assembly {
        position,
        radius,
        contacts,
    };
    // Compression along x1 with lateral expansion, plus a shear: 200 affine increments.
    let strain = DMat3::from_cols(
        DVec3::new(-1.5e-3, 4e-4, 0.0),
        DVec3::new(4e-4, 5e-4, 2e-4),
        DVec3::new(0.0, 2e-4, 4e-4),
    ) / 200.0;
    for _ in 0..200 {
        let old = asm.position.clone();
        for x in &mut asm.position {
            *x += strain * *x;
        }
        step_contacts(&mut asm, &params, |p, q| {
            (asm_displacement(&old, p, q, strain), 0.0)
        });
    }
    (asm, params)
}

fn asm_displacement(old: &[DVec3], p: usize, q: usize, strain: DMat3) -> DVec3 {
    strain * (old[q] - old[p])
}

/// Evaluates every contact at the current positions with `motion(p, q) = (Δū, twirl)`.
fn step_contacts(
    asm: &mut Assembly,
    params: &KuhnParams,
    motion: impl Fn(usize, usize) -> (DVec3, f64),
) {
    let r = asm.radius;
    let position = &asm.position;
    for (p, q, state) in &mut asm.contacts {
        let d = position[*q] - position[*p];
        let dist = d.length();
        let n = d / dist;
        let (movement, twirl) = motion(*p, *q);
        kuhn_step(
            state,
            &KuhnStep {
                overlap: 2.0 * r - dist,
                normal: n,
                movement,
                twirl,
            },
            params,
        );
    }
}

/// Love–Weber stress (times volume): `Σ f ⊗ l` with `l` from p to q and `f` the force on q.
fn stress(asm: &Assembly, params: &KuhnParams) -> DMat3 {
    let mut s = DMat3::ZERO;
    for (p, q, state) in &asm.contacts {
        let l = asm.position[*q] - asm.position[*p];
        if state.overlap < 0.0 {
            continue;
        }
        let n = l.normalize();
        let f = n * (params.kn * state.overlap) - state.tangential;
        s += DMat3::from_cols(f * l.x, f * l.y, f * l.z);
    }
    s
}

/// Rotates the assembly by 90° about x1 in 1 000 increments and returns the relative error of
/// the counter-rotated stress (Kuhn Eq. 24), ‖Ωᵀσ⁹⁰Ω − σ‖ / ‖σ‖ (Frobenius).
fn rotation_error(twirl: bool) -> (f64, usize, usize) {
    let (mut asm, params) = loaded_assembly(twirl);
    let before = stress(&asm, &params);
    let touching = asm.contacts.iter().filter(|c| c.2.overlap >= 0.0).count();
    let sliding = asm
        .contacts
        .iter()
        .filter(|c| {
            c.2.overlap >= 0.0
                && c.2.tangential.length() >= params.friction * params.kn * c.2.overlap * 0.999999
        })
        .count();
    let centre = asm.position.iter().sum::<DVec3>() / asm.position.len() as f64;
    let steps = 1000;
    let delta = std::f64::consts::FRAC_PI_2 / steps as f64;
    let omega = DVec3::X * delta; // rotation per increment (rad)
    let turn = DQuat::from_scaled_axis(omega);
    for _ in 0..steps {
        for x in &mut asm.position {
            *x = centre + turn * (*x - centre);
        }
        // Rigid motion: the contact points of p and q move alike (Eq. 5 gives Δū = 0, up to
        // rounding), and both spheres spin by ω about the normal: twirl = ω · n.
        let position = asm.position.clone();
        let r = asm.radius;
        step_contacts(&mut asm, &params, |p, q| {
            let n = (position[q] - position[p]).normalize();
            let c = position[p] + n * r;
            let velocity =
                |b: usize| omega.cross(position[b] - centre) + omega.cross(c - position[b]);
            (velocity(q) - velocity(p), omega.dot(n))
        });
    }
    let after = stress(&asm, &params);
    let back = DMat3::from_quat(DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2));
    let restored = back.transpose() * after * back;
    let diff = restored - before;
    let norm = |m: DMat3| {
        (m.x_axis.length_squared() + m.y_axis.length_squared() + m.z_axis.length_squared()).sqrt()
    };
    (norm(diff) / norm(before), touching, sliding)
}

#[test]
fn a_rigidly_rotated_assembly_returns_its_stress_only_with_the_twirl() {
    let (with_twirl, touching, sliding) = rotation_error(true);
    let (without, _, _) = rotation_error(false);
    eprintln!(
        "{touching} contacts ({sliding} sliding): counter-rotated stress error {:.4} % with \
         Eq. 22–23, {:.2} % with the projection only",
        100.0 * with_twirl,
        100.0 * without
    );
    assert!(
        touching > 1000 && sliding > 10,
        "the assembly must be loaded and partly sliding"
    );
    assert!(with_twirl < 5e-3, "with projection and twirl: {with_twirl}");
    assert!(
        without > 0.05,
        "projection alone should visibly fail: {without}"
    );
}

/// The Mindlin–Deresiewicz forces at the case's four checkpoints (Kuhn's Jäger paper,
/// Section 4.1): F_n0 = 1 N, dF_t/dF_n = 4 up to F_t = 0.9 f F_n, back down to −0.9 f F_n.
fn mindlin_deresiewicz_checkpoints(f: f64) -> [(f64, f64); 4] {
    let beta = 4.0;
    let n1 = beta / (beta - 0.9 * f);
    let t1 = 0.9 * f * n1;
    let n2 = (beta * n1 - t1) / (beta + 0.9 * f);
    let mid_up = 0.5 * (1.0 + n1);
    let mid_down = 0.5 * (n1 + n2);
    [
        (mid_up, beta * (mid_up - 1.0)),
        (n1, t1),
        (mid_down, t1 + beta * (mid_down - n1)),
        (n2, t1 + beta * (n2 - n1)),
    ]
}

#[test]
fn jager_case_reproduces_mindlin_deresiewicz_in_four_large_steps() {
    let rows = run_case("jager_mindlin_deresiewicz");
    let ends = stage_ends(&rows);
    assert_eq!(ends.len(), 5);
    for (row, (n, t)) in ends[1..].iter().zip(mindlin_deresiewicz_checkpoints(0.5)) {
        // The force on body 2 is minus the paper's force on body 1. Tolerance 1e-5 F_n: the
        // case's finite geometry tilts the normal by ~2e-5 rad, which moves the forces by ~1e-6
        // (the algorithm alone is exact to 1e-9, see the unit test in contact::jager).
        assert!(
            (row.normal_force - n).abs() < 1e-9 * n,
            "{}: F_n {}",
            row.stage,
            row.normal_force
        );
        assert!(
            (-row.tangential_force_x - t).abs() < 1e-5 * n,
            "{}: F_t {} against the closed form {t}",
            row.stage,
            -row.tangential_force_x
        );
    }
}

#[test]
fn jager_case_rigid_turn_keeps_the_force_in_the_contact_frame() {
    let rows = run_case("jager_rigid_rotation");
    let ends = stage_ends(&rows);
    let (before, after) = (ends[1], ends[2]);
    let turn = DQuat::from_scaled_axis(DVec3::new(0.6, 1.0, 1.6));
    let expected = turn * tangential(before);
    assert!(
        tangential(before).length() > 0.1 * before.normal_force,
        "the pair must be loaded"
    );
    assert!(
        (tangential(after) - expected).length() < 1e-6 * expected.length(),
        "tangential force {} against the turned {expected}",
        tangential(after)
    );
    assert!((after.normal_force - before.normal_force).abs() < 1e-9 * before.normal_force);
}

#[test]
fn jager_merging_shortens_the_history_within_its_capacity() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/contact/jager_cyclic.toml");
    let text = std::fs::read_to_string(&path).expect("case file");
    let lengths = |text: &str| -> Vec<usize> {
        ContactCase::parse(text, "jager_cyclic.toml")
            .unwrap_or_else(|e| panic!("{e}"))
            .run()
            .iter()
            .map(|r| r.history_points)
            .collect()
    };
    let merged = lengths(&text);
    let exact = lengths(&text.replace("dp_max = 0.05", "dp_max = 0.0"));
    let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len() as f64;
    eprintln!(
        "history points: exact mean {:.1} max {}; merged (|Δp_max| = 0.1 f) mean {:.1} max {}",
        mean(&exact),
        exact.iter().max().unwrap_or(&0),
        mean(&merged),
        merged.iter().max().unwrap_or(&0)
    );
    assert!(merged.iter().all(|&n| n <= 32) && exact.iter().all(|&n| n <= 32));
    assert!(mean(&merged) < 0.8 * mean(&exact));
}

#[test]
fn case_errors_name_the_field_and_the_fix() {
    let base = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/contact/pfc_two_grains_hill.toml"),
    )
    .expect("case file");
    let error = |text: &str| match ContactCase::parse(text, "case.toml") {
        Ok(_) => panic!("accepted a bad case"),
        Err(e) => e.to_string(),
    };
    let e = error(&base.replace("poisson_ratio = 0.15\n", "poisson_ratio = 0.7\n"));
    assert!(
        e.contains("bodies[0].poisson_ratio") && e.contains("(−1, 0.5]"),
        "{e}"
    );
    let e = error(&base.replace("damping_constant = 0.0", "damping_constant = 1.5"));
    assert!(
        e.contains("contact.damping_constant") && e.contains("[0, 1]"),
        "{e}"
    );
    let e = error(&base.replace("steps = 1\n", "steps = 0\n"));
    assert!(e.contains("stages[2].steps"), "{e}");
    let e = error(&base.replace("density = 2650.0\n", ""));
    assert!(
        e.contains("bodies[0].density") && e.contains("kg/m³"),
        "{e}"
    );
    let e = error(&base.replace("model = \"hill\"", "model = \"hertz\""));
    assert!(e.contains("contact.model"), "{e}");
    let e = error(&base.replace(
        "[[bodies]]\nradius = 0.0075",
        "[[bodies]]\nkind = \"plane\"\nnormal = [0.0, 0.0, 1.0]\nradius = 0.0075",
    ));
    assert!(e.contains("bodies[0].kind") && e.contains("linear"), "{e}");
}

/// A liquid bridge in a scene (`[[contact.moisture]]`): two hill spheres 1 mm apart, no gravity,
/// wetted at t = 0 with a 1.5 mm moisture gap, pull together and rest where the Hertz force
/// balances the moisture force ψ π R_o² (memo Eq. 12–13, Fig. 13).
#[test]
fn a_wetted_pair_in_a_scene_rests_where_hertz_balances_suction() {
    let toml = r#"
[simulation]
duration = 0.04
output_interval = 0.01
gravity = [0.0, 0.0, 0.0]
local_damping = 0.7

[contact]
law = "hertz"
history = "true"

[[contact.pairs]]
materials = ["granite", "granite"]
model = "hill"
damping_constant = 0.07
suction = 2e5

[[contact.moisture]]
time = 0.0
action = "wet"
gap = 0.0015

[[materials]]
name = "granite"
density = 2650.0
friction = 0.4
young_modulus = 29e9
poisson_ratio = 0.15
restitution = 0.9

[[particles]]
kind = "explicit"
material = "granite"
spheres = [
  { position = [0.0, 0.0, 0.0], radius = 0.0075 },
  { position = [0.0, 0.0, 0.0135], radius = 0.005 },
]
"#;
    let mut scene = common::scene(toml);
    let steps = (scene.duration / scene.simulation.dt).ceil() as u64;
    let sim = &mut scene.simulation;
    sim.run(steps);
    let gap = sim.particles.position[0].distance(sim.particles.position[1]) - 0.0125;
    // Hertz: 4/3 E_e √R_e δ^{3/2} = ψ π R_o², δ = −gap.
    let e_e = 1.0 / (2.0 * (1.0 - 0.15f64 * 0.15) / 29e9);
    let k = 4.0 / 3.0 * e_e * (0.0075f64 * 0.005 / 0.0125).sqrt();
    let suction_force = 2e5 * std::f64::consts::PI * 0.005f64.powi(2);
    let expected = (suction_force / k).powf(2.0 / 3.0);
    eprintln!("bridge: overlap {:.6e} m, expected {expected:.6e} m", -gap);
    assert!(rel(-gap, expected) < 1e-3, "overlap {} vs {expected}", -gap);
    assert!(sim.particles.kinetic_energy() < 1e-15);
}

#[test]
fn scene_pair_models_refuse_what_they_cannot_do() {
    let base = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/potyondy_27_balls_hill.toml"),
    )
    .expect("scene");
    let error = |text: &str| {
        let config = wgdem_core::scene::SceneConfig::parse(text, "scene.toml")
            .unwrap_or_else(|e| panic!("{e}"));
        match wgdem_core::scene::build_scene(config, "scene.toml") {
            Ok(_) => panic!("accepted a bad scene"),
            Err(e) => e.to_string(),
        }
    };
    let e = error(&base.replace(
        "materials = [\"granite\", \"facet\"]\nmodel = \"linear\"\neffective_modulus = 29e6\nstiffness_ratio = 1.0",
        "materials = [\"granite\", \"facet\"]\nmodel = \"hill\"",
    ));
    assert!(
        e.contains("contact.pairs[1].model") && e.contains("sphere–sphere"),
        "{e}"
    );
    let e = error(&base.replace("suction = 0.0", "suction = 0.0\ndp_max = 0.1"));
    assert!(
        e.contains("contact.pairs[0].dp_max") && e.contains("jager"),
        "{e}"
    );
    let e = error(&base.replace("effective_modulus = 29e6\n", ""));
    assert!(
        e.contains("contact.pairs[1]") && e.contains("effective_modulus"),
        "{e}"
    );
    let e = error(&base.replace("local_damping = 0.7", "local_damping = 1.2"));
    assert!(e.contains("simulation.local_damping"), "{e}");
    // The same pair in the other order.
    let duplicate = "[[contact.pairs]]\nmaterials = [\"facet\", \"granite\"]\nmodel = \"spring\"\n\n[[materials]]";
    let e = error(&base.replacen("[[materials]]", duplicate, 1));
    assert!(
        e.contains("contact.pairs[2].materials") && e.contains("listed twice"),
        "{e}"
    );
    let wet = "[[contact.moisture]]\naction = \"wet\"\ngap = 0.5\n\n[[materials]]";
    let e = error(&base.replacen("[[materials]]", wet, 1));
    assert!(e.contains("contact.moisture[0].gap"), "{e}");
}
