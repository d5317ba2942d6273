//! Batches in flight: recording many steps per submit, reading wall forces and contact counts
//! back one batch behind the GPU, the host's wall velocities between batches, and the
//! schedules (reorders, moisture events) that decide where a batch starts and ends.

use glam::DVec3;
use wgdem_core::cpu::StepStats;

use super::GpuEngine;
use super::cell::CELL_SUMS_BYTES;
use super::regrow::check_defect;
use super::state::v4;
use super::step::{LEAN_EVERY, StepKind};
use crate::context::GpuError;
use crate::layout::{Counters, ForceTorque, MoistureAction, Wall};
use crate::shared;

/// Batches in flight at once: the host reads one batch's results while the next one runs.
pub(super) const IN_FLIGHT: usize = 2;

/// The most rounds (a general step, then `integrate.steps`) a single-workgroup batch records
/// for rebuilds: a batch that meets more stops short and is finished by the next.
const MAX_ROUNDS: u32 = 64;

/// The most spare steps a general-path batch records after its own (see `Stream::spare`).
const MAX_SPARE: u32 = 1024;

/// What the host learns at the end of each batch, one batch behind the GPU.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WallReadout {
    /// Steps taken at the end of the batch.
    pub steps: u64,
    /// Simulated time at the end of the batch (s).
    pub time: f64,
    /// Force (N) and torque (N·m) on each wall during the batch's last step.
    pub walls: Vec<(DVec3, DVec3)>,
    /// Contact counts of the batch's last step.
    pub stats: StepStats,
    /// In a periodic cell, the batch's last step's Σ f ⊗ d (columns 0–2) and Σ m v ⊗ v
    /// (columns 3–5), summed on the device (`cell_reduce.wgsl`; the stress is
    /// [`GpuEngine::cell_stress`]).
    pub cell_sums: Option<[[f32; 4]; 6]>,
}

/// Wall velocities the host sets between batches (see [`GpuEngine::run_streaming`]).
pub struct WallControl<'a> {
    pub(super) queue: &'a wgpu::Queue,
    pub(super) walls: &'a wgpu::Buffer,
    pub(super) velocities: &'a mut Vec<DVec3>,
}

impl WallControl<'_> {
    /// Sets wall `wall`'s velocity (m/s) from the next submitted batch on.
    pub fn set_velocity(&mut self, wall: usize, velocity: DVec3) {
        write_wall_velocity(self.queue, self.walls, wall, velocity);
        if let Some(v) = self.velocities.get_mut(wall) {
            *v = velocity;
        }
    }
}

pub(super) fn write_wall_velocity(
    queue: &wgpu::Queue,
    walls: &wgpu::Buffer,
    wall: usize,
    velocity: DVec3,
) {
    let offset = wall * size_of::<Wall>() + std::mem::offset_of!(Wall, velocity);
    queue.write_buffer(walls, offset as u64, bytemuck::bytes_of(&v4(velocity)));
}

/// A submitted batch whose results have not been read yet.
pub(super) struct InFlight {
    /// Steps before the batch.
    pub(super) start_steps: u64,
    /// The reorder schedule after the batch was recorded (a reorder it began is kept when
    /// it is finished after an overflow).
    pub(super) next_reorder_after: u64,
    /// Moisture events applied before the batch began (applied again if it stops in its
    /// first step).
    pub(super) events_before: usize,
    /// Wall velocities the batch was submitted with (set again to finish it after an
    /// overflow: the host may have steered the walls for later batches meanwhile).
    pub(super) velocities: Vec<DVec3>,
    pub(super) steps: u32,
    /// Index into the staging ring.
    pub(super) slot: usize,
    pub(super) submission: wgpu::SubmissionIndex,
    pub(super) mapped: std::sync::mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>,
}

/// Results copied out of a batch: counters, then wall forces, then contact counts, then in a
/// periodic cell the stress sums.
pub(super) struct Staging {
    pub(super) buffer: wgpu::Buffer,
    pub(super) walls_offset: u64,
    pub(super) stats_offset: u64,
    pub(super) cell_offset: u64,
}

