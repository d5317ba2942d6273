//! Overflow, regrowth and resumption: a table that overflowed in a step is regrown to what
//! was needed, and the batch is finished from that step with the results a large-enough
//! table gives.

use super::GpuEngine;
use super::state::{
    SLOT_HEADROOM, check_table, dispatch_args, empty_wall_slots, init, slot_chunks, wall_words,
};
use crate::context::GpuError;
use crate::layout::{Counters, WallAlloc};
use crate::shared;

/// Bit 2 of the counters' flags: no table overflowed, the engine broke its own invariant.
pub(super) fn check_defect(counters: &Counters) -> Result<(), GpuError> {
    if counters.failed & shared::failed::DEFECT != 0 {
        return Err(GpuError::Defect(
            "a particle touched a wall that was beyond its skin at the last neighbour build, or had no row of wall slots".to_owned(),
        ));
    }
    Ok(())
}

impl GpuEngine {
    /// Regrows the tables that overflowed in the step at `self.steps` (`counters.failed`),
    /// which committed nothing, and has that step begin its rebuild again.
    pub(super) fn regrow_overflowed(&mut self, counters: &Counters) -> Result<(), GpuError> {
        if counters.failed & shared::failed::NEIGHBOURS != 0 {
            self.regrow(counters.max_neighbours)?;
        }
        if counters.failed & shared::failed::WALL_SLOTS != 0 {
            self.regrow_wall_slots(counters.max_wall_contacts)?;
        }
        if counters.failed & shared::failed::WALL_ROWS != 0 {
            self.regrow_wall_rows()?;
        }
        // The failed step had begun a rebuild; it begins it again.
        self.queue
            .write_buffer(&self.buffers.rebuild_state, 0, bytemuck::bytes_of(&1u32));
        self.stream.rebuild_first = true;
        self.clear_counters();
        Ok(())
    }

    /// Regrows the neighbour slots to hold `needed` partners per particle and
    /// [`SLOT_HEADROOM`] more, keeping the current lists and their history. Every particle holds
    /// that many slots, so the table grows by what the longest list needs, not by a factor:
    /// the longest list of a packing grows by a few partners at a time, and a factor of 1.5
    /// would turn 17 slots (272 B per particle) into 25.
    pub(super) fn regrow(&mut self, needed: u32) -> Result<(), GpuError> {
        let old_k = self.shape.params.slots as usize;
        let new_k = (needed as usize + SLOT_HEADROOM as usize).max(old_k + 1);
        let n = self.shape.params.n as usize;
        let counts: Vec<u32> = self.read(&self.buffers.counts, n)?;
        let slots = self.read_slots()?;
        let w = self.shape.slot_words;
        let mut relaid = vec![0u32; n * new_k * w];
        for i in 0..n {
            let c = (counts[i] as usize).min(old_k);
            relaid[i * new_k * w..(i * new_k + c) * w]
                .copy_from_slice(&slots[i * old_k * w..(i * old_k + c) * w]);
        }
        log::debug!(
            "neighbour table dem.contact_history: capacity {old_k} per particle, a particle needed {needed}; regrown to {new_k}, the batch continues from the step that needed it"
        );
        self.buffers.chunks = slot_chunks(
            &self.device,
            n as u32,
            new_k as u32,
            self.shape.slot_words,
            Some(&relaid),
            (self.options)
                .wants_pairs_once(self.shape.slot_kind, self.device.adapter_info().device_type),
        )?;
        self.buffers.dispatch_args = dispatch_args(&self.device, self.buffers.chunks.len());
        self.shape.params.chunk_particles = self.buffers.chunks[0].count;
        self.shape.params.chunks = self.buffers.chunks.len() as u32;
        self.shape.params.slots = new_k as u32;
        // The list build's private arrays must hold the new lists: where they do not, the
        // kernels are made again (only the list build's source changes).
        let capacity = crate::shaders::neighbour_slots_for(new_k as u32);
        if capacity != self.pipelines.spec.slots {
            self.pipelines.spec.slots = capacity;
            self.remake_kernels();
        }
        self.tables_resized();
        Ok(())
    }

