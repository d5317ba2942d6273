//! Measurement: the time of each stage of a step, the byte model of the per-step kernels, and
//! the GPU memory the engine holds.

use super::GpuEngine;
use super::regrow::check_defect;
use super::state::Buffers;
use super::state::HAND_BYTES;
use super::step::{STAGES, Stage, StepKind};
use crate::context::GpuError;
use crate::layout::Counters;

/// Seconds each stage of [`STAGES`] took over the steps of [`GpuEngine::profile_stages`].
#[derive(Debug, Clone, Copy)]
pub struct StageTimes {
    /// Wall-clock, from submit to completion of each stage's own submission.
    pub cpu: [f64; STAGES.len()],
    /// On the GPU, from the beginning to the end of each stage's compute pass (timestamp
    /// queries), where the device has them.
    pub gpu: Option<[f64; STAGES.len()]>,
}

impl GpuEngine {
    /// Advances `steps` steps with each stage of [`STAGES`] in its own submission, waited for,
    /// and returns the seconds each stage took in all: wall-clock (CPU timers around the
    /// submissions: they include the submit and wait overhead that a batched run amortises,
    /// so their sum exceeds a batched run's time) and, where the device has timestamp queries
    /// ([`wgpu::Features::TIMESTAMP_QUERY`]), on the GPU from the start to the end of each
    /// stage's compute pass. The rebuild stages are dispatched with zero workgroups on steps
    /// that need no rebuild, as in a batched run, so their time is the average over rebuild and
    /// non-rebuild steps. For measurements (`wgdem bench`). A step in which a table overflows
    /// commits nothing, as in a batched run: the table is regrown and the step taken again, and
    /// only that second attempt is timed.
    pub fn profile_stages(&mut self, steps: u64) -> Result<StageTimes, GpuError> {
        let mut cpu = [0.0; STAGES.len()];
        let mut gpu = [0.0; STAGES.len()];
        let timer = self
            .device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
            .then(|| {
                // Two per stage; each step's are resolved into its own aligned block and all
                // are read back once at the end.
                let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("dem.profile.timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2 * STAGES.len() as u32,
                });
                let resolved = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("dem.profile.timestamps"),
                    size: steps.max(1) * wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                });
                (set, resolved)
            });
        // Nanoseconds per timestamp tick.
        let period = f64::from(self.queue.get_timestamp_period());
        // CPU seconds per step and stage; a step taken again overwrites its entry (and its
        // block of timestamps).
        let mut cpu_steps = vec![[0.0; STAGES.len()]; steps as usize];
        if self.cell.is_some() && steps > super::cell::CELL_TABLE_STEPS {
            return Err(GpuError::Unsupported(format!(
                "a periodic cell's profile takes at most {} steps",
                super::cell::CELL_TABLE_STEPS
            )));
        }
        if let (_, Some(stop)) = self.write_cell_table(steps) {
            return Err(stop);
        }
        let start = self.steps;
        let mut done = 0;
        while done < steps {
            self.clear_counters();
            for step in done..steps {
                for stage in 0..STAGES.len() {
                    let t0 = std::time::Instant::now();
                    let mut encoder =
                        self.device
                            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                                label: Some("dem.profile"),
                            });
                    {
                        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                            label: Some(STAGES[stage]),
                            timestamp_writes: timer.as_ref().map(|(set, _)| {
                                wgpu::ComputePassTimestampWrites {
                                    query_set: set,
                                    beginning_of_pass_write_index: Some(2 * stage as u32),
                                    end_of_pass_write_index: Some(2 * stage as u32 + 1),
                                }
                            }),
                        });
                        self.record_stage(&mut pass, Stage::ALL[stage], StepKind::default());
                    }
                    self.queue.submit([encoder.finish()]);
                    self.device
                        .poll(wgpu::PollType::wait_indefinitely())
                        .map_err(|e| GpuError::Readback(e.to_string()))?;
                    cpu_steps[step as usize][stage] = t0.elapsed().as_secs_f64();
                }
                if let Some((set, resolved)) = &timer {
                    // Outside the timed submissions; queue order keeps the set's reuse safe.
                    let mut encoder =
                        self.device
                            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                                label: Some("dem.profile.resolve"),
                            });
                    let offset = step * wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT;
                    encoder.resolve_query_set(set, 0..2 * STAGES.len() as u32, resolved, offset);
                    self.queue.submit([encoder.finish()]);
                }
            }
            // After an overflow the later steps did nothing (`rebuild.halt`); the counters
            // count the steps begun, the failed one last.
            let counters: Counters = self.read(&self.buffers.counters, 1)?[0];
            if counters.failed == 0 {
                done = steps;
            } else {
                check_defect(&counters)?;
                done += u64::from(counters.steps.saturating_sub(1));
                self.steps = start + done;
                self.regrow_overflowed(&counters)?;
            }
        }
        self.steps = start + steps;
        self.time = self.time_at(self.steps);
        self.cell_reached();
        for step in &cpu_steps {
            for (total, t) in cpu.iter_mut().zip(step) {
                *total += t;
            }
        }
        if let Some((_, resolved)) = &timer {
            let block = (wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT / 8) as usize;
            let ticks: Vec<u64> = self.read(resolved, steps as usize * block)?;
            for step_ticks in ticks.chunks(block) {
                for (stage, total) in gpu.iter_mut().enumerate() {
                    let elapsed = step_ticks[2 * stage + 1].saturating_sub(step_ticks[2 * stage]);
                    *total += elapsed as f64 * period * 1e-9;
                }
            }
        }
        Ok(StageTimes {
            cpu,
            gpu: timer.map(|_| gpu),
        })
    }

    /// Mean number of partners listed per particle (within the skin) at the last build.
    pub fn listed_per_particle(&self) -> Result<f64, GpuError> {
        let n = self.shape.params.n as usize;
        let k = u64::from(self.shape.params.slots);
        let counts: Vec<u32> = self.read(&self.buffers.counts, n)?;
        Ok(counts.iter().map(|&c| u64::from(c).min(k)).sum::<u64>() as f64 / n as f64)
    }

    /// Bytes each stage of [`STAGES`] reads and writes per particle and step, counted from the
    /// buffer layouts with every array element a stage touches moved once (no reuse of a
    /// partner's data from cache), for `listed` partners listed and `touching` in contact per
    /// particle. `None` for the rebuild stages (plan: one invocation; sort, neighbours: their
    /// traffic depends on the cell occupancy and on how often a rebuild is due).
    ///
    /// - contacts: the particle's position, predicted velocities (32 each), velocity (16, its
    ///   spin in the w words of these two), list length and material (4 each); per listed
    ///   partner its slot read and written, its position and material (neither material where
    ///   all particles are of one, compiled in); per touching partner also its
    ///   velocity and predicted velocities (48, its spin in their w words); its wall mask (4;
    ///   the few particles near a wall also read their row index and wall slots, not
    ///   counted); force and torque (32) written (the contact counts, one entry per
    ///   workgroup at the last step of a batch, not counted);
    /// - integrate: position (32), force and torque (32), velocity and its low part (16 + 16),
    ///   the predicted velocities (32: the angular velocity's y and z sit in their w words,
    ///   and a GPU moves the 32-byte sector they share), orientation (16) and the position at
    ///   the last build with the inverse inertia (16) read; position, velocity and its low
    ///   part, orientation and predicted velocities written (32 + 16 + 16 + 16 + 32).
    ///
    /// Where each pair is evaluated once ([`GpuEngine::pairs_once`]), the contact stage reads
    /// and writes the slots, and loads the partners, of the A sides only (half the listed and
    /// touching pairs), and per listed A side also reads its link (4) and writes B's share
    /// (32, zero where the pair does not touch);
    /// integrate also reads the list length (4), every listed slot's partner word (8 in
    /// 64-bit words, else 4) and each B side's share (32), and writes the force and torque
    /// (32).
    pub fn stage_bytes_per_particle(&self, listed: f64, touching: f64) -> [Option<f64>; 5] {
        let slot = 4.0 * self.shape.slot_words as f64;
        let material = if self.pipelines.spec.one_material.is_some() {
            0.0
        } else {
            4.0
        };
        let own = 32.0 + 32.0 + 16.0 + 4.0 + material;
        let per_listed = 2.0 * slot + 32.0 + material;
        let per_touching = 32.0 + 16.0;
        let integrate =
            (32.0 + 32.0 + 16.0 + 16.0 + 32.0 + 16.0 + 16.0) + (32.0 + 16.0 + 16.0 + 16.0 + 32.0);
        let hand = HAND_BYTES as f64;
        // The wall mask and the force and torque, whichever side evaluates.
        let tail = 4.0 + 32.0;
        let (contacts, integrate) = if self.pairs_once() {
            let partner_word = if self.pipelines.spec.words64 {
                8.0
            } else {
                4.0
            };
            (
                own + 0.5 * listed * (per_listed + 4.0 + hand)
                    + 0.5 * touching * per_touching
                    + tail,
                integrate + 4.0 + listed * partner_word + 0.5 * listed * hand + 32.0,
            )
        } else {
            (
                own + listed * per_listed + touching * per_touching + tail,
                integrate,
            )
        };
        [None, None, None, Some(contacts), Some(integrate)]
    }

    /// GPU memory held by the engine (bytes): state, tables, scratch and the readback ring.
    pub fn memory_bytes(&self) -> u64 {
        self.memory_breakdown().iter().map(|(_, bytes)| bytes).sum()
    }

    /// [`GpuEngine::memory_bytes`] by group of buffers: particle state, neighbour slots, wall
    /// slots, the spatial hash and sort, and the rest. (The neighbour build's keys, cells and
    /// bucket counters and the reorder's scratch have no buffers of their own: they lie in the
    /// force array, counted with the particle state; see `BuildScratch`.) Every buffer is
    /// named below: a buffer added to [`Buffers`] and not counted here does not compile.
    pub fn memory_breakdown(&self) -> Vec<(&'static str, u64)> {
        let Buffers {
            params,
            radix_passes,
            pos,
            vel,
            orientation,
            pred,
            fine,
            material,
            pair_table,
            walls,
            ft,
            scratch: _,
            work,
            stats,
            sorted,
            tile_hist,
            bucket_start,
            counts,
            chunks,
            built_at,
            walls_built,
            rebuild_state,
            ids,
            drive_of,
            drives,
            schedule_points,
            dummy,
            moisture_action,
            dispatch_args,
            wall_slots,
            wall_row,
            wall_free,
            wall_alloc,
            wall_mask,
            wall_partial,
            wall_out,
            stats_out,
            counters,
            cell,
            cell_stress,
            cell_partial,
            cell_sums,
            images,
            row_partial,
            row_sums,
        } = &self.buffers;
        let sum = |buffers: &[&wgpu::Buffer]| buffers.iter().map(|b| b.size()).sum::<u64>();
        let slots: Vec<&wgpu::Buffer> = chunks
            .iter()
            .flat_map(|c| [&c.slots, &c.hand, &c.link])
            .collect();
        // The sorts' keys, first values, cells and bucket counters lie in the force array.
        let mut sort = vec![sorted, tile_hist, bucket_start];
        sort.extend(radix_passes.iter());
        let mut other = vec![
            params,
            material,
            pair_table,
            walls,
            stats,
            counts,
            built_at,
            walls_built,
            rebuild_state,
            ids,
            drive_of,
            drives,
            schedule_points,
            dummy,
            moisture_action,
            dispatch_args,
            wall_partial,
            wall_out,
            stats_out,
            counters,
            cell,
            cell_stress,
            cell_partial,
            cell_sums,
            images,
            row_partial,
            row_sums,
        ];
        other.extend(chunks.iter().map(|c| &c.range));
        other.extend(self.stream.staging.iter().map(|s| &s.buffer));
        vec![
            (
                "particle state",
                sum(&[pos, vel, orientation, pred, fine, ft, work]),
            ),
            ("neighbour slots", sum(&slots)),
            (
                "wall slots",
                sum(&[wall_slots, wall_mask, wall_row, wall_free, wall_alloc]),
            ),
            ("hash and sort", sum(&sort)),
            ("other", sum(&other)),
        ]
    }
}