impl GpuEngine {
    /// Takes the moisture events due at the start of step `step` (Potyondy memo, Table 6) and
    /// writes their combined action for the batch that starts there; false when none is due.
    /// A sequence of events at one instant acts as: make everything dry if any `make_dry`
    /// is among them, then make wet with the largest moisture gap of the `make_wet`s after the
    /// last `make_dry`.
    pub(super) fn take_due_moisture(&mut self, step: u64) -> bool {
        let (mut dry, mut wet_gap) = (false, None::<f64>);
        while let Some(e) = self
            .schedule
            .moisture_events
            .get(self.schedule.events_applied)
            .copied()
        {
            if e.time > self.time_at(step) {
                break;
            }
            if e.wet {
                wet_gap = Some(wet_gap.map_or(e.gap, |g| g.max(e.gap)));
            } else {
                dry = true;
                wet_gap = None;
            }
            self.schedule.events_applied += 1;
        }
        if !dry && wet_gap.is_none() {
            return false;
        }
        let action = MoistureAction {
            dry: u32::from(dry),
            wet: u32::from(wet_gap.is_some()),
            gap: wet_gap.unwrap_or(0.0) as f32,
            _p0: 0,
        };
        self.queue.write_buffer(
            &self.buffers.moisture_action,
            0,
            bytemuck::bytes_of(&action),
        );
        true
    }

    /// Advances `steps` steps, in batches of `batch_steps` per submit.
    pub fn run(&mut self, steps: u64) -> Result<(), GpuError> {
        self.run_streaming(steps, |_, _| {})
    }

