//! The CPU reference in a periodic cell ([`crate::cell`]): spheres kept inside it, pairs
//! through their nearest image, the affine field of a deforming cell, and the cell's stress.
//! GPU twin: `wgdem-gpu`'s engine/cell.rs, with the kernels' periodic branches.

use super::*;

impl Simulation {
    /// Makes the scene periodic in `cell` (or not, with `None`): every sphere is moved into
    /// the cell by whole edges (where its unwrapped positions start), velocities are read as
    /// fluctuations about the cell's affine field, and the next step rebuilds the neighbour
    /// list. Refused, with the sizes, where the cell is not wider than twice the
    /// neighbour reach ([`PeriodicCell::check_reach`]).
    pub fn set_cell(&mut self, cell: Option<PeriodicCell>) -> Result<(), String> {
        let Some(cell) = cell else {
            self.periodic = None;
            self.built_at.clear();
            return Ok(());
        };
        cell.check_reach(self.neighbour_reach())?;
        let p = &mut self.particles;
        for x in &mut p.position {
            *x = cell.wrap(*x).0;
        }
        let images = vec![[0; 3]; p.len()];
        self.periodic = Some(Periodic {
            cell,
            built: cell.matrix(),
            images,
            contact_stress: DMat3::ZERO,
            failure: None,
        });
        self.built_at.clear();
        Ok(())
    }

    /// The periodic cell, where the scene has one.
    pub fn cell(&self) -> Option<&PeriodicCell> {
        self.periodic.as_ref().map(|p| &p.cell)
    }

    /// The periodic cell's part of the state (cell, images, last contact stress), where the
    /// scene has one.
    pub fn periodic(&self) -> Option<&Periodic> {
        self.periodic.as_ref()
    }

    /// The same, for an engine that takes the steps elsewhere and copies its state back (the
    /// GPU engine): the cell it reached, the images of its wraps and its contact stress.
    pub fn periodic_mut(&mut self) -> Option<&mut Periodic> {
        self.periodic.as_mut()
    }

    /// Sets the cell's velocity gradient `L` (1/s) from the next step on (a servo's output).
    pub fn set_velocity_gradient(&mut self, l: DMat3) -> Result<(), String> {
        match &mut self.periodic {
            Some(p) => p.cell.set_velocity_gradient(l),
            None => Err("the scene has no periodic cell ([cell])".to_owned()),
        }
    }

    /// Why the periodic cell stopped, once it has: it became narrower than twice the neighbour
    /// reach, or flat. The cell then no longer deforms, and [`crate::guard::check`] stops the run.
    pub fn cell_failure(&self) -> Option<&str> {
        self.periodic.as_ref()?.failure.as_deref()
    }

    /// Sphere `i`'s position unwrapped: where it would be had it not been moved back into the
    /// cell since the scene started, `x + H k` (m); its position where the scene has no cell.
    pub fn unwrapped_position(&self, i: usize) -> DVec3 {
        let x = self.particles.position[i];
        match &self.periodic {
            Some(p) => {
                let k = p.images[i];
                x + p.cell.matrix() * DVec3::new(k[0] as f64, k[1] as f64, k[2] as f64)
            }
            None => x,
        }
    }

    /// The cell's average stress in the last step (Pa, compression positive), Love–Weber's
    /// `σ_ij = (1/V) (Σ_c f_i l_j + Σ_p m v'_i v'_j)`: over contacts, the force on a pair's
    /// second sphere and the branch vector from its first sphere's centre to the second's
    /// (nearest image), or a wall's force on a sphere and the vector from the contact point to
    /// the sphere's centre, with the volume of the cell they were evaluated in (the step's
    /// start); over spheres, their velocities relative to the affine field, with the volume
    /// now. The full tensor, not symmetrised (its antisymmetric part is the unbalanced moment,
    /// zero at equilibrium). `None` without a cell.
    pub fn stress(&self) -> Option<DMat3> {
        let periodic = self.periodic.as_ref()?;
        let p = &self.particles;
        let kinetic = (0..p.len()).fold(DMat3::ZERO, |sum, i| {
            let v = p.velocity[i];
            sum + outer(v * p.mass[i], v)
        });
        Some(periodic.contact_stress + kinetic * (1.0 / periodic.cell.volume()))
    }

    /// How far the neighbour list reaches between two centres (m): the largest diameter plus
    /// the skin and any liquid bridge's reach.
    pub(super) fn neighbour_reach(&self) -> f64 {
        let r_max = self.particles.radius.iter().copied().fold(0.0, f64::max);
        2.0 * r_max + self.skin + self.interaction_range
    }

    /// The pairs within `margin` of touching: through their nearest images in a periodic cell.
    pub(super) fn candidate_pairs(&self, margin: f64) -> Vec<(u32, u32)> {
        let p = &self.particles;
        match &self.periodic {
            Some(c) => periodic_pairs_within(&p.position, &p.radius, margin, &c.cell),
            None => pairs_within(&p.position, &p.radius, margin),
        }
    }

    /// After the spheres moved: the cell advanced by `dt` (`H ← exp(L Δt) H`, the map the
    /// spheres' affine motion followed), then each sphere that left it moved back in by whole
    /// edges. A cell that would turn flat stops instead, with the reason kept for
    /// [`Simulation::cell_failure`].
    pub(super) fn advance_cell(&mut self, dt: f64) {
        let Some(periodic) = &mut self.periodic else {
            return;
        };
        if periodic.failure.is_none() && periodic.cell.velocity_gradient() != DMat3::ZERO {
            match periodic.cell.advanced(dt) {
                Ok(next) => periodic.cell = next,
                Err(e) => periodic.failure = Some(e),
            }
        }
        let cell = &periodic.cell;
        for (x, image) in self.particles.position.iter_mut().zip(&mut periodic.images) {
            let (inside, k) = cell.wrap(*x);
            if k != [0; 3] {
                *x = inside;
                // Saturating: a sphere thrown out by a blow-up (which the guard then reports)
                // must not overflow its count.
                for (a, b) in image.iter_mut().zip(k) {
                    *a = a.saturating_add(b);
                }
            }
        }
    }
}

/// `a ⊗ b`: the matrix of entries `a_i b_j`.
pub(super) fn outer(a: DVec3, b: DVec3) -> DMat3 {
    DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}
