//! Particle groups: listed spheres, lattices and random insertion, with sizes drawn from
//! a distribution (mono, uniform, log-normal by D50 and Cu, or a gradation table).

use super::*;

#[allow(clippy::too_many_arguments)]
pub(super) fn add_group(
    v: &Validator,
    field: &str,
    group: &ParticleGroup,
    material: usize,
    density: f64,
    walls: &[Wall],
    rng: &mut ChaCha8Rng,
    particles: &mut Particles,
) -> Result<()> {
    match group {
        ParticleGroup::Explicit { spheres, .. } => {
            for (s, sphere) in spheres.iter().enumerate() {
                let f = format!("{field}.spheres[{s}]");
                v.positive(&format!("{f}.radius"), sphere.radius, "m")?;
                v.finite3(&format!("{f}.position"), sphere.position)?;
                v.finite3(&format!("{f}.velocity"), sphere.velocity)?;
                v.finite3(&format!("{f}.angular_velocity"), sphere.angular_velocity)?;
                let x = DVec3::from_array(sphere.position);
                v.inside_walls(&format!("{f}.position"), x, walls)?;
                let i = particles.push(x, sphere.radius, density, material);
                particles.velocity[i] = DVec3::from_array(sphere.velocity);
                particles.angular_velocity[i] = DVec3::from_array(sphere.angular_velocity);
                particles.spin_fixed[i] = sphere.fix_spin;
            }
        }
        ParticleGroup::Lattice {
            radius,
            origin,
            counts,
            spacing,
            velocity,
            count,
            jitter,
            ..
        } => {
            v.positive(&format!("{field}.radius"), *radius, "m")?;
            v.finite3(&format!("{field}.origin"), *origin)?;
            v.finite3(&format!("{field}.velocity"), *velocity)?;
            let spacing = spacing.unwrap_or(2.0 * radius);
            v.positive(&format!("{field}.spacing"), spacing, "m")?;
            let sites: u64 = counts.iter().map(|&c| u64::from(c)).product();
            let keep = lattice_count(v, field, *count, sites)?;
            let jitter = jitter.unwrap_or(0.0);
            // Written so that NaN fails too; below half the spacing, spheres keep their sites'
            // order (and 2 × jitter cannot overflow).
            if !(jitter >= 0.0 && jitter < 0.5 * spacing) {
                return Err(v.err(
                    &format!("{field}.jitter"),
                    format!(
                        "{jitter} must be zero or a positive number (in m) below half the spacing ({:.3e} m)",
                        0.5 * spacing
                    ),
                ));
            }
            let o = DVec3::from_array(*origin);
            let sites = (0..counts[2]).flat_map(|iz| {
                (0..counts[1]).flat_map(move |iy| (0..counts[0]).map(move |ix| (ix, iy, iz)))
            });
            for (ix, iy, iz) in sites.take(keep as usize) {
                let mut x = o + DVec3::new(ix as f64, iy as f64, iz as f64) * spacing;
                if jitter > 0.0 {
                    x += DVec3::new(
                        rng.random::<f64>(),
                        rng.random::<f64>(),
                        rng.random::<f64>(),
                    ) * (2.0 * jitter)
                        - DVec3::splat(jitter);
                }
                if !x.is_finite() {
                    return Err(v.err(
                        &format!("{field}.spacing"),
                        format!(
                            "site ({ix}, {iy}, {iz}) lies at a non-finite position; give a smaller `origin` or `spacing`"
                        ),
                    ));
                }
                v.inside_walls(&format!("{field}.origin"), x, walls)?;
                let i = particles.push(x, *radius, density, material);
                particles.velocity[i] = DVec3::from_array(*velocity);
            }
        }
        ParticleGroup::Random {
            count,
            region,
            size,
            max_attempts,
            ..
        } => {
            let diameters = sample_diameters(v, &format!("{field}.size"), size, *count, rng)?;
            let lo = DVec3::from_array(region.min);
            let hi = DVec3::from_array(region.max);
            v.finite3(&format!("{field}.region.min"), region.min)?;
            v.finite3(&format!("{field}.region.max"), region.max)?;
            if (0..3).any(|k| hi[k] <= lo[k]) {
                return Err(v.err(
                    &format!("{field}.region"),
                    "`max` must exceed `min` along every axis".to_owned(),
                ));
            }
            for corner in 0..8 {
                let c = DVec3::new(
                    if corner & 1 == 0 { lo.x } else { hi.x },
                    if corner & 2 == 0 { lo.y } else { hi.y },
                    if corner & 4 == 0 { lo.z } else { hi.z },
                );
                v.inside_walls(&format!("{field}.region"), c, walls)?;
            }
            insert_random(
                v,
                field,
                &diameters,
                lo,
                hi,
                *max_attempts,
                material,
                density,
                rng,
                particles,
            )?;
        }
        // Placed by `add_file_group`, with the packing its reader read.
        ParticleGroup::File { .. } => {}
    }
    Ok(())
}

