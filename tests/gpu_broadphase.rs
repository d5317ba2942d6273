//! The GPU broadphase (hash, WGSL counting sort by bucket with each bucket's range, neighbour
//! lists) finds the pairs an O(N²) search finds.

mod common;

use common::{gpu, run_gpu, scene};
use glam::DVec3;
use wgdem_core::broadphase::brute_force_pairs;
use wgdem_core::cpu::{DEFAULT_SKIN_FRACTION, Simulation};
use wgdem_gpu::{GpuContext, GpuOptions};

/// A scene of one material, no gravity and no walls, its spheres to be pushed by the test.
fn empty_scene() -> Simulation {
    scene(
        r#"
        [simulation]
        duration = 1.0
        output_interval = 1.0
        dt = 1e-6
        gravity = [0.0, 0.0, 0.0]
        [contact]
        law = "hertz"
        history = "true"
        # fixture: material_m
        [[particles]]
        kind = "explicit"
        material = "m"
        spheres = []
        "#,
    )
    .simulation
}

/// Runs one step of `sim` on the GPU and checks that the lists built at its start hold exactly
/// the pairs of the initial positions whose surfaces are closer than the skin, each pair once
/// from each side. f32 distances may disagree with f64 ones for pairs within rounding of the
/// cut-off (relative difference below 1e-6); such pairs are left out of the comparison and
/// counted (printed). Returns the pairs compared.
fn assert_lists_are_the_pairs(ctx: &GpuContext, sim: &Simulation, label: &str) -> Vec<(u32, u32)> {
    let positions = sim.particles.position.clone();
    let radii = sim.particles.radius.clone();
    let (_, engine) = run_gpu(ctx, sim, 1, GpuOptions::default());
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
    assert_eq!(lower, upper, "{label}: a pair is listed from one side only");
    let skipped = expected.iter().filter(|&&(i, j)| borderline(i, j)).count()
        + lower.iter().filter(|&&(i, j)| borderline(i, j)).count();
    lower.retain(|&(i, j)| !borderline(i, j));
    let expected: Vec<(u32, u32)> = expected
        .into_iter()
        .filter(|&(i, j)| !borderline(i, j))
        .collect();
    assert_eq!(lower, expected, "{label}");
    assert!(!expected.is_empty(), "{label}: no pairs to compare");
    eprintln!(
        "{label}: {} pairs equal, {skipped} borderline, slots regrown {} times to {}",
        expected.len(),
        engine.regrowths,
        engine.slots()
    );
    expected
}

/// Uniform random point in `[0, len)³`.
fn random_point(rng: &mut rand_chacha::ChaCha8Rng, len: f64) -> DVec3 {
    use rand::RngExt;
    DVec3::new(rng.random(), rng.random(), rng.random()) * len
}

/// Random polydisperse packings (overlaps allowed, size ratio up to 5, 1 500 to 6 000 spheres):
/// the GPU's lists are the pairs an O(N²) search finds.
#[test]
fn gpu_pairs_equal_brute_force_pairs() {
    let Some(ctx) = gpu() else { return };
    for (seed, count, len, dmin, dmax) in [
        (1u64, 1500u32, 0.04, 0.002, 0.004),
        (2, 3000, 0.05, 0.001, 0.005),
        (3, 6000, 0.06, 0.002, 0.003),
    ] {
        // Overlapping random spheres, which the scene's insertion would refuse.
        let mut sim = empty_scene();
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed);
        for _ in 0..count {
            use rand::RngExt;
            let x = random_point(&mut rng, len);
            let d = dmin + (dmax - dmin) * rng.random::<f64>();
            sim.particles.push(x, 0.5 * d, 2500.0, 0);
        }
        assert_lists_are_the_pairs(&ctx, &sim, &format!("seed {seed}"));
    }
}

/// The GPU's bucket of a cell (`bucket_of` in shaders/common.wgsl: 32-bit arithmetic).
fn gpu_bucket(c: [i32; 3], bits: u32) -> u32 {
    let h = (c[0] as u32).wrapping_mul(73_856_093)
        ^ (c[1] as u32).wrapping_mul(19_349_663)
        ^ (c[2] as u32).wrapping_mul(83_492_791);
    h.wrapping_mul(0x9E37_79B9) >> (32 - bits)
}