    /// Advances `steps` steps, calling `on_batch` with each batch's wall forces and contact
    /// counts as they arrive — one batch behind the GPU, which meanwhile runs the next — so
    /// that the host can steer walls (a servo) through [`WallControl`] without stalling the
    /// device. A velocity set there applies from the next batch submitted.
    ///
    /// A batch in which a table overflowed stops on the GPU at the start of the failed step
    /// (`rebuild.halt`), before anything of that step is committed, and is not reported; the
    /// later batches in flight do nothing. The table is regrown and the batch finished from
    /// that step with the wall velocities it was submitted with; the velocities the host set
    /// meanwhile apply from the batch after it, as they would have. The result is the one a
    /// table large enough from the start gives, bit for bit, without a copy of the state.
    ///
    /// In a periodic cell the run is taken in pieces of at most `cell::CELL_TABLE_STEPS`
    /// steps, the cell of each step written before each piece.
    pub fn run_streaming(
        &mut self,
        steps: u64,
        mut on_batch: impl FnMut(&WallReadout, &mut WallControl<'_>),
    ) -> Result<(), GpuError> {
        if self.cell.is_none() {
            return self.stream_steps(steps, &mut on_batch);
        }
        let mut left = steps;
        while left > 0 {
            let (n, stop) = self.write_cell_table(left.min(super::cell::CELL_TABLE_STEPS));
            let ran = if n > 0 {
                self.stream_steps(n, &mut on_batch)
            } else {
                Ok(())
            };
            self.cell_reached();
            ran?;
            if let Some(e) = stop {
                return Err(e);
            }
            left -= n;
        }
        Ok(())
    }

    /// [`GpuEngine::run_streaming`] within one cell table.
    fn stream_steps(
        &mut self,
        steps: u64,
        mut on_batch: impl FnMut(&WallReadout, &mut WallControl<'_>),
    ) -> Result<(), GpuError> {
        self.ensure_staging();
        self.clear_counters();
        let target = self.steps + steps;
        let mut submitted = self.steps;
        // After an overflow: where the interrupted batch was to end, and the wall velocities
        // the host had set meanwhile for the batches after it.
        let mut finish_at: Option<u64> = None;
        let mut steered: Option<Vec<DVec3>> = None;
        let mut in_flight: std::collections::VecDeque<InFlight> = Default::default();
        let mut free: Vec<usize> = (0..IN_FLIGHT).rev().collect();
        loop {
            while submitted < target && !free.is_empty() {
                let slot = free.pop().unwrap_or_default();
                // A batch ends before the step at which the next moisture event is due, so
                // that the event applies in the first step of a batch.
                let mut n = (target - submitted)
                    .min(self.stream.batch_steps as u64)
                    .min(self.steps_to_next_event(submitted));
                let resumed = finish_at.take();
                if let Some(end) = resumed {
                    n = n.min(end - submitted);
                }
                let batch = self.submit_batch(submitted, n as u32, slot, resumed.is_some());
                in_flight.push_back(batch);
                submitted += n;
                if let Some(velocities) = steered.take() {
                    for (w, &v) in velocities.iter().enumerate() {
                        write_wall_velocity(&self.queue, &self.buffers.walls, w, v);
                    }
                    self.stream.wall_velocity = velocities;
                }
            }
            let Some(batch) = in_flight.pop_front() else {
                return Ok(());
            };
            let readout = self.wait_for(&batch)?;
            free.push(batch.slot);
            match readout {
                Ok((readout, rounds)) => {
                    // Rounds (spare steps) for as many rebuilds (lost lean steps) as this
                    // batch met and a quarter more: one unused costs a step of empty
                    // dispatches, one too few a batch finished by the next (and the batch
                    // in flight after it, all of whose dispatches are then empty). Spare
                    // steps for at least one rebuild, which loses at most LEAN_EVERY − 1 —
                    // except after a batch shorter than LEAN_EVERY (a periodic cell's servo
                    // takes 10 steps at a time and waits for each): there those spare steps
                    // would outnumber its own, and a rebuild costs only a finishing batch
                    // (none in flight behind it), so none are kept unless its last batch lost
                    // steps. The same steps are taken either way.
                    if self.single_workgroup() {
                        // The counters count the rounds left down.
                        let used = self.stream.rounds.saturating_sub(rounds);
                        self.stream.rounds = (used + used / 4).min(MAX_ROUNDS);
                    } else {
                        // They count the lean steps lost up.
                        let least = if batch.steps < LEAN_EVERY {
                            0
                        } else {
                            LEAN_EVERY
                        };
                        self.stream.spare = (rounds + rounds / 4).clamp(least, MAX_SPARE);
                    }
                    self.steps = batch.start_steps + batch.steps as u64;
                    self.time = readout.time;
                    self.stream.last = readout;
                    let mut control = WallControl {
                        queue: &self.queue,
                        walls: &self.buffers.walls,
                        velocities: &mut self.stream.wall_velocity,
                    };
                    on_batch(&self.stream.last, &mut control);
                }
                Err(counters) if counters.runaway != 0 => {
                    // A blow-up (checked before overflows: runaway positions overflow the
                    // tables in the step after). The batches still in flight ran on; the
                    // state is theirs.
                    let mut end = batch.start_steps + batch.steps as u64;
                    for later in in_flight.drain(..) {
                        let _ = self.wait_for(&later)?;
                        end = later.start_steps + later.steps as u64;
                    }
                    self.steps = end;
                    self.time = self.time_at(end);
                    return Err(GpuError::Runaway {
                        steps: batch.start_steps + batch.steps as u64,
                        state_at: end,
                        count: counters.runaway,
                        first: counters.first_runaway,
                    });
                }
                Err(counters) => {
                    // The later batches found the flag set and did nothing.
                    for later in in_flight.drain(..) {
                        let _ = self.wait_for(&later)?;
                        free.push(later.slot);
                    }
                    let short = counters.failed == shared::failed::SHORT;
                    let failed_at = if short {
                        // Every step it took is complete; the next one rebuilds its lists,
                        // and the batches after it get a round more (twice as many), or
                        // twice the spare steps.
                        self.stream.rounds = (2 * self.stream.rounds).clamp(1, MAX_ROUNDS);
                        self.stream.spare = (2 * self.stream.spare).clamp(LEAN_EVERY, MAX_SPARE);
                        self.stream.rebuild_first = true;
                        self.short_batches += 1;
                        self.steps_reached(&batch, &counters)?
                    } else {
                        self.failed_step(&batch, &counters)?
                    };
                    if failed_at == batch.start_steps {
                        self.schedule.events_applied = batch.events_before;
                    }
                    self.schedule.next_reorder = batch.next_reorder_after;
                    self.steps = failed_at;
                    self.time = self.time_at(self.steps);
                    for (w, &v) in batch.velocities.iter().enumerate() {
                        write_wall_velocity(&self.queue, &self.buffers.walls, w, v);
                    }
                    steered = Some(std::mem::replace(
                        &mut self.stream.wall_velocity,
                        batch.velocities.clone(),
                    ));
                    if short {
                        self.clear_counters();
                    } else {
                        self.regrow_overflowed(&counters)?;
                    }
                    submitted = self.steps;
                    finish_at = Some(batch.start_steps + batch.steps as u64);
                }
            }
        }
    }

    /// Clears the GPU counters (overflow flags and steps begun) before the next submission.
    pub(super) fn clear_counters(&mut self) {
        let counters = Counters {
            base_lo: self.steps as u32,
            base_hi: (self.steps >> 32) as u32,
            first_runaway: u32::MAX,
            // No batch end until a batch sets one (stages profiled one by one run to none).
            end: u32::MAX,
            ..Counters::default()
        };
        self.queue
            .write_buffer(&self.buffers.counters, 0, bytemuck::bytes_of(&counters));
        self.stream.counted_from = self.steps;
    }

    /// The step of `batch` in which a table overflowed: the counters count the steps begun
    /// since they were cleared (modulo 2^32), the failed one last.
    pub(super) fn failed_step(
        &self,
        batch: &InFlight,
        counters: &Counters,
    ) -> Result<u64, GpuError> {
        check_defect(counters)?;
        let before = batch.start_steps.wrapping_sub(self.stream.counted_from) as u32;
        let offset = counters.steps.wrapping_sub(1).wrapping_sub(before);
        if offset >= batch.steps {
            return Err(GpuError::Defect(format!(
                "a table overflowed in a batch of {} steps, but {} steps were counted since step {} (the batch began at step {})",
                batch.steps, counters.steps, self.stream.counted_from, batch.start_steps
            )));
        }
        Ok(batch.start_steps + offset as u64)
    }

    /// The step at which `batch`, a batch that ran out of rounds or spare steps
    /// (`failed::SHORT`), stopped: every step begun in it was taken.
    pub(super) fn steps_reached(
        &self,
        batch: &InFlight,
        counters: &Counters,
    ) -> Result<u64, GpuError> {
        let before = batch.start_steps.wrapping_sub(self.stream.counted_from) as u32;
        let taken = counters.steps.wrapping_sub(before);
        if taken >= batch.steps {
            return Err(GpuError::Defect(format!(
                "a batch of {} steps stopped for a rebuild after {taken} of them",
                batch.steps
            )));
        }
        Ok(batch.start_steps + taken as u64)
    }

    /// Whether batches take their steps in one workgroup between general steps
    /// ([`super::GpuOptions::single_workgroup`]): chosen when the engine was made (its kernel
    /// compiled), and while the neighbour slots fit one chunk.
    pub fn single_workgroup(&self) -> bool {
        self.pipelines.groups.steps.is_some() && self.buffers.chunks.len() == 1
    }

    /// Steps from `step` to the first step at whose start the next pending moisture event is
    /// due (at least 1; `u64::MAX` when none is pending).
    pub(super) fn steps_to_next_event(&self, step: u64) -> u64 {
        let Some(e) = self
            .schedule
            .moisture_events
            .get(self.schedule.events_applied)
        else {
            return u64::MAX;
        };
        let mut s = step + 1;
        // The estimate, then the exact first step with time_at(s) ≥ e.time. An event further
        // away than any batch only needs to be known as far.
        let ahead = ((e.time - self.time_at(s)) / self.schedule.dt).floor();
        if ahead >= 1e12 {
            return 1_000_000_000_000;
        }
        if ahead > 1.0 {
            s += ahead as u64 - 1;
        }
        while self.time_at(s) < e.time {
            s += 1;
        }
        s - step
    }

    /// Simulated time after `steps` steps (the f64 step of the scene, as the CPU reference).
    pub(super) fn time_at(&self, steps: u64) -> f64 {
        self.schedule.start_time + (steps - self.schedule.start_steps) as f64 * self.schedule.dt
    }

    /// Creates the staging ring if missing.
    pub(super) fn ensure_staging(&mut self) {
        if self.stream.staging.len() != IN_FLIGHT {
            let walls_offset = size_of::<Counters>() as u64;
            let stats_offset = walls_offset + self.shape.params.n_walls.max(1) as u64 * 32;
            let cell_offset = stats_offset + 16;
            let cell_bytes = if self.cell.is_some() {
                CELL_SUMS_BYTES
            } else {
                0
            };
            self.stream.staging = (0..IN_FLIGHT)
                .map(|_| Staging {
                    buffer: self.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("dem.readout_ring"),
                        size: cell_offset + cell_bytes,
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    }),
                    walls_offset,
                    stats_offset,
                    cell_offset,
                })
                .collect();
        }
    }

