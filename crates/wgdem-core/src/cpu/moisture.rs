//! Moisture events of hill contacts (Potyondy memo, Table 6): liquid bridges made and broken
//! at given times. GPU twin: `shaders/moisture.wgsl`.

use super::*;

impl Simulation {
    /// The moisture events in time order, and how many of them the run has applied.
    pub fn moisture_events(&self) -> (&[MoistureEvent], usize) {
        (&self.moisture_events, self.events_applied)
    }

    /// Records that the first `n` moisture events have been applied (by another backend that
    /// advanced this state).
    pub fn set_moisture_events_applied(&mut self, n: usize) {
        self.events_applied = n.min(self.moisture_events.len());
    }

    /// Sets the moisture events of hill contacts (applied in time order as the run passes them).
    pub fn set_moisture_events(&mut self, mut events: Vec<MoistureEvent>) {
        events.sort_by(|a, b| a.time.total_cmp(&b.time));
        self.moisture_events = events;
        self.events_applied = 0;
    }

    /// `make_wet(gap)` on every hill contact of the neighbour list whose gap is at most `gap`
    /// (new contacts are created for such pairs), or `make_dry` (memo Table 6).
    pub fn apply_moisture(&mut self, wet: bool, gap: f64) {
        self.update_neighbours();
        let p = &self.particles;
        for slot in &mut self.neighbours {
            if !matches!(slot.params, ContactKind::Hill(_)) {
                continue;
            }
            let (i, j) = (slot.i as usize, slot.j as usize);
            let g = p.position[i].distance(p.position[j]) - p.radius[i] - p.radius[j];
            let state = match &mut slot.history {
                SlotHistory::Hill(s) => s,
                other => {
                    *other = SlotHistory::Hill(HillState::default());
                    match other {
                        SlotHistory::Hill(s) => s,
                        _ => continue,
                    }
                }
            };
            if !wet {
                state.moisture = Moisture::Dry;
            } else if g <= gap {
                state.moisture = Moisture::Wet;
            }
        }
    }
}