/// The GPU stores each particle's cell in one word, its coordinates modulo 2^11, 2^11 and 2^10
/// (`pack_cell` in shaders/common.wgsl), and finds a particle's own cell from that word and its
/// position. Clusters of overlapping spheres far from the origin on both sides (up to 6 144
/// cells), each paired with a cluster at a cell whose word is the same (2 048 cells away along
/// x or y, 1 024 along z, or several of these) and whose hash bucket is the same too: the lists
/// are still exactly the pairs of the brute-force search, none of them across clusters.
#[test]
fn gpu_pairs_are_exact_where_packed_cells_alias_in_one_bucket() {
    let Some(ctx) = gpu() else { return };
    const PER_CLUSTER: usize = 40;
    let offsets: [[i32; 3]; 6] = [
        [2048, 0, 0],
        [0, -2048, 0],
        [0, 0, 1024],
        [-4096, 2048, -1024],
        [6144, 0, -2048],
        [-2048, -2048, 1024],
    ];
    let n = 2 * offsets.len() * PER_CLUSTER;
    let radius = 0.001;
    // The engine's cell size and table (`GpuEngine::new`): one radius, no liquid bridges.
    let skin = DEFAULT_SKIN_FRACTION * 2.0 * radius;
    let cell = f64::from((4.0 * radius + skin) as f32);
    let bits = wgdem_gpu::engine::hash_table_bits(n);
    let mut sim = empty_scene();
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(7);
    for (k, o) in offsets.iter().enumerate() {
        // The first base cell near the origin (a different one for each offset) whose aliased
        // cell shares its bucket.
        let base = (0..)
            .map(|t: i32| [4 * k as i32 + (t % 7) - 3, (t / 7) % 7 - 3, t / 49 - 3])
            .find(|b| {
                gpu_bucket(*b, bits) == gpu_bucket([b[0] + o[0], b[1] + o[1], b[2] + o[2]], bits)
            })
            .expect("a colliding cell");
        for c in [base, [base[0] + o[0], base[1] + o[1], base[2] + o[2]]] {
            // Spheres within a cell of the cell's centre: the cell and its neighbours,
            // overlapping each other.
            let centre = (DVec3::new(c[0] as f64, c[1] as f64, c[2] as f64) + 0.5) * cell;
            for _ in 0..PER_CLUSTER {
                let x = centre + (random_point(&mut rng, 2.0 * cell) - cell);
                sim.particles.push(x, radius, 2500.0, 0);
            }
        }
    }
    assert_eq!(sim.particles.position.len(), n);
    let pairs = assert_lists_are_the_pairs(&ctx, &sim, "aliased clusters");
    // Every cluster, near the origin and far from it, has pairs of its own to find.
    for cluster in 0..2 * offsets.len() {
        let own = pairs
            .iter()
            .filter(|&&(i, j)| {
                i as usize / PER_CLUSTER == cluster && j as usize / PER_CLUSTER == cluster
            })
            .count();
        assert!(own >= 10, "cluster {cluster}: {own} pairs");
    }
}

/// `pack_cell` and `unpack_cell_near` (shaders/common.wgsl), through `cell_probe`: the word
/// keeps x and y modulo 2^11 and z modulo 2^10, and unpacking it near any cell less than 512
/// cells away along every axis gives the packed cell back, for cells from −10⁶ to 10⁶. The
/// neighbour search relies on both: it reads a particle's own cell back from its word near the
/// cell it recomputes from the position (exact even if that division rounds differently from
/// the hash kernel's), and the 27 cells around a particle's must have 27 distinct words.
#[test]
fn gpu_packed_cells_unpack_exactly_near_any_cell_within_512() {
    use rand::RngExt;
    use wgdem_gpu::probe::{CellCase, cells};
    let Some(ctx) = gpu() else { return };
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(11);
    let mut cases = Vec::new();
    for t in 0..4000 {
        let c: [i32; 3] = std::array::from_fn(|_| rng.random_range(-1_000_000..=1_000_000));
        // Every offset at the edges of the range, then random ones.
        let d: [i32; 3] = match t % 4 {
            0 => [0, 0, 0],
            1 => [511, -511, 511],
            2 => [-511, 511, -511],
            _ => std::array::from_fn(|_| rng.random_range(-511..=511)),
        };
        cases.push(CellCase {
            cell: [c[0], c[1], c[2], 0],
            near: [c[0] + d[0], c[1] + d[1], c[2] + d[2], 0],
        });
        // The 27 cells around c, unpacked near c.
        for k in 0..27 {
            let nc = [c[0] + k % 3 - 1, c[1] + (k / 3) % 3 - 1, c[2] + k / 9 - 1];
            cases.push(CellCase {
                cell: [nc[0], nc[1], nc[2], 0],
                near: [c[0], c[1], c[2], 0],
            });
        }
    }
    let out = cells(&ctx.device, &ctx.queue, &cases).unwrap_or_else(|e| panic!("{e}"));
    for (case, o) in cases.iter().zip(&out) {
        let c = case.cell;
        let expected =
            (c[0] as u32 & 0x7ff) | ((c[1] as u32 & 0x7ff) << 11) | ((c[2] as u32) << 22);
        assert_eq!(o.packed[0], expected, "{case:?}");
        assert_eq!(
            o.unpacked[..3],
            c[..3],
            "{case:?}: unpacked near {:?}",
            case.near
        );
    }
    for group in out.chunks(28) {
        let mut words: Vec<u32> = group[1..].iter().map(|o| o.packed[0]).collect();
        words.sort_unstable();
        words.dedup();
        assert_eq!(words.len(), 27, "the 27 cells around {:?}", cases[0].cell);
    }
}
