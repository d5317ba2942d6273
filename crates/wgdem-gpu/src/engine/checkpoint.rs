//! Checkpoints: every buffer a batch changes, bit for bit, with the host's counters.

use glam::DVec3;
use wgdem_core::cpu::{Simulation, StepStats};

use super::{GpuEngine, GpuOptions, WallReadout};
use crate::context::GpuError;

/// Host-side counters and the state buffers of an engine, bit for bit (a checkpoint).
#[derive(serde::Serialize, serde::Deserialize)]
struct EngineSnapshot {
    pub(super) slots: u32,
    pub(super) wall_slots: u32,
    pub(super) wall_rows: u32,
    pub(super) steps: u64,
    pub(super) time: f64,
    pub(super) start_steps: u64,
    pub(super) start_time: f64,
    pub(super) next_reorder: u64,
    pub(super) last_walls: Vec<(DVec3, DVec3)>,
    pub(super) last_stats: StepStats,
    pub(super) events_applied: usize,
    pub(super) buffers: Vec<Vec<u8>>,
}

impl GpuEngine {
    /// Everything a batch changes, bit for bit, with the host's counters: restoring it into an
    /// engine built for the same scene continues exactly as this one would.
    pub fn save_state(&self) -> Result<Vec<u8>, GpuError> {
        let mut buffers = Vec::new();
        for b in self.mutable() {
            buffers.push(self.read::<u8>(b, b.size() as usize)?);
        }
        let snapshot = EngineSnapshot {
            slots: self.shape.params.slots,
            wall_slots: self.shape.params.wall_slots,
            wall_rows: self.shape.wall_rows,
            steps: self.steps,
            time: self.time,
            start_steps: self.schedule.start_steps,
            start_time: self.schedule.start_time,
            next_reorder: self.schedule.next_reorder,
            last_walls: self.stream.last.walls.clone(),
            last_stats: self.stream.last.stats,
            events_applied: self.schedule.events_applied,
            buffers,
        };
        postcard::to_allocvec(&snapshot).map_err(|e| GpuError::Readback(e.to_string()))
    }

    /// An engine for `sim` continuing from [`GpuEngine::save_state`] output (the tables sized
    /// as they were when it was saved).
    pub fn restore_state(&self, sim: &Simulation, state: &[u8]) -> Result<Self, GpuError> {
        let bad = |what: String| GpuError::Checkpoint(what);
        let snap: EngineSnapshot = postcard::from_bytes(state).map_err(|e| bad(e.to_string()))?;
        let options = GpuOptions {
            slots: snap.slots,
            wall_slots: snap.wall_slots,
            wall_rows: snap.wall_rows,
            ..self.options
        };
        let mut engine = Self::new(&self.device, &self.queue, sim, options)?;
        let targets = engine.mutable();
        if targets.len() != snap.buffers.len() {
            return Err(bad(format!(
                "{} state buffers saved, {} expected",
                snap.buffers.len(),
                targets.len()
            )));
        }
        for (k, (b, bytes)) in targets.iter().zip(&snap.buffers).enumerate() {
            if b.size() != bytes.len() as u64 {
                return Err(bad(format!(
                    "state buffer {k} holds {} bytes, {} saved",
                    b.size(),
                    bytes.len()
                )));
            }
            engine.queue.write_buffer(b, 0, bytes);
        }
        engine.steps = snap.steps;
        engine.time = snap.time;
        engine.schedule.start_steps = snap.start_steps;
        engine.schedule.start_time = snap.start_time;
        engine.schedule.next_reorder = snap.next_reorder;
        engine.schedule.events_applied = snap.events_applied;
        engine.stream.last = WallReadout {
            steps: snap.steps,
            time: snap.time,
            walls: snap.last_walls,
            stats: snap.last_stats,
            cell_sums: None,
        };
        Ok(engine)
    }

    /// Buffers a batch changes: the state a checkpoint holds.
    pub(super) fn mutable(&self) -> Vec<&wgpu::Buffer> {
        let b = &self.buffers;
        let mut out = vec![
            &b.pos,
            &b.vel,
            &b.orientation,
            &b.pred,
            &b.fine,
            &b.walls,
            &b.wall_slots,
            &b.wall_mask,
            &b.wall_row,
            &b.wall_free,
            &b.wall_alloc,
            &b.counts,
            &b.built_at,
            &b.walls_built,
            &b.rebuild_state,
            &b.ids,
            &b.material,
            &b.work,
        ];
        out.extend(b.chunks.iter().map(|c| &c.slots));
        // The links of the last build (the lists are not rebuilt on restoring).
        out.extend(b.chunks.iter().map(|c| &c.link));
        if self.cell.is_some() {
            // The cell of the last build (the table is written again before each run) and
            // the wraps' images.
            out.extend([&b.cell, &b.images]);
        }
        out
    }
}
