//! Broadphase: which spheres may touch.
//!
//! A spatial hash, the CPU twin of the GPU's bucket-sorted hash: each sphere's cell
//! `floor(x / h)` (cell size `h` ≥ the largest diameter plus the margin) is hashed into a table of
//! `2^k ≥ 2N` buckets (Teschner et al. 2003, "Optimized spatial hashing for collision detection
//! of deformable objects"), particles are counting-sorted by bucket, and each sphere scans the
//! buckets of its 27 neighbouring cells. Hash collisions only add candidates, which the distance
//! test removes, so the result is exact; [`brute_force_pairs`] is the O(N²) check.

use glam::DVec3;
use rayon::prelude::*;

use crate::cell::PeriodicCell;

/// Pairs `(i, j)`, `i < j`, whose surfaces are closer than `margin` (m), ordered by `i`, then by
/// scan order (deterministic for a given input).
pub fn pairs_within(position: &[DVec3], radius: &[f64], margin: f64) -> Vec<(u32, u32)> {
    scan(position, radius, margin, position.len() >= PARALLEL_FROM)
}

/// [`pairs_within`] on one thread in index order whatever the size: the same pairs in the same
/// order (the reference its parallel scan is tested against).
pub fn pairs_within_one_thread(position: &[DVec3], radius: &[f64], margin: f64) -> Vec<(u32, u32)> {
    scan(position, radius, margin, false)
}