    /// Records and submits one batch: the steps, then copies of the results to the staging
    /// buffer, which it asks to be mapped. A `resumed` batch finishes one that stopped (short
    /// of rounds or on an overflow) and never reorders: whether to reorder was decided at the
    /// stopped batch's start (and kept in `next_reorder_after`), so the reorders fall at the
    /// same steps as in a run whose batches did not stop.
    pub(super) fn submit_batch(
        &mut self,
        start_steps: u64,
        steps: u32,
        slot: usize,
        resumed: bool,
    ) -> InFlight {
        let events_before = self.schedule.events_applied;
        let moisture = self.take_due_moisture(start_steps);
        let reorder = !resumed
            && self.schedule.reorder_every > 0
            && start_steps >= self.schedule.next_reorder;
        if reorder {
            // The batch's first step rebuilds (`rebuild.force`); the reorder follows its sort.
            self.schedule.next_reorder = start_steps + self.schedule.reorder_every;
        }
        // Where the batch ends, as the counters count steps (modulo 2^32: steps stop there, so
        // equality is the test), and the rounds of a single-workgroup batch (a general-path
        // batch counts its lost lean steps there from zero).
        let single = self.single_workgroup();
        let rounds = if single { self.stream.rounds } else { 0 };
        let end = (start_steps + steps as u64).wrapping_sub(self.stream.counted_from) as u32;
        self.queue.write_buffer(
            &self.buffers.counters,
            std::mem::offset_of!(Counters, end) as u64,
            bytemuck::cast_slice(&[end, rounds]),
        );
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("dem.batch"),
            });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("dem.steps"),
                timestamp_writes: None,
            });
            let first = StepKind { reorder, moisture };
            if single {
                // A general step first where the lists must be rebuilt before any step.
                let lead = reorder || moisture || self.stream.rebuild_first;
                self.stream.rebuild_first = false;
                self.record_single_workgroup(&mut pass, lead.then_some(first), rounds);
            } else {
                self.record_batch(&mut pass, first, steps, self.stream.spare);
            }
        }
        let st = &self.stream.staging[slot];
        encoder.copy_buffer_to_buffer(
            &self.buffers.counters,
            0,
            &st.buffer,
            0,
            size_of::<Counters>() as u64,
        );
        encoder.copy_buffer_to_buffer(
            &self.buffers.wall_out,
            0,
            &st.buffer,
            st.walls_offset,
            st.stats_offset - st.walls_offset,
        );
        encoder.copy_buffer_to_buffer(&self.buffers.stats_out, 0, &st.buffer, st.stats_offset, 16);
        if self.cell.is_some() {
            encoder.copy_buffer_to_buffer(
                &self.buffers.cell_sums,
                0,
                &st.buffer,
                st.cell_offset,
                CELL_SUMS_BYTES,
            );
        }
        let submission = self.queue.submit([encoder.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        st.buffer.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        InFlight {
            start_steps,
            next_reorder_after: self.schedule.next_reorder,
            events_before,
            velocities: self.stream.wall_velocity.clone(),
            steps,
            slot,
            submission,
            mapped: rx,
        }
    }

    /// Waits for a batch's results; `Err(counters)` when a table overflowed or a sphere ran
    /// away (`counters.runaway`).
    pub(super) fn wait_for(
        &self,
        batch: &InFlight,
    ) -> Result<Result<(WallReadout, u32), Counters>, GpuError> {
        let readback = |e: String| GpuError::Readback(e);
        loop {
            match batch.mapped.try_recv() {
                Ok(r) => {
                    r.map_err(|e| readback(e.to_string()))?;
                    break;
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => {
                    // Wait for this batch only: the next one keeps the device busy meanwhile.
                    self.device
                        .poll(wgpu::PollType::Wait {
                            submission_index: Some(batch.submission.clone()),
                            timeout: None,
                        })
                        .map_err(|e| readback(e.to_string()))?;
                }
                Err(e) => return Err(readback(e.to_string())),
            }
        }
        let st = &self.stream.staging[batch.slot];
        let result = {
            let view = st
                .buffer
                .get_mapped_range(..)
                .map_err(|e| readback(e.to_string()))?;
            let counters: Counters = bytemuck::pod_read_unaligned(&view[..size_of::<Counters>()]);
            if counters.failed != 0 || counters.runaway != 0 {
                Err(counters)
            } else {
                let d3 = |a: &[f32]| DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64);
                let walls: Vec<ForceTorque> = bytemuck::pod_collect_to_vec(
                    &view[st.walls_offset as usize
                        ..st.walls_offset as usize + self.shape.params.n_walls as usize * 32],
                );
                let stats: [u32; 4] = bytemuck::pod_read_unaligned(
                    &view[st.stats_offset as usize..st.stats_offset as usize + 16],
                );
                let steps = batch.start_steps + batch.steps as u64;
                let cell_at = st.cell_offset as usize;
                let cell_sums = self.cell.is_some().then(|| {
                    bytemuck::pod_read_unaligned(&view[cell_at..cell_at + CELL_SUMS_BYTES as usize])
                });
                Ok((
                    WallReadout {
                        steps,
                        time: self.time_at(steps),
                        walls: walls
                            .iter()
                            .map(|f| (d3(&f.force), d3(&f.torque)))
                            .collect(),
                        stats: StepStats {
                            contacts: stats[0] as usize,
                            wall_contacts: stats[1] as usize,
                            sliding: stats[2] as usize,
                        },
                        cell_sums,
                    },
                    counters.rounds,
                ))
            }
        };
        st.buffer.unmap();
        Ok(result)
    }
}
