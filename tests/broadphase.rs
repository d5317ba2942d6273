//! The spatial-hash broadphase finds exactly the pairs an O(N²) search finds.

use glam::DVec3;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wgdem_core::broadphase::{brute_force_pairs, pairs_within};

fn packing(seed: u64, n: usize, box_len: f64, r_min: f64, r_max: f64) -> (Vec<DVec3>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = (0..n)
        .map(|_| {
            DVec3::new(rng.random(), rng.random(), rng.random()) * box_len
                - DVec3::splat(0.3 * box_len)
        })
        .collect();
    let r = (0..n)
        .map(|_| r_min + (r_max - r_min) * rng.random::<f64>())
        .collect();
    (x, r)
}

/// Random polydisperse packings, dense and sparse, size ratios up to 10, with and without a
/// search margin, straddling the origin (negative cell indices): the pair lists are identical.
#[test]
fn spatial_hash_pairs_equal_brute_force_pairs() {
    let cases = [
        (1, 2000, 0.05, 1e-3, 2e-3, 0.0),
        (2, 2000, 0.03, 5e-4, 5e-3, 0.0),
        (3, 3000, 0.2, 1e-3, 1e-2, 0.0),
        (4, 1500, 0.04, 1e-3, 2e-3, 5e-4),
        (5, 500, 10.0, 0.1, 0.5, 0.0),
    ];
    let mut total = 0;
    for (seed, n, len, r0, r1, margin) in cases {
        let (x, r) = packing(seed, n, len, r0, r1);
        let fast = pairs_within(&x, &r, margin);
        let slow = brute_force_pairs(&x, &r, margin);
        assert_eq!(fast, slow, "seed {seed}");
        assert!(
            !slow.is_empty(),
            "seed {seed}: no pairs, the case tests nothing"
        );
        total += slow.len();
    }
    eprintln!("{total} pairs compared");
}