    /// Regrows each row of wall slots to hold `needed` walls at once and one more, keeping
    /// their history where it was (a wall's slot is its rank among the particle's walls within
    /// the skin). One more, not twice as many: every row of the table holds that many slots,
    /// and the walls a particle can have within its skin are few (at most the scene's walls,
    /// which also bounds the number of regrowths).
    pub(super) fn regrow_wall_slots(&mut self, needed: u32) -> Result<(), GpuError> {
        let rows = self.shape.wall_rows as usize;
        let old = self.shape.params.wall_slots as usize;
        let new = (needed as usize + 1)
            .max(old + 1)
            .min(self.shape.params.n_walls as usize);
        check_table(
            &self.device,
            "dem.wall_history",
            (rows * new * 4 * wall_words(self.shape.slot_words)) as u64,
            &format!(
                "capacity {old} walls per particle was full, a particle had {needed} within its skin; regrowing to {new} × {rows} rows × {} B",
                4 * wall_words(self.shape.slot_words)
            ),
        )?;
        let w = wall_words(self.shape.slot_words);
        let slots: Vec<u32> = self.read(&self.buffers.wall_slots, rows * old * w)?;
        let mut relaid = empty_wall_slots(rows * new, w);
        for r in 0..rows {
            relaid[r * new * w..(r * new + old) * w]
                .copy_from_slice(&slots[r * old * w..(r + 1) * old * w]);
        }
        log::debug!(
            "wall table dem.wall_history: capacity {old} per particle, a particle had {needed} walls within its skin; regrown to {new}, the batch continues from the step that needed it"
        );
        self.buffers.wall_slots = init(&self.device, "dem.wall_history", &relaid);
        self.shape.params.wall_slots = new as u32;
        self.tables_resized();
        Ok(())
    }

    /// Regrows the wall table to hold more rows than the `needed` that particles near a wall
    /// asked for, keeping every row, its holder and the free stack.
    pub(super) fn regrow_wall_rows(&mut self) -> Result<(), GpuError> {
        let old = self.shape.wall_rows as usize;
        let WallAlloc { top, next, .. } = self.read::<WallAlloc>(&self.buffers.wall_alloc, 1)?[0];
        let needed = next as usize;
        let new = needed
            .max(old * 3 / 2)
            .max(old + 64)
            .min(self.shape.params.n as usize)
            .max(old + 1);
        let w = wall_words(self.shape.slot_words);
        let ws = self.shape.params.wall_slots as usize;
        check_table(
            &self.device,
            "dem.wall_history",
            (new * ws * 4 * w) as u64,
            &format!(
                "{old} rows of wall slots were full, particles near a wall needed {needed}; regrowing to {new} rows × {ws} wall slots × {} B",
                4 * w
            ),
        )?;
        let mut slots: Vec<u32> = self.read(&self.buffers.wall_slots, old * ws * w)?;
        slots.extend(empty_wall_slots((new - old) * ws, w));
        let mut free: Vec<u32> = self.read(&self.buffers.wall_free, old)?;
        free.resize(new, 0);
        log::debug!(
            "wall table dem.wall_history: {old} rows (particles near a wall) were full, {needed} needed; regrown to {new}, the batch continues from the step that needed it"
        );
        self.buffers.wall_slots = init(&self.device, "dem.wall_history", &slots);
        self.buffers.wall_free = init(&self.device, "dem.wall_free", &free);
        // Rows from `old` on were handed out only to the particles that found the table
        // full, which took none: they are unused.
        self.queue.write_buffer(
            &self.buffers.wall_alloc,
            0,
            bytemuck::bytes_of(&WallAlloc {
                top,
                next: old as u32,
                capacity: new as u32,
                _p0: 0,
            }),
        );
        self.shape.wall_rows = new as u32;
        self.tables_resized();
        Ok(())
    }

    /// After a table was regrown: new parameters to the GPU, new bind groups.
    pub(super) fn tables_resized(&mut self) {
        self.queue.write_buffer(
            &self.buffers.params,
            0,
            bytemuck::bytes_of(&self.shape.params),
        );
        self.rebind();
        self.regrowths += 1;
    }

    /// New bind groups for the current kernels, buffers and table sizes.
    pub(super) fn rebind(&mut self) {
        self.pipelines.groups = Self::bind_groups(
            &self.device,
            &self.pipelines.kernels,
            &self.buffers,
            self.shape.params.n,
            self.shape.params.slots * self.shape.slot_words as u32,
        );
    }
}
