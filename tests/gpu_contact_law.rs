//! The WGSL contact law (`contact_force` in shaders/common.wgsl) against the CPU law
//! (`contact::contact_force`) on random contact states.

mod common;

use common::gpu;
use glam::DVec3;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wgdem_core::contact::{
    ContactLaw, ContactModel, Damping, HistoryMode, RelativeMotion, contact_force,
};
use wgdem_core::material::{Material, PairParams, Stiffness};
use wgdem_gpu::layout::PairRecord;
use wgdem_gpu::probe::{ProbeIn, contact_law};

fn material(stiffness: Stiffness, friction: f64) -> Material {
    Material {
        name: "m".into(),
        density: Some(2500.0),
        friction,
        stiffness,
    }
}

fn record(p: &PairParams) -> PairRecord {
    PairRecord::from_pair(p)
}

/// Back to f64 exactly: the CPU law sees the same (f32-representable) inputs as the GPU.
fn d(a: [f32; 4]) -> DVec3 {
    DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64)
}

/// 12 000 random states over both laws (Hertz with either dashpot), all three history modes,
/// elastic and direct pairs
/// (the GPU table holds the pairs' constants rounded to f32, a relative change of 6e-8, far
/// inside the bound below), overlaps 1e-7–1e-4 m, relative speeds up to 1 m/s, stored
/// tangential displacements up to 1e-4 m (so many states slide).
///
/// Error bound: |F_gpu − F_cpu| ≤ 1e-5 × S, with S = f (k_n δ + γ_n m̄ |v| + k_t |u*| +
/// γ_t m̄ |v|) the sum of the magnitudes of the terms of Eq. 1; the same for u_t with the scale
/// |u_prev| + |Δu| + μ|F_n|/(f k_t). Why: inputs are identical, so the difference is the
/// rounding of the ≈ 40 f32 operations of the law (unit roundoff 6e-8 each, ≈ 2.4e-6 of the
/// largest term in the worst case) plus pow and sqrt, which WGSL only guarantees to a few ulp
/// (pow via exp2(y log2 x)); 1e-5 of S covers that with margin. A relative bound on F itself
/// would be wrong where the spring and the dashpot nearly cancel.
#[test]
fn wgsl_contact_law_matches_the_cpu_law() {
    let Some(ctx) = gpu() else { return };
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let elastic = |e: f64, nu: f64, r: f64| Stiffness::Elastic {
        young_modulus: e,
        poisson_ratio: nu,
        restitution: r,
    };
    let direct = |kn: f64, kt: f64, gn: f64, gt: f64| Stiffness::Direct {
        kn,
        kt,
        gamma_n: gn,
        gamma_t: gt,
    };
    let materials = [
        (
            material(elastic(8e6, 0.3, 0.5), 0.5),
            material(elastic(4e7, 0.22, 0.8), 0.3),
        ),
        (
            material(elastic(7e10, 0.25, 0.9), 0.18),
            material(elastic(7e10, 0.25, 0.9), 0.18),
        ),
        (
            material(direct(1e5, 8e4, 40.0, 20.0), 0.5),
            material(direct(1e5, 8e4, 40.0, 20.0), 0.5),
        ),
        (
            material(direct(1e12, 8e11, 40.0, 20.0), 0.1),
            material(direct(1e12, 8e11, 40.0, 20.0), 0.1),
        ),
    ];
    // Both laws, and the Hertz law with Tsuji's dashpot as well.
    let laws = [
        (ContactLaw::Hooke, Damping::Viscoelastic),
        (ContactLaw::Hertz, Damping::Viscoelastic),
        (ContactLaw::Hertz, Damping::Tsuji),
    ];
    // Pair table: for each law, each material pair.
    let mut table = Vec::new();
    let mut cpu_pairs = Vec::new();
    for &(law, dashpot) in &laws {
        for (a, b) in &materials {
            let p = PairParams::new(law, dashpot, a, b, 1.0).expect("same kind");
            table.push(record(&p));
            cpu_pairs.push((law, p));
        }
    }
    let n = 12_000;
    let mut inputs = Vec::with_capacity(n);
    for k in 0..n {
        let pair = k % table.len();
        let law = u32::from(cpu_pairs[pair].0 == ContactLaw::Hertz);
        let history = (k / table.len()) as u32 % 3;
        let normal = DVec3::new(
            rng.random::<f64>() - 0.5,
            rng.random::<f64>() - 0.5,
            rng.random::<f64>() - 0.5,
        )
        .normalize();
        let rv = |rng: &mut ChaCha8Rng, s: f64| {
            DVec3::new(
                rng.random::<f64>() - 0.5,
                rng.random::<f64>() - 0.5,
                rng.random::<f64>() - 0.5,
            ) * s
        };
        let overlap = 10f64.powf(-7.0 + 3.0 * rng.random::<f64>());
        let v = rv(&mut rng, 2.0);
        let dt = 10f64.powf(-6.0 + 2.0 * rng.random::<f64>());
        let u_scale = 2e-4 * rng.random::<f64>();
        let u = rv(&mut rng, u_scale);
        let m_eff = 10f64.powf(-5.0 + 3.0 * rng.random::<f64>());
        let r_eff = 10f64.powf(-4.0 + 2.0 * rng.random::<f64>());
        let f4 = |x: DVec3, w: f64| [x.x as f32, x.y as f32, x.z as f32, w as f32];
        inputs.push(ProbeIn {
            normal_overlap: f4(normal, overlap),
            velocity: f4(v, m_eff),
            displacement: f4(v * dt, r_eff),
            u_prev: f4(u, 0.0),
            mode: [pair as u32, law, history, 0],
        });
    }
    let out =
        contact_law(&ctx.device, &ctx.queue, &table, &inputs).unwrap_or_else(|e| panic!("{e}"));

    let mut worst_f: f64 = 0.0;
    let mut worst_u: f64 = 0.0;
    let mut sliding = 0;
    for (k, (s, o)) in inputs.iter().zip(&out).enumerate() {
        let (law, pair) = cpu_pairs[s.mode[0] as usize];
        let history =
            [HistoryMode::True, HistoryMode::Pseudo, HistoryMode::None][s.mode[2] as usize];
        let normal = d(s.normal_overlap);
        let overlap = s.normal_overlap[3] as f64;
        let params = pair.contact_params(s.velocity[3] as f64, s.displacement[3] as f64);
        let motion = RelativeMotion {
            velocity: d(s.velocity),
            displacement: d(s.displacement),
        };
        let u_prev = d(s.u_prev);
        let cpu = contact_force(
            ContactModel { law, history },
            overlap,
            normal,
            motion,
            u_prev,
            &params,
        );

        let f = law.factor(params.eff_radius, overlap);
        let g = params.damping.relative_factor(f);
        let speed = motion.velocity.length();
        let scale_f = f
            * (params.kn * overlap
                + params.gamma_n * params.eff_mass * g * speed
                + params.kt * (u_prev.length() + motion.displacement.length())
                + params.gamma_t * params.eff_mass * g * speed);
        let err_f = (d(o.force) - cpu.force).length() / scale_f;
        let scale_u = u_prev.length()
            + motion.displacement.length()
            + if params.kt > 0.0 {
                params.friction * cpu.normal_force.abs() / (f * params.kt)
                    + params.gamma_t * params.eff_mass * g * speed / params.kt
            } else {
                0.0
            };
        let err_u = if scale_u > 0.0 {
            (d(o.tangential) - cpu.tangential_displacement).length() / scale_u
        } else {
            0.0
        };
        assert!(
            err_f <= 1e-5,
            "state {k}: force {:?} vs {} (error {err_f:e} of scale)",
            o.force,
            cpu.force
        );
        assert!(
            err_u <= 1e-5,
            "state {k}: u_t {:?} vs {} (error {err_u:e} of scale)",
            o.tangential,
            cpu.tangential_displacement
        );
        worst_f = worst_f.max(err_f);
        worst_u = worst_u.max(err_u);
        sliding += usize::from(cpu.sliding);
    }
    eprintln!(
        "{n} states, {sliding} sliding; worst force error {worst_f:.2e}, worst u_t error {worst_u:.2e} (of scale)"
    );
    assert!(
        sliding > n / 10 && sliding < n * 9 / 10,
        "states must cover both sticking and sliding: {sliding}"
    );
}