/// The spheres a lattice group keeps: `count` where given (1 to the lattice's `sites`), else
/// every site.
pub(crate) fn lattice_count(
    v: &Validator,
    field: &str,
    count: Option<u32>,
    sites: u64,
) -> Result<u64> {
    match count {
        None => Ok(sites),
        Some(c) if c >= 1 && u64::from(c) <= sites => Ok(u64::from(c)),
        Some(c) => Err(v.err(
            &format!("{field}.count"),
            format!(
                "{c} spheres asked of a lattice of {sites} sites; give 1 to {sites}, or more `counts`"
            ),
        )),
    }
}

/// Diameters of `count` spheres, largest first.
pub(crate) fn sample_diameters(
    v: &Validator,
    field: &str,
    size: &SizeDistribution,
    count: u32,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<f64>> {
    let mut d: Vec<f64> = match *size {
        SizeDistribution::Mono { diameter } => {
            v.positive(&format!("{field}.diameter"), diameter, "m")?;
            vec![diameter; count as usize]
        }
        SizeDistribution::Uniform {
            min_diameter,
            max_diameter,
        } => {
            v.positive(&format!("{field}.min_diameter"), min_diameter, "m")?;
            v.positive(&format!("{field}.max_diameter"), max_diameter, "m")?;
            if max_diameter < min_diameter {
                return Err(v.err(
                    &format!("{field}.max_diameter"),
                    "is smaller than `min_diameter`".to_owned(),
                ));
            }
            (0..count)
                .map(|_| min_diameter + (max_diameter - min_diameter) * rng.random::<f64>())
                .collect()
        }
        SizeDistribution::Lognormal {
            d50,
            cu,
            min_diameter,
            max_diameter,
        } => {
            v.positive(&format!("{field}.d50"), d50, "m")?;
            if !(cu.is_finite() && cu >= 1.0) {
                return Err(v.err(
                    &format!("{field}.cu"),
                    format!("{cu} must be ≥ 1 (Cu = D60/D10)"),
                ));
            }
            let (median, sigma) = lognormal_by_mass(d50, cu);
            let lo = min_diameter.unwrap_or(median * (-3.0 * sigma).exp());
            let hi = max_diameter.unwrap_or(median * (3.0 * sigma).exp());
            let default_range = min_diameter.is_none() || max_diameter.is_none();
            if default_range && !(lo > 0.0 && hi.is_finite() && median > 0.0) {
                return Err(v.err(
                    &format!("{field}.cu"),
                    format!(
                        "{cu:e} is too wide a gradation: the default size range, the number median × e^(±3σ) with σ = ln Cu / 1.5349, leaves the numbers a computer holds; use a Cu nearer 1, or give min_diameter and max_diameter"
                    ),
                ));
            }
            v.positive(&format!("{field}.min_diameter"), lo, "m")?;
            if hi < lo {
                return Err(v.err(
                    &format!("{field}.max_diameter"),
                    "is smaller than `min_diameter`".to_owned(),
                ));
            }
            // Sizes are drawn and kept when in range: a range holding almost none of the
            // distribution would never fill the count.
            let cdf =
                |d: f64| 0.5 * libm::erfc(-(d / median).ln() / (sigma * std::f64::consts::SQRT_2));
            let held = cdf(hi) - cdf(lo);
            let enough = held >= MIN_RANGE_MASS;
            if sigma > 0.0 && !enough {
                return Err(v.err(
                    &format!("{field}.min_diameter"),
                    format!(
                        "the range [{lo:e}, {hi:e}] m holds {held:.3e} of the log-normal's spheres (number median {median:.3e} m, σ {sigma:.3}), below {MIN_RANGE_MASS}: too few to draw; move min_diameter and max_diameter towards d50 or change d50 and cu"
                    ),
                ));
            }
            if sigma == 0.0 {
                vec![d50; count as usize]
            } else {
                let dist = LogNormal::new(median.ln(), sigma)
                    .map_err(|e| v.err(field, format!("invalid log-normal: {e}")))?;
                let mut out = Vec::with_capacity(count as usize);
                while out.len() < count as usize {
                    let d: f64 = dist.sample(rng);
                    if (lo..=hi).contains(&d) {
                        out.push(d);
                    }
                }
                out
            }
        }
        SizeDistribution::Table {
            ref diameters,
            ref percent_passing,
        } => gradation_table(v, field, diameters, percent_passing, count, rng)?,
    };
    d.sort_by(|a, b| b.total_cmp(a));
    Ok(d)
}

/// Samples `count` diameters by number from a sieve curve given by mass: a size is drawn from
/// the mass distribution (inverse of the curve, linear in log d) and kept with probability
/// `(d_min / d)³`, which turns a mass fraction into a number fraction.
pub(super) fn gradation_table(
    v: &Validator,
    field: &str,
    diameters: &[f64],
    passing: &[f64],
    count: u32,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<f64>> {
    if diameters.len() < 2 || diameters.len() != passing.len() {
        return Err(v.err(
            &format!("{field}.percent_passing"),
            format!(
                "needs one entry per diameter and at least two sizes (got {} diameters, {} percentages)",
                diameters.len(),
                passing.len()
            ),
        ));
    }
    for (k, w) in diameters.windows(2).enumerate() {
        v.positive(&format!("{field}.diameters[{k}]"), w[0], "m")?;
        if w[1] <= w[0] {
            return Err(v.err(
                &format!("{field}.diameters[{}]", k + 1),
                "sizes must increase strictly".to_owned(),
            ));
        }
    }
    let first = passing[0];
    let last = passing[passing.len() - 1];
    if first != 0.0 || last != 100.0 || passing.windows(2).any(|w| w[1] < w[0]) {
        return Err(v.err(
            &format!("{field}.percent_passing"),
            "must rise from 0 at the first size to 100 at the last, never decreasing".to_owned(),
        ));
    }
    let d_min = diameters[0];
    let mut out = Vec::with_capacity(count as usize);
    while out.len() < count as usize {
        let u = 100.0 * rng.random::<f64>();
        let k = passing
            .partition_point(|&p| p <= u)
            .clamp(1, passing.len() - 1);
        let (p0, p1) = (passing[k - 1], passing[k]);
        let t = if p1 > p0 { (u - p0) / (p1 - p0) } else { 0.0 };
        let d = (diameters[k - 1].ln() + t * (diameters[k].ln() - diameters[k - 1].ln())).exp();
        if rng.random::<f64>() < (d_min / d).powi(3) {
            out.push(d);
        }
    }
    Ok(out)
}

/// Smallest share of a log-normal's spheres (by number) that a truncated size range must hold:
/// sizes outside it are drawn again, so a thousand draws per kept sphere at most.
const MIN_RANGE_MASS: f64 = 1e-3;

/// Number-median diameter and σ of ln d for a log-normal gradation given by mass.
///
/// `Cu = D60/D10 = exp(σ (z₀.₆ − z₀.₁))` with standard-normal quantiles z₀.₆ = 0.253347,
/// z₀.₁ = −1.281552. A log-normal by number with parameters (μ, σ) is log-normal by mass with
/// (μ + 3σ², σ) (Hatch–Choate relation), so the number median is `D50 e^{−3σ²}`.
pub fn lognormal_by_mass(d50: f64, cu: f64) -> (f64, f64) {
    let sigma = cu.ln() / (0.253_347_103_1 + 1.281_551_565_5);
    (d50 * (-3.0 * sigma * sigma).exp(), sigma)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn insert_random(
    v: &Validator,
    field: &str,
    diameters: &[f64],
    lo: DVec3,
    hi: DVec3,
    max_attempts: u32,
    material: usize,
    density: f64,
    rng: &mut ChaCha8Rng,
    particles: &mut Particles,
) -> Result<()> {
    let Some(&d_max) = diameters.first() else {
        return Ok(());
    };
    // Existing particles count as obstacles too: a new sphere and one of them overlap only
    // where their centres are closer than `h`.
    let h = d_max.max(2.0 * particles.max_radius());
    let mut grid = InsertionGrid::new(lo, hi, h, particles.len() + diameters.len());
    for i in 0..particles.len() {
        grid.insert(i, particles.position[i]);
    }
    let volume = (hi - lo).x * (hi - lo).y * (hi - lo).z;
    let mut solid = 0.0;
    for (k, &d) in diameters.iter().enumerate() {
        let r = 0.5 * d;
        let (a, b) = (lo + r, hi - r);
        if (0..3).any(|ax| b[ax] < a[ax]) {
            return Err(v.err(
                &format!("{field}.region"),
                format!("is smaller than a sphere of diameter {d:e} m; enlarge it"),
            ));
        }
        let mut placed = false;
        for _ in 0..max_attempts {
            let x = DVec3::new(
                a.x + (b.x - a.x) * rng.random::<f64>(),
                a.y + (b.y - a.y) * rng.random::<f64>(),
                a.z + (b.z - a.z) * rng.random::<f64>(),
            );
            let free = !grid.overlaps(x, r, particles);
            if free {
                let i = particles.push(x, r, density, material);
                grid.insert(i, x);
                solid += 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
                placed = true;
                break;
            }
        }
        if !placed {
            return Err(v.err(
                &format!("{field}.count"),
                format!(
                    "placed only {k} of {} spheres without overlap after {max_attempts} tries for the next one (solid fraction reached {:.3}); enlarge `region`, lower `count`, or raise `max_attempts`",
                    diameters.len(),
                    solid / volume
                ),
            ));
        }
    }
    Ok(())
}

/// Cells over a random group's region (grown by one reach on each side, so that every
/// sphere a new one could touch is in them), each the head of a list of the spheres inside:
/// a dense array, so that the 27 cells around a candidate are a few cache lines, not 27 hash
/// probes (a million-sphere column took minutes to place with a hash map).
struct InsertionGrid {
    origin: DVec3,
    edge: f64,
    dims: [usize; 3],
    /// First sphere of each cell, `NONE` where empty.
    head: Vec<u32>,
    /// Next sphere in the same cell, by sphere index.
    next: Vec<u32>,
}

impl InsertionGrid {
    const NONE: u32 = u32::MAX;

    /// A grid of cells at least `reach` wide over `lo..hi` grown by `reach`, with at most
    /// about four cells per sphere (`spheres`) plus 2¹⁶: a sparse or flat region gets wider
    /// cells rather than an array out of proportion to the spheres it holds.
    fn new(lo: DVec3, hi: DVec3, reach: f64, spheres: usize) -> Self {
        let origin = lo - reach;
        let extent = (hi - lo) + 2.0 * reach;
        let most = (4 * spheres + (1 << 16)) as f64;
        let count = |edge: f64| {
            let d = (extent / edge).ceil().max(DVec3::ONE);
            (d, d.x * d.y * d.z)
        };
        // A region out of f64's range makes the extent infinite: the edge then grows to
        // infinity too and the grid is one cell.
        let mut edge = reach;
        while edge.is_finite() && {
            let cells = count(edge).1;
            cells > most || cells.is_nan()
        } {
            edge *= 1.25;
        }
        let d = count(edge).0;
        let dims = [d.x as usize, d.y as usize, d.z as usize];
        InsertionGrid {
            origin,
            edge,
            dims,
            head: vec![Self::NONE; dims[0] * dims[1] * dims[2]],
            next: Vec::new(),
        }
    }

    /// The cell holding `x`, if it is inside the grid.
    fn cell(&self, x: DVec3) -> Option<[usize; 3]> {
        let c = ((x - self.origin) / self.edge).floor();
        let inside = |v: f64, n: usize| v >= 0.0 && v < n as f64;
        (inside(c.x, self.dims[0]) && inside(c.y, self.dims[1]) && inside(c.z, self.dims[2]))
            .then_some([c.x as usize, c.y as usize, c.z as usize])
    }

    fn index(&self, c: [usize; 3]) -> usize {
        (c[2] * self.dims[1] + c[1]) * self.dims[0] + c[0]
    }

    /// Lists sphere `i` at `x`; a sphere outside the grid is out of reach of the region.
    fn insert(&mut self, i: usize, x: DVec3) {
        if self.next.len() <= i {
            self.next.resize(i + 1, Self::NONE);
        }
        if let Some(c) = self.cell(x) {
            let k = self.index(c);
            self.next[i] = self.head[k];
            self.head[k] = i as u32;
        }
    }

    /// Whether a sphere of radius `r` at `x` (inside the region) overlaps a listed one. The
    /// candidate's own cell first: most candidates of a dense column are refused there.
    fn overlaps(&self, x: DVec3, r: f64, particles: &Particles) -> bool {
        let Some(c) = self.cell(x) else {
            return false;
        };
        let in_cell = |k: usize| {
            let mut j = self.head[k];
            while j != Self::NONE {
                let reach = r + particles.radius[j as usize];
                if particles.position[j as usize].distance_squared(x) < reach * reach {
                    return true;
                }
                j = self.next[j as usize];
            }
            false
        };
        let own = self.index(c);
        if in_cell(own) {
            return true;
        }
        let span = |a: usize| c[a].saturating_sub(1)..=(c[a] + 1).min(self.dims[a] - 1);
        span(2).any(|z| {
            span(1).any(|y| {
                span(0).any(|xc| {
                    let k = self.index([xc, y, z]);
                    k != own && in_cell(k)
                })
            })
        })
    }
}

/// The path of a `kind = "file"` group (empty for the others).
pub(super) fn group_path(group: &ParticleGroup) -> &str {
    match group {
        ParticleGroup::File { path, .. } => path,
        _ => "",
    }
}

/// The `format` of a `kind = "file"` group, if it gives one.
pub(super) fn group_format(group: &ParticleGroup) -> Option<crate::packing::PackingFormat> {
    match group {
        ParticleGroup::File { format, .. } => *format,
        _ => None,
    }
}

/// Places the spheres of a `kind = "file"` group, read into `packing`: checked against the
/// walls and `max_overlap`, each of the material its file gives (a LAMMPS type through
/// `types`, a wgdem index or name) or else the group's.
#[allow(clippy::too_many_arguments)]
pub(super) fn add_file_group(
    v: &Validator,
    field: &str,
    group: &ParticleGroup,
    packing: &crate::packing::Packing,
    walls: &[Wall],
    material_names: &[String],
    lookup: &dyn Fn(String, &str) -> Result<usize>,
    density_of: &dyn Fn(usize, &str) -> Result<f64>,
    particles: &mut Particles,
    source_id: &mut Vec<i64>,
) -> Result<()> {
    use crate::packing::MaterialRef;
    let n_materials = material_names.len();
    let material_name = |m: usize| material_names[m].as_str();
    let ParticleGroup::File {
        material,
        types,
        max_overlap,
        ..
    } = group
    else {
        return Ok(());
    };
    if !(max_overlap.is_finite() && *max_overlap >= 0.0) {
        return Err(v.err(
            &format!("{field}.max_overlap"),
            format!("{max_overlap} must be ≥ 0 (a fraction of the smaller radius)"),
        ));
    }
    packing.check(walls, *max_overlap, &format!("{field}.path"))?;
    let group_material = material
        .as_deref()
        .map(|m| lookup(format!("{field}.material"), m))
        .transpose()?;
    // The group's material, for a sphere that has none of its own.
    let default = |k: usize| {
        group_material.ok_or_else(|| {
            v.err(
                &format!("{field}.material"),
                format!(
                    "{}: sphere {} has no material of its own ({}); give `material`, the group's",
                    packing.source,
                    k + 1,
                    if packing.lammps_types {
                        "no `types` to map its atom type"
                    } else {
                        "no material column"
                    }
                ),
            )
        })
    };
    let types: Vec<usize> = types
        .iter()
        .enumerate()
        .map(|(k, name)| lookup(format!("{field}.types[{k}]"), name))
        .collect::<Result<_>>()?;
    for (k, sphere) in packing.spheres.iter().enumerate() {
        let m = match &sphere.material {
            MaterialRef::Default => default(k)?,
            MaterialRef::Index(_) if packing.lammps_types && types.is_empty() => default(k)?,
            MaterialRef::Index(t) if packing.lammps_types => {
                *types.get((*t as usize).wrapping_sub(1)).ok_or_else(|| {
                    v.err(
                        &format!("{field}.types"),
                        format!(
                            "{}: sphere {} has atom type {t}, but `types` names {} types; name a material for each",
                            packing.source,
                            k + 1,
                            types.len()
                        ),
                    )
                })?
            }
            MaterialRef::Index(i) if (*i as usize) < n_materials => *i as usize,
            MaterialRef::Index(i) => {
                return Err(v.err(
                    &format!("{field}.path"),
                    format!(
                        "{}: sphere {} has material index {i}, but the scene has {n_materials} materials (indices from 0)",
                        packing.source,
                        k + 1
                    ),
                ));
            }
            MaterialRef::Name(name) => lookup(format!("{field}.path"), name)?,
        };
        let density = density_of(m, field)?;
        if let Some(given) = sphere.density
            && (given - density).abs() > 1e-6 * density
        {
            return Err(v.err(
                &format!("{field}.path"),
                format!(
                    "{}: sphere {} has density {given} kg/m³ but its material \"{}\" has {density}; wgdem takes a sphere's density from its material: give that material density = {given}, or map the atom types to materials of the file's densities with `types`",
                    packing.source,
                    k + 1,
                    material_name(m)
                ),
            ));
        }
        let i = particles.push(sphere.position, sphere.radius, density, m);
        source_id.resize(i, -1);
        source_id.push(sphere.id.map_or(-1, |id| i64::try_from(id).unwrap_or(-1)));
        particles.velocity[i] = sphere.velocity;
        particles.angular_velocity[i] = sphere.angular_velocity;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(g: &InsertionGrid) -> usize {
        g.dims.iter().product()
    }

    /// The grid finds an overlap exactly where a search over every sphere does: spheres of
    /// three sizes, some outside the region (obstacles of another group), candidates
    /// anywhere in it.
    #[test]
    fn the_grid_finds_the_overlaps_a_full_search_finds() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (lo, hi) = (DVec3::new(-0.1, 0.0, 0.2), DVec3::new(0.1, 0.05, 0.3));
        let mut particles = Particles::default();
        for k in 0..800 {
            let r = [0.002, 0.005, 0.008][k % 3];
            let u = DVec3::new(rng.random(), rng.random(), rng.random());
            // Centres up to 2 cm outside the region on every side.
            let x = (lo - 0.02) + u * ((hi - lo) + 0.04);
            particles.push(x, r, 2500.0, 0);
        }
        let h = 2.0 * particles.max_radius();
        let mut grid = InsertionGrid::new(lo, hi, h, particles.len());
        for i in 0..particles.len() {
            grid.insert(i, particles.position[i]);
        }
        let (mut hits, mut misses) = (0, 0);
        for _ in 0..20000 {
            let r = 0.004;
            let u = DVec3::new(rng.random(), rng.random(), rng.random());
            let x = lo + u * (hi - lo);
            let full = (0..particles.len())
                .any(|j| particles.position[j].distance(x) < r + particles.radius[j]);
            assert_eq!(grid.overlaps(x, r, &particles), full, "at {x}");
            if full { hits += 1 } else { misses += 1 }
        }
        assert!(
            hits > 1000 && misses > 1000,
            "{hits} overlaps, {misses} free"
        );
    }

    /// The cell array stays in proportion to the spheres, also for a flat, a sparse and an
    /// unbounded region (extents near and past f64's range give one cell, not a hang).
    #[test]
    fn the_grid_stays_in_proportion_at_the_extremes() {
        let most = |n: usize| 4 * n + (1 << 16);
        let flat = InsertionGrid::new(DVec3::ZERO, DVec3::new(1e3, 1e3, 1e-3), 1e-3, 1000);
        assert!(cells(&flat) <= most(1000), "{:?}", flat.dims);
        let fine = InsertionGrid::new(DVec3::ZERO, DVec3::splat(0.1), 1e-3, 1_000_000);
        assert!(fine.edge == 1e-3 && cells(&fine) <= most(1_000_000));
        for extent in [1e300, f64::MAX, f64::INFINITY] {
            let g = InsertionGrid::new(DVec3::splat(-extent), DVec3::splat(extent), 1e-3, 10);
            assert!(cells(&g) <= most(10), "{extent}: {:?}", g.dims);
        }
        let huge = InsertionGrid::new(DVec3::splat(-f64::MAX), DVec3::splat(f64::MAX), 1e-3, 10);
        assert_eq!(huge.dims, [1, 1, 1]);
    }
}