fn scan(position: &[DVec3], radius: &[f64], margin: f64, parallel: bool) -> Vec<(u32, u32)> {
    let n = position.len();
    if n < 2 {
        return Vec::new();
    }
    let r_max = radius.iter().copied().fold(0.0, f64::max);
    let h = 2.0 * r_max + margin.max(0.0);
    let bits = (2 * n).next_power_of_two().trailing_zeros();
    let table = 1usize << bits;
    let bucket = |c: [i64; 3]| -> usize {
        let hash = (c[0].wrapping_mul(73_856_093))
            ^ (c[1].wrapping_mul(19_349_663))
            ^ (c[2].wrapping_mul(83_492_791));
        // Fibonacci hashing: keep the well-mixed high bits of a multiplicative hash.
        ((hash as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    };
    let cells: Vec<[i64; 3]> = position
        .iter()
        .map(|&x| {
            let c = (x / h).floor();
            [c.x as i64, c.y as i64, c.z as i64]
        })
        .collect();

    // A counting sort by bucket of spheres' cells listed in some order (stable): each bucket's
    // first entry in `start`, its spheres' places in that list in `listed[start[b]..start[b + 1]]`.
    let bucketed = |list: &[[i64; 3]]| -> (Vec<u32>, Vec<u32>) {
        let keys: Vec<usize> = list.iter().map(|&c| bucket(c)).collect();
        let mut start = vec![0u32; table + 1];
        for &k in &keys {
            start[k + 1] += 1;
        }
        for b in 0..table {
            start[b + 1] += start[b];
        }
        let mut fill = start.clone();
        let mut listed = vec![0u32; list.len()];
        for (i, &k) in keys.iter().enumerate() {
            listed[fill[k] as usize] = i as u32;
            fill[k] += 1;
        }
        (start, listed)
    };
    if !parallel {
        let (start, sorted) = bucketed(&cells);

        // Each neighbour cell is scanned once; a candidate counts only if it really lies in that
        // cell, so hash collisions (two cells in one bucket) neither duplicate nor add pairs.
        let pairs_of = |i: usize, pairs: &mut Vec<(u32, u32)>| {
            let c = cells[i];
            for dx in -1..=1 {
                for dy in -1..=1 {
                    for dz in -1..=1 {
                        let nc = [c[0] + dx, c[1] + dy, c[2] + dz];
                        let b = bucket(nc);
                        for &j in &sorted[start[b] as usize..start[b + 1] as usize] {
                            let j = j as usize;
                            if j > i && cells[j] == nc && within(position, radius, i, j, margin) {
                                pairs.push((i as u32, j as u32));
                            }
                        }
                    }
                }
            }
        };
        let mut pairs = Vec::new();
        (0..n).for_each(|i| pairs_of(i, &mut pairs));
        return pairs;
    }
    // A large packing (a shear row's contacts at 10⁶ spheres: 3.9–5.2 s on one core before
    // the order and the grid below) is scanned in the order of its cells (z, then y, then x),
    // in ranges on the host's cores, over copies of the positions, radii and cells in that
    // order. Within a cell the positions ascend with the id, as the ids do in a scan in index
    // order, so each sphere's pairs come out as there, and a stable counting sort by `i`
    // restores that scan's order. The order is sorted on keys laid out beside the ids (a key
    // looked up through the id in every comparison cost about twenty cache misses a sphere).
    let mut keyed: Vec<((i64, i64, i64), u32)> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| ((c[2], c[1], c[0]), i as u32))
        .collect();
    keyed.par_sort_unstable(); // the keys hold the ids: all distinct, one order
    let order: Vec<u32> = keyed.into_par_iter().map(|(_, i)| i).collect();
    let at: Vec<DVec3> = order.par_iter().map(|&i| position[i as usize]).collect();
    let size: Vec<f64> = order.par_iter().map(|&i| radius[i as usize]).collect();
    let cell_at: Vec<[i64; 3]> = order.par_iter().map(|&i| cells[i as usize]).collect();
    // Where the packing's box of cells holds at most 16 cells a sphere (64 bytes a sphere; a
    // loose packing of void ratio 13 has about 7), a dense grid of the cells' first spheres
    // (their positions in that order run from one cell to the next, z, then y, then x): a
    // neighbour cell's spheres are a range found by its index, and the cells a sweep in that
    // order reads lie near those it just read. Else the hash table's buckets (random in
    // memory: about one cache miss for each of a sphere's 27 cells). At 10⁶ random spheres on
    // one core: 0.68 s at void ratio 0.7 and 0.39 s at 13, against 1.58 s and 1.78 s.
    let (mut lo, mut hi) = ([i64::MAX; 3], [i64::MIN; 3]);
    for c in &cells {
        for a in 0..3 {
            lo[a] = lo[a].min(c[a]);
            hi[a] = hi[a].max(c[a]);
        }
    }
    let dims: [i64; 3] = std::array::from_fn(|a| hi[a].saturating_sub(lo[a]).saturating_add(1));
    let boxed = dims
        .iter()
        .try_fold(1i64, |v, &d| v.checked_mul(d))
        .filter(|&v| v <= 16 * n as i64 + 1024);
    let index =
        |c: [i64; 3]| ((c[2] - lo[2]) * dims[1] + (c[1] - lo[1])) * dims[0] + (c[0] - lo[0]);
    let grid: Option<Vec<u32>> = boxed.map(|cells_in_box| {
        let mut first = vec![0u32; cells_in_box as usize + 1];
        for c in &cell_at {
            first[index(*c) as usize + 1] += 1;
        }
        for d in 0..cells_in_box as usize {
            first[d + 1] += first[d];
        }
        first
    });
    let (start, listed) = match &grid {
        Some(_) => (Vec::new(), Vec::new()),
        None => bucketed(&cell_at),
    };
    let in_cell = |nc: [i64; 3], each: &mut dyn FnMut(usize)| match &grid {
        Some(first) => {
            if (0..3).all(|a| (lo[a]..=hi[a]).contains(&nc[a])) {
                let d = index(nc) as usize;
                (first[d] as usize..first[d + 1] as usize).for_each(each);
            }
        }
        None => {
            let b = bucket(nc);
            for &m in &listed[start[b] as usize..start[b + 1] as usize] {
                if cell_at[m as usize] == nc {
                    each(m as usize);
                }
            }
        }
    };
    let pairs_at = |k: usize, pairs: &mut Vec<(u32, u32)>| {
        let (c, i) = (cell_at[k], order[k]);
        for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    let nc = [c[0] + dx, c[1] + dy, c[2] + dz];
                    in_cell(nc, &mut |m| {
                        if order[m] > i && within(&at, &size, k, m, margin) {
                            pairs.push((i, order[m]));
                        }
                    });
                }
            }
        }
    };
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let chunk = n.div_ceil(threads);
    let scanned: Vec<Vec<(u32, u32)>> = std::thread::scope(|s| {
        let ranges: Vec<_> = (0..n)
            .step_by(chunk)
            .map(|from| {
                let pairs_at = &pairs_at;
                s.spawn(move || {
                    let mut pairs = Vec::new();
                    (from..(from + chunk).min(n)).for_each(|k| pairs_at(k, &mut pairs));
                    pairs
                })
            })
            .collect();
        ranges
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut first = vec![0usize; n + 1];
    for &(i, _) in scanned.iter().flatten() {
        first[i as usize + 1] += 1;
    }
    for i in 0..n {
        first[i + 1] += first[i];
    }
    let mut pairs = vec![(0, 0); first[n]];
    for &(i, j) in scanned.iter().flatten() {
        let k = &mut first[i as usize];
        pairs[*k] = (i, j);
        *k += 1;
    }
    pairs
}

/// Pairs `(i, j)`, `i < j`, whose surfaces are closer than `margin` (m) through their nearest
/// image in the periodic `cell`, ordered by `i`, then by scan order (deterministic). The spheres
/// must lie in the cell ([`PeriodicCell::wrap`]) and the cell be wider than twice `2 R_max +
/// margin` ([`PeriodicCell::check_reach`]), so that a pair has one image within reach.
///
/// The cell is cut into bins along its edges, `⌊w_k / h⌋` along edge `k` (`w_k` the width
/// across it, `h = 2 R_max + margin`, fewer where there would be more than about 4 bins per
/// sphere), so that a pair within reach lies in the same or adjacent bins (its fractional
/// difference along `k` is `n_k · d / w_k < h / w_k`), counting across the faces; each sphere
/// scans its bin and the distinct ones around it. One thread.
pub fn periodic_pairs_within(
    position: &[DVec3],
    radius: &[f64],
    margin: f64,
    cell: &PeriodicCell,
) -> Vec<(u32, u32)> {
    let n = position.len();
    if n < 2 {
        return Vec::new();
    }
    let r_max = radius.iter().copied().fold(0.0, f64::max);
    let h = 2.0 * r_max + margin.max(0.0);
    let widths = cell.widths();
    let cap = (4 * n + 64) as f64;
    let mut bins = widths.map(|w| (w / h).floor().clamp(1.0, cap));
    while bins.iter().product::<f64>() > cap {
        let k = (0..3).fold(0, |a, k| if bins[k] > bins[a] { k } else { a });
        bins[k] = (bins[k] / 2.0).floor().max(1.0);
    }
    let nb = bins.map(|b| b as i64);
    let bin_of = |x: DVec3| -> [i64; 3] {
        let s = cell.fractional(x).to_array();
        std::array::from_fn(|k| ((s[k] * bins[k]).floor() as i64).rem_euclid(nb[k]))
    };
    let index = |b: [i64; 3]| ((b[2] * nb[1] + b[1]) * nb[0] + b[0]) as usize;
    let cells: Vec<[i64; 3]> = position.iter().map(|&x| bin_of(x)).collect();
    let table = (nb[0] * nb[1] * nb[2]) as usize;
    let mut start = vec![0u32; table + 1];
    for &c in &cells {
        start[index(c) + 1] += 1;
    }
    for b in 0..table {
        start[b + 1] += start[b];
    }
    let mut fill = start.clone();
    let mut sorted = vec![0u32; n];
    for (i, &c) in cells.iter().enumerate() {
        let k = index(c);
        sorted[fill[k] as usize] = i as u32;
        fill[k] += 1;
    }
    // The distinct bins at −1, 0 and +1 along edge k of bin `b` (one or two where the cell has
    // fewer than three bins along it).
    let around = |b: i64, k: usize| -> ([i64; 3], usize) {
        let (mut bins, mut n) = ([0i64; 3], 0);
        for d in -1..=1 {
            let c = (b + d).rem_euclid(nb[k]);
            if !bins[..n].contains(&c) {
                bins[n] = c;
                n += 1;
            }
        }
        (bins, n)
    };
    let mut pairs = Vec::new();
    for i in 0..n {
        let c = cells[i];
        let [(xs, nx), (ys, ny), (zs, nz)] = [0, 1, 2].map(|k| around(c[k], k));
        for &x in &xs[..nx] {
            for &y in &ys[..ny] {
                for &z in &zs[..nz] {
                    let b = index([x, y, z]);
                    for &j in &sorted[start[b] as usize..start[b + 1] as usize] {
                        let j = j as usize;
                        let reach = radius[i] + radius[j] + margin;
                        if j > i
                            && cell
                                .nearest_image(position[j] - position[i])
                                .length_squared()
                                < reach * reach
                        {
                            pairs.push((i as u32, j as u32));
                        }
                    }
                }
            }
        }
    }
    pairs
}

/// Spheres from which [`pairs_within`] scans in the order of their cells on every core of the host
/// (below, in index order on one thread: the CPU reference's small scenes keep their timings).
pub const PARALLEL_FROM: usize = 50_000;

/// The same pairs as [`pairs_within`], by testing all N(N−1)/2 pairs.
pub fn brute_force_pairs(position: &[DVec3], radius: &[f64], margin: f64) -> Vec<(u32, u32)> {
    let n = position.len();
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            if within(position, radius, i, j, margin) {
                pairs.push((i as u32, j as u32));
            }
        }
    }
    pairs
}

#[inline]
fn within(position: &[DVec3], radius: &[f64], i: usize, j: usize, margin: f64) -> bool {
    let reach = radius[i] + radius[j] + margin;
    position[i].distance_squared(position[j]) < reach * reach
}
