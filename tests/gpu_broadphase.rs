//! The GPU broadphase (hash, WGSL radix sort, cell ranges, neighbour lists) finds the pairs an
//! O(N²) search finds.

mod common;

use common::{gpu, run_gpu, scene};
use wgdem_core::broadphase::brute_force_pairs;
use wgdem_gpu::GpuOptions;

/// Random polydisperse packings (overlaps allowed, size ratio up to 5, 1 500 to 6 000 spheres,
/// several hash-table sizes and radix-pass counts): after one step, the lists built at its
/// start hold exactly the pairs of the initial positions whose surfaces are closer than the
/// skin, each pair once from each side. f32 distances may disagree with f64 ones for pairs
/// within rounding of the cut-off (relative difference below 1e-6); such pairs are left out of
/// the comparison and counted (none were found with these seeds, and the count is printed).
#[test]
fn gpu_pairs_equal_brute_force_pairs() {
    let Some(ctx) = gpu() else { return };
    for (seed, count, len, dmin, dmax) in [
        (1u64, 1500u32, 0.04, 0.002, 0.004),
        (2, 3000, 0.05, 0.001, 0.005),
        (3, 6000, 0.06, 0.002, 0.003),
    ] {
        let s = scene(
            r#"
            [simulation]
            duration = 1.0
            output_interval = 1.0
            dt = 1e-6
            gravity = [0.0, 0.0, 0.0]
            [contact]
            law = "hertz"
            history = "true"
            [[materials]]
            name = "m"
            density = 2500.0
            friction = 0.5
            young_modulus = 1e7
            poisson_ratio = 0.3
            restitution = 0.5
            [[particles]]
            kind = "explicit"
            material = "m"
            spheres = []
            "#,
        );
        // Overlapping random spheres, which the scene's insertion would refuse.
        let mut sim = s.simulation;
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed);
        for _ in 0..count {
            use rand::RngExt;
            let x = glam::DVec3::new(rng.random(), rng.random(), rng.random()) * len;
            let d = dmin + (dmax - dmin) * rng.random::<f64>();
            sim.particles.push(x, 0.5 * d, 2500.0, 0);
        }
        let positions = sim.particles.position.clone();
        let radii = sim.particles.radius.clone();
        let (_, engine) = run_gpu(&ctx, &sim, 1, GpuOptions::default());
        let lists = engine.neighbour_lists().unwrap_or_else(|e| panic!("{e}"));

        let skin = engine.skin();
        assert!(skin > 0.0);
        let expected = brute_force_pairs(&positions, &radii, skin);
        let borderline = |i: u32, j: u32| {
            let (i, j) = (i as usize, j as usize);
            let reach = radii[i] + radii[j] + skin;
            ((positions[i].distance(positions[j]) - reach) / reach).abs() < 1e-6
        };
        let mut lower: Vec<(u32, u32)> = lists.iter().copied().filter(|(i, j)| i < j).collect();
        let mut upper: Vec<(u32, u32)> = lists
            .iter()
            .filter(|(i, j)| i > j)
            .map(|&(i, j)| (j, i))
            .collect();
        lower.sort_unstable();
        upper.sort_unstable();
        assert_eq!(
            lower, upper,
            "seed {seed}: a pair is listed from one side only"
        );
        let skipped = expected.iter().filter(|&&(i, j)| borderline(i, j)).count()
            + lower.iter().filter(|&&(i, j)| borderline(i, j)).count();
        lower.retain(|&(i, j)| !borderline(i, j));
        let expected: Vec<(u32, u32)> = expected
            .into_iter()
            .filter(|&(i, j)| !borderline(i, j))
            .collect();
        assert_eq!(lower, expected, "seed {seed}");
        assert!(!expected.is_empty());
        eprintln!(
            "seed {seed}: {} pairs equal, {skipped} borderline, slots regrown {} times to {}",
            expected.len(),
            engine.regrowths,
            engine.slots()
        );
    }
}
