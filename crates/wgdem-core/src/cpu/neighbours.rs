//! The neighbour list: pairs within the skin, rebuilt when some particle has moved half of it,
//! each new slot taking the history of the old slot of the same stable ids. GPU twin:
//! `shaders/neighbours.wgsl` (with `hash`, `buckets`, `rebuild`, and `integrate`, which records
//! the positions of the build).

use super::*;

impl Simulation {
    /// Rebuilds the neighbour list if some particle moved more than half the skin. In a
    /// deforming periodic cell a pair across a face also moves apart by the change of the cell's
    /// edges since the build (at most the sum of their lengths' changes, `Σ |ΔH e_k|`), which
    /// is taken from the skin first; a cell grown narrower than twice the reach by then is
    /// reported ([`Simulation::cell_failure`]).
    pub(super) fn update_neighbours(&mut self) {
        let drift = self.periodic.as_ref().map_or(0.0, |c| {
            let (now, built) = (c.cell.matrix(), c.built);
            (0..3)
                .map(|k| (now.col(k) - built.col(k)).length())
                .sum::<f64>()
        });
        let half = 0.5 * (self.skin - drift);
        let p = &self.particles;
        let limit = half * half;
        let stale = (self.periodic.is_some() && half <= 0.0)
            || self.built_at.len() != p.len()
            || p.position
                .iter()
                .zip(&self.built_at)
                .any(|(x, x0)| x.distance_squared(*x0) > limit);
        if !stale {
            return;
        }
        let mut carried: HashMap<(u32, u32), SlotHistory> = std::mem::take(&mut self.neighbours)
            .into_iter()
            .filter(|s| !s.history.is_blank())
            .map(|s| ((s.i, s.j), s.history))
            .collect();
        let margin = self.skin + self.interaction_range;
        if let Some(c) = &mut self.periodic {
            c.built = c.cell.matrix();
            if c.failure.is_none() {
                let reach = 2.0 * p.radius.iter().copied().fold(0.0, f64::max) + margin;
                c.failure = c.cell.check_reach(reach).err();
            }
        }
        self.neighbours = self
            .candidate_pairs(margin)
            .into_iter()
            .map(|(i, j)| {
                let params = self.slot_params(i as usize, j as usize);
                let history = carried
                    .remove(&(i, j))
                    .unwrap_or_else(|| SlotHistory::fresh(&params));
                PairSlot {
                    i,
                    j,
                    params,
                    history,
                }
            })
            .collect();
        self.built_at.clone_from(&p.position);
        self.neighbour_builds += 1;
    }
}
