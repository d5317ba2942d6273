//! The spatial-hash broadphase finds exactly the pairs an O(N²) search finds.

mod common;

use glam::DVec3;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wgdem_core::broadphase::{brute_force_pairs, pairs_within, pairs_within_one_thread};

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
        let mut fast = pairs_within(&x, &r, margin);
        fast.sort_unstable();
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

/// From `PARALLEL_FROM` spheres the scan runs in the cells' order, in ranges on the host's
/// cores: the pairs are still exactly the O(N²) search's, and in the order one scan in index
/// order gives, which the fabric sums over contacts depend on. Both of its cell lookups: a
/// dense grid where the packing's box of cells is small enough (one box), the hash table
/// where it is not (the same spheres in two clusters 100 m apart).
#[test]
fn a_parallel_scan_finds_the_pairs_of_one_scan_in_its_order() {
    let n = wgdem_core::broadphase::PARALLEL_FROM + 10_007;
    let (x, r) = packing(6, n, 0.2, 1e-3, 3e-3);
    let apart: Vec<DVec3> = x
        .iter()
        .enumerate()
        .map(|(i, &p)| p + DVec3::X * if i % 2 == 0 { 100.0 } else { 0.0 })
        .collect();
    for (what, x) in [("one box", x), ("two clusters", apart)] {
        let fast = pairs_within(&x, &r, 1e-4);
        assert!(
            fast == pairs_within_one_thread(&x, &r, 1e-4),
            "{what}: not the order of one scan"
        );
        let mut sorted = fast.clone();
        sorted.sort_unstable();
        let slow = brute_force_pairs(&x, &r, 1e-4);
        assert_eq!(sorted, slow, "{what}");
        assert!(
            slow.len() > n / 5,
            "{what}: {} pairs: the case tests too little",
            slow.len()
        );
        eprintln!("{what}: {} pairs", slow.len());
    }
}

/// The neighbour list with a skin (rebuilt only when a particle has moved half the skin) sees
/// exactly the contacts of a list rebuilt every step. Both runs pour the same 600 spheres for
/// 3 000 steps; contact counts must agree at every step, and positions to 1e-12 m (the pair
/// order inside the lists differs, so sums may round differently in the last bit; nothing
/// else may differ). Since the every-step run rebuilds its list (and moves every pair's history
/// into the new list by stable ids) whenever anything moves, this is also the check that
/// tangential history survives rebuilds: a build that drops it fails here at step 597.
#[test]
fn skinned_neighbour_list_matches_rebuilding_every_step() {
    let text = r#"
        [simulation]
        duration = 1.0
        output_interval = 1.0
        seed = 5
        [contact]
        law = "hertz"
        history = "true"
        # fixture: material_m
        [[particles]]
        kind = "random"
        material = "m"
        count = 600
        region = { min = [0.0, 0.0, 0.0], max = [0.03, 0.03, 0.03] }
        size = { distribution = "uniform", min_diameter = 0.002, max_diameter = 0.003 }
        [[walls]]
        kind = "plane"
        name = "floor"
        material = "m"
        point = [0.0, 0.0, 0.0]
        normal = [0.0, 0.0, 1.0]
    "#;
    let build = || common::scene(text).simulation;
    let (mut skinned, mut every) = (build(), build());
    every.set_neighbour_skin(0.0);
    let mut contact_steps = 0;
    for _ in 0..3000 {
        skinned.step();
        every.step();
        assert_eq!(skinned.stats, every.stats, "step {}", every.steps);
        contact_steps += usize::from(every.stats.contacts > 0);
    }
    assert!(
        contact_steps > 500,
        "too few steps with contacts: {contact_steps}"
    );
    assert!(skinned.neighbour_builds < every.neighbour_builds / 5);
    for (a, b) in skinned
        .particles
        .position
        .iter()
        .zip(&every.particles.position)
    {
        assert!(a.distance(*b) < 1e-12, "{a} vs {b}");
    }
}

/// In a periodic cell, sheared or not and with as few as two bins along an edge, the binned scan
/// finds exactly the pairs that a search over all pairs and all 27 images of each finds (a
/// pair's nearest image within reach is unique in a cell wider than twice the reach).
#[test]
fn periodic_pairs_equal_a_search_over_every_image() {
    use glam::DMat3;
    use wgdem_core::broadphase::periodic_pairs_within;
    use wgdem_core::cell::PeriodicCell;
    let cases = [
        // (seed, n, edges, r_min, r_max, margin)
        (
            11,
            1500,
            [[0.05, 0.0, 0.0], [0.0, 0.05, 0.0], [0.0, 0.0, 0.05]],
            1e-3,
            2e-3,
            2e-4,
        ),
        (
            12,
            1500,
            [[0.05, 0.0, 0.0], [0.01, 0.04, 0.0], [0.02, -0.015, 0.06]],
            1e-3,
            3e-3,
            0.0,
        ),
        // Widths of about 2.2 and 4.5 reaches: two and four bins along those edges, where a
        // bin's neighbours at −1 and +1 are one bin.
        (
            13,
            300,
            [[0.013, 0.0, 0.0], [0.0, 0.027, 0.0], [0.0, 0.0, 0.2]],
            2e-3,
            3e-3,
            0.0,
        ),
    ];
    let mut total = 0;
    for (seed, n, edges, r0, r1, margin) in cases {
        let edges = edges.map(DVec3::from_array);
        let cell =
            PeriodicCell::new(edges, DVec3::new(-0.01, 0.0, 0.02), DMat3::ZERO).expect("accepted");
        cell.check_reach(2.0 * r1 + margin).expect("accepted");
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x: Vec<DVec3> = (0..n)
            .map(|_| {
                let s = DVec3::new(rng.random(), rng.random(), rng.random());
                cell.origin() + cell.matrix() * s
            })
            .collect();
        let r: Vec<f64> = (0..n)
            .map(|_| r0 + (r1 - r0) * rng.random::<f64>())
            .collect();
        let mut fast = periodic_pairs_within(&x, &r, margin, &cell);
        let found = fast.len();
        fast.sort_unstable();
        fast.dedup();
        assert_eq!(found, fast.len(), "seed {seed}: a pair listed twice");
        let mut slow = Vec::new();
        for i in 0..n {
            for j in i + 1..n {
                let reach = r[i] + r[j] + margin;
                let mut shortest = f64::INFINITY;
                for k in 0..27 {
                    let shift =
                        DVec3::new((k % 3) as f64, (k / 3 % 3) as f64, (k / 9) as f64) - DVec3::ONE;
                    let d = x[j] - x[i] + cell.matrix() * shift;
                    shortest = shortest.min(d.length());
                }
                if shortest < reach {
                    slow.push((i as u32, j as u32));
                }
            }
        }
        assert_eq!(fast, slow, "seed {seed}");
        let across = slow
            .iter()
            .filter(|&&(i, j)| {
                let d = x[j as usize] - x[i as usize];
                d.length() >= r[i as usize] + r[j as usize] + margin
            })
            .count();
        assert!(
            across > 0 && across < slow.len(),
            "seed {seed}: {across} of {} pairs across a face; the case tests nothing",
            slow.len()
        );
        total += slow.len();
    }
    eprintln!("{total} periodic pairs compared");
}
