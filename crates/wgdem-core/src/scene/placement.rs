//! Where the spheres start: overlaps between them and with the walls refused beyond
//! `allow_overlap`, and the periodic cell they are moved into (`[cell]`).

use super::*;

/// `simulation.allow_overlap`, or the largest `max_overlap` of the packing files (a fraction of
/// the smaller radius).
fn allowed_overlap(v: &Validator, config: &SceneConfig) -> Result<f64> {
    let allow = config.simulation.allow_overlap.unwrap_or_else(|| {
        config
            .particles
            .iter()
            .filter_map(|g| match g {
                ParticleGroup::File { max_overlap, .. } => Some(*max_overlap),
                _ => None,
            })
            .fold(crate::packing::DEFAULT_MAX_OVERLAP, f64::max)
    });
    if !(allow.is_finite() && allow >= 0.0) {
        return Err(v.err(
            "simulation.allow_overlap",
            format!("{allow} must be ≥ 0 (a fraction of the smaller radius)"),
        ));
    }
    Ok(allow)
}

/// Refuses spheres that start overlapping each other or a wall by more than
/// `simulation.allow_overlap` (default: what the file groups allow among their own spheres, at
/// least 0.1; a fraction of the smaller radius, of the sphere's against a wall), the worst
/// named.
pub(super) fn check_overlaps(
    v: &Validator,
    config: &SceneConfig,
    particles: &Particles,
    walls: &[Wall],
) -> Result<()> {
    let allow = allowed_overlap(v, config)?;
    // Far from the origin f64 cannot tell neighbours apart (at 1e300 m a lattice collapses
    // onto itself, which would be reported as overlaps): refused by its distance instead.
    let smallest = particles
        .radius
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    if let Some(i) = (0..particles.len()).find(|&i| {
        particles.position[i].abs().max_element() > crate::guard::MAX_DISTANCE_IN_RADII * smallest
    }) {
        let x = particles.position[i];
        return Err(v.err(
            "particles",
            format!(
                "sphere {i} (id) is at ({:e}, {:e}, {:e}) m, farther from the origin than {:e} of the smallest radius ({smallest:e} m), where the engines cannot resolve its contacts; move the scene (spheres and walls) near the origin",
                x.x,
                x.y,
                x.z,
                crate::guard::MAX_DISTANCE_IN_RADII
            ),
        ));
    }
    // Against the walls as between spheres: a sphere placed deep in a wall is shot away.
    let mut into_walls = 0usize;
    let mut worst: Option<(f64, usize, usize)> = None;
    for i in 0..particles.len() {
        let (x, r) = (particles.position[i], particles.radius[i]);
        for (k, w) in walls.iter().enumerate() {
            let Some(c) = w.contact(x, r) else { continue };
            let fraction = c.overlap / r;
            if fraction > allow {
                into_walls += 1;
                if worst.is_none_or(|(f, ..)| fraction > f) {
                    worst = Some((fraction, i, k));
                }
            }
        }
    }
    if let Some((fraction, i, k)) = worst {
        return Err(v.err(
            "simulation.allow_overlap",
            format!(
                "{into_walls} sphere(s) start overlapping a wall by more than {allow} of their radius; the worst, sphere {i} (id), overlaps wall \"{}\" by {fraction:.3} of it: move the spheres or the wall apart, or raise allow_overlap if that is meant",
                walls[k].name
            ),
        ));
    }
    if let Some(w) = crate::packing::worst_overlap(&particles.position, &particles.radius, allow) {
        return Err(v.err(
            "simulation.allow_overlap",
            format!(
                "{} pair(s) of spheres start overlapping by more than {allow} of the smaller radius; the worst, spheres {} and {} (ids), by {:.3} of it: place them apart (a lattice's spacing at least a diameter), or raise allow_overlap if that is meant",
                w.count, w.pair.0, w.pair.1, w.fraction
            ),
        ));
    }
    Ok(())
}

/// Makes `sim` periodic in `[cell]`: the cell checked (its edges, its width against the
/// neighbour reach), the spheres moved into it, and pairs overlapping across its faces held
/// to `allow_overlap` as pairs inside are.
pub(super) fn build_cell(
    v: &Validator,
    config: &SceneConfig,
    cell: &CellConfig,
    sim: &mut Simulation,
) -> Result<()> {
    let rows = cell.velocity_gradient.map(DVec3::from_array);
    let l = glam::DMat3::from_cols(rows[0], rows[1], rows[2]).transpose();
    let built = crate::cell::PeriodicCell::new(
        cell.edges.map(DVec3::from_array),
        DVec3::from_array(cell.origin),
        l,
    )
    .map_err(|e| {
        let field = if e.contains("velocity gradient") {
            "cell.velocity_gradient"
        } else if e.contains("origin") {
            "cell.origin"
        } else {
            "cell.edges"
        };
        v.err(field, e)
    })?;
    sim.set_cell(Some(built))
        .map_err(|e| v.err("cell.edges", e))?;
    let allow = allowed_overlap(v, config)?;
    let p = &sim.particles;
    if let Some(w) = crate::packing::worst_overlap_in(&p.position, &p.radius, allow, Some(&built)) {
        return Err(v.err(
            "simulation.allow_overlap",
            format!(
                "{} pair(s) of spheres start overlapping by more than {allow} of the smaller radius in the periodic cell (through its faces too); the worst, spheres {} and {} (ids), by {:.3} of it: place them apart, or raise allow_overlap if that is meant",
                w.count, w.pair.0, w.pair.1, w.fraction
            ),
        ));
    }
    Ok(())
}
