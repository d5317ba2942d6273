//! The neighbour list: pairs within the skin, rebuilt when some particle has moved half of it,
//! each new slot taking the history of the old slot of the same stable ids. GPU twin:
//! `shaders/neighbours.wgsl` (with `hash`, `buckets`, `rebuild`, and `integrate`, which records
//! the positions of the build).

use super::*;

impl Simulation {
    /// Rebuilds the neighbour list if some particle moved more than half the skin.
    pub(super) fn update_neighbours(&mut self) {
        let p = &self.particles;
        let limit = 0.25 * self.skin * self.skin;
        let stale = self.built_at.len() != p.len()
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
        self.neighbours = pairs_within(&p.position, &p.radius, margin)
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
