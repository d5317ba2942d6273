//! Reading the state back: positions, velocities and walls into the CPU's [`Simulation`],
//! neighbour lists and table sizes for inspection.

use bytemuck::Pod;
use glam::{DQuat, DVec2, DVec3};
use wgdem_core::cpu::Simulation;
use wgdem_core::wall::WallShape;

use super::GpuEngine;
use super::kernels::direct_dispatch;
use super::state::wall_words;
use crate::context::{GpuError, read_buffer};
use crate::layout::{Position, Predicted, RowSums, Slot, Wall};
use crate::shaders::SlotKind;
use crate::shared;

/// Bytes of [`RowSums`], per workgroup in `row_partial` and once in `row_sums`.
pub(super) const ROW_SUMS_BYTES: u64 = size_of::<RowSums>() as u64;

impl GpuEngine {
    /// What a direct shear row measures of the particles in their present state, summed on
    /// the device (`row_reduce.wgsl`): the kinetic energy, the highest sphere top, the
    /// touching pairs and their Σ n ⊗ n, 48 bytes read back instead of the whole state and no
    /// contact search on the host. Outside a periodic cell only (the pairs are found without
    /// images).
    pub fn row_sums(&self) -> Result<RowSums, GpuError> {
        let (partials, total) = &self.pipelines.kernels.row_reduce;
        let groups = &self.pipelines.groups.row_reduce;
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("dem.row_reduce"),
            });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("dem.row_reduce"),
                timestamp_writes: None,
            });
            for (chunk, group) in self.buffers.chunks.iter().zip(groups) {
                if chunk.count > 0 {
                    direct_dispatch(&mut pass, partials, group, chunk.count.div_ceil(shared::WG));
                }
            }
            if let Some(group) = groups.first() {
                direct_dispatch(&mut pass, total, group, 1);
            }
        }
        self.queue.submit([encoder.finish()]);
        Ok(self
            .read::<RowSums>(&self.buffers.row_sums, 1)?
            .first()
            .copied()
            .unwrap_or_default())
    }

    pub(super) fn read<T: Pod>(
        &self,
        buffer: &wgpu::Buffer,
        count: usize,
    ) -> Result<Vec<T>, GpuError> {
        read_buffer(&self.device, &self.queue, buffer, count)
    }

    /// The order the particles sit in on the device: the stable id (the scene's index) of
    /// the particle at each position of the per-particle arrays.
    pub fn particle_order(&self) -> Result<Vec<u32>, GpuError> {
        self.read(&self.buffers.ids, self.shape.params.n as usize)
    }

    /// The neighbour lists of the last step as `(i, j)` stable-id entries, each particle's
    /// partners within the skin in list order (a pair appears once from each side). A slot
    /// whose canonical-order bit disagrees with the stable ids is reported as an error.
    pub fn neighbour_lists(&self) -> Result<Vec<(u32, u32)>, GpuError> {
        let n = self.shape.params.n as usize;
        let k = self.shape.params.slots as usize;
        let counts: Vec<u32> = self.read(&self.buffers.counts, n)?;
        let ids = self.particle_order()?;
        let slots = self.read_slots()?;
        let w = self.shape.slot_words;
        let mut lists = Vec::new();
        for i in 0..n {
            let c = (counts[i] as usize).min(k);
            for s in slots[i * k * w..(i * k + c) * w].chunks(w) {
                let slot = Slot::read(s);
                let j = ids[slot.partner_index() as usize];
                if slot.is_a_side() != (ids[i] < j) {
                    return Err(GpuError::Defect(format!(
                        "the neighbour slot of particle {} for partner {j} holds the wrong canonical order",
                        ids[i]
                    )));
                }
                lists.push((ids[i], j));
            }
        }
        Ok(lists)
    }

    /// Wall slots per particle.
    pub fn wall_slots(&self) -> u32 {
        self.shape.params.wall_slots
    }

    /// Rows of wall slots the wall table holds (one per particle with a wall within its skin).
    pub fn wall_rows(&self) -> u32 {
        self.shape.wall_rows
    }

    /// All current slots, `n × slots` in particle order, gathered from the chunks, as u32
    /// words (`slot_words` per slot, the partner in word 3).
    pub(super) fn read_slots(&self) -> Result<Vec<u32>, GpuError> {
        let k = self.shape.params.slots as usize * self.shape.slot_words;
        let mut all = Vec::with_capacity(self.shape.params.n as usize * k);
        for c in &self.buffers.chunks {
            all.extend(self.read::<u32>(&c.slots, c.count as usize * k)?);
        }
        Ok(all)
    }

    /// Number of buffers the neighbour slots are split into.
    pub fn slot_chunks(&self) -> usize {
        self.buffers.chunks.len()
    }

    /// Whether each pair is evaluated once, on its A side
    /// ([`GpuOptions::pairs_once`](super::GpuOptions::pairs_once), where the slots are one
    /// chunk), rather than on both sides.
    pub fn pairs_once(&self) -> bool {
        self.buffers.chunks.iter().any(|c| c.once)
    }

    /// Neighbour-list skin (m): lists hold the pairs whose surfaces are closer than this.
    pub fn skin(&self) -> f64 {
        self.shape.params.skin as f64
    }

    /// Neighbour-list builds so far (read back from the GPU).
    pub fn neighbour_builds(&self) -> Result<u32, GpuError> {
        Ok(self.read::<[u32; 4]>(&self.buffers.rebuild_state, 1)?[0][1])
    }

    /// Bytes of one neighbour slot (one side of one pair's history): 16 for the spring–dashpot,
    /// 32 with the Kuhn or hill model, 48 + 16 × capacity with Jäger's history stack.
    pub fn slot_bytes(&self) -> usize {
        4 * self.shape.slot_words
    }

    /// Current neighbour-slot capacity per particle.
    pub fn slots(&self) -> u32 {
        self.shape.params.slots
    }

    /// Whether the per-step kernels hold the particle arrays and slots as 64-bit words
    /// ([`GpuOptions::words64`] on a device with 64-bit integers).
    pub fn words64(&self) -> bool {
        self.pipelines.spec.words64
    }

    /// Copies the GPU state into `sim`: particle positions, velocities, orientations, wall
    /// positions, wall forces and contact counts of the last step, time and step count, and in
    /// a periodic cell the cell, images and contact stress. The contact history stays on the
    /// GPU. Everything is copied out by one submission and read with one wait.
    pub fn read_into(&self, sim: &mut Simulation) -> Result<(), GpuError> {
        let n = self.shape.params.n as usize;
        let b = &self.buffers;
        let wide = self.shape.slot_words == 8;
        let periodic = self.cell.is_some();
        let per = |bytes: usize| (n * bytes) as u64;
        let mut parts: Vec<(&wgpu::Buffer, u64)> = vec![
            (&b.pos, per(size_of::<Position>())),
            (&b.vel, per(16)),
            (&b.fine, per(16)),
            (&b.pred, per(size_of::<Predicted>())),
            (&b.orientation, per(16)),
            (&b.ids, per(4)),
            (&b.walls, (sim.walls.len() * size_of::<Wall>()) as u64),
        ];
        if wide {
            parts.push((&b.work, per(16)));
        }
        if periodic {
            parts.push((&b.images, per(16)));
            parts.push((&b.cell_stress, per(48)));
        }
        let mut read = crate::context::read_buffers(&self.device, &self.queue, &parts)?.into_iter();
        let mut next = || read.next().unwrap_or_default();
        let pos: Vec<Position> = bytemuck::pod_collect_to_vec(&next());
        let vel: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(&next());
        let fine: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(&next());
        let pred: Vec<Predicted> = bytemuck::pod_collect_to_vec(&next());
        let orientation: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(&next());
        let ids: Vec<u32> = bytemuck::pod_collect_to_vec(&next());
        let walls: Vec<Wall> = bytemuck::pod_collect_to_vec(&next());
        let work: Vec<[f32; 4]> = if wide {
            bytemuck::pod_collect_to_vec(&next())
        } else {
            Vec::new()
        };
        if periodic {
            let images: Vec<[i32; 4]> = bytemuck::pod_collect_to_vec(&next());
            let stress: Vec<[[f32; 4]; 3]> = bytemuck::pod_collect_to_vec(&next());
            self.cell_into(sim, &images, &stress)?;
        }
        let p = &mut sim.particles;
        for (k, &id) in ids.iter().enumerate() {
            let i = id as usize;
            p.position[i] = d3(pos[k].hi) + d3(pos[k].lo);
            p.velocity[i] = d3(vel[k]) + d3(fine[k]);
            // The angular velocity's copies in the spare w words (common.wgsl `spin_of`).
            p.angular_velocity[i] = DVec3::new(
                f64::from(vel[k][3]),
                f64::from(pred[k].v[3]),
                f64::from(pred[k].w[3]),
            );
            let q = orientation[k];
            p.orientation[i] = DQuat::from_xyzw(q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64);
        }
        sim.work = if wide {
            // Summed over the particles in f64 (each contact counted on one side).
            wgdem_core::cpu::ContactWork {
                elastic: work.iter().map(|w| f64::from(w[0])).sum(),
                dissipated: work.iter().map(|w| f64::from(w[1]) + f64::from(w[2])).sum(),
            }
        } else {
            // No pair accounts work (the CPU engine's values are zero then too).
            wgdem_core::cpu::ContactWork::default()
        };
        sim.set_moisture_events_applied(self.schedule.events_applied);
        self.walls_into(sim, &walls);
        Ok(())
    }

    /// The part of [`GpuEngine::read_into`] that a servo needs, without the particles: wall
    /// positions and velocities, wall forces and contact counts of the last step, time and
    /// step count. It reads only the walls' buffer back (the forces arrive with each batch),
    /// and nothing without walls (a periodic cell's servo between its control intervals).
    pub fn read_walls_into(&self, sim: &mut Simulation) -> Result<(), GpuError> {
        let walls: Vec<Wall> = if sim.walls.is_empty() {
            Vec::new()
        } else {
            self.read(&self.buffers.walls, sim.walls.len())?
        };
        self.walls_into(sim, &walls);
        Ok(())
    }

    /// `walls` (as read back) into `sim`, with the last batch's forces and counts, time and
    /// step count.
    fn walls_into(&self, sim: &mut Simulation, walls: &[Wall]) {
        for (w, g) in sim.walls.iter_mut().zip(walls) {
            let point = d3(g.point_hi) + d3(g.point_lo);
            match &mut w.shape {
                WallShape::Plane { point: p0, .. } => *p0 = point,
                WallShape::Plate { center, .. } => *center = point,
            }
            w.velocity = d3(g.velocity);
        }
        for (w, &(force, torque)) in sim.walls.iter_mut().zip(&self.stream.last.walls) {
            w.force = force;
            w.torque = torque;
        }
        sim.stats = self.stream.last.stats;
        sim.time = self.time;
        sim.steps = self.steps;
        if let (Some(host), Some(periodic)) = (self.cell(), sim.periodic_mut()) {
            periodic.cell = *host;
        }
    }

    /// The forces and torques of the last step into `sim`'s particles (gravity, contacts and
    /// applied loads: what the integration used).
    pub fn read_forces_into(&self, sim: &mut Simulation) -> Result<(), GpuError> {
        let n = self.shape.params.n as usize;
        let ids = self.particle_order()?;
        let ft: Vec<[f32; 8]> = self.read(&self.buffers.ft, n)?;
        for (k, &id) in ids.iter().enumerate() {
            let w = &ft[k];
            sim.particles.force[id as usize] = d3([w[0], w[1], w[2], 0.0]);
            sim.particles.torque[id as usize] = d3([w[4], w[5], w[6], 0.0]);
        }
        Ok(())
    }

    /// For snapshots: the forces and torques of the last step into `sim`'s particles, and the
    /// contact histories the slots hold (in f32; a wall slot's history with its low part),
    /// as the CPU reference keeps them, Jäger stacks included (`jager_state`). Call after
    /// [`GpuEngine::read_into`].
    pub fn contact_histories(
        &self,
        sim: &mut Simulation,
    ) -> Result<wgdem_core::snapshot::ContactHistories, GpuError> {
        use wgdem_core::contact::hill::{HillState, Moisture};
        use wgdem_core::contact::kuhn::KuhnState;
        use wgdem_core::contact::model::{ContactKind, SlotHistory};
        let n = self.shape.params.n as usize;
        let ids = self.particle_order()?;
        self.read_forces_into(sim)?;
        // A wide slot's aux words (zero in narrow slots).
        let w = self.shape.slot_words;
        let aux_of = |s: &[u32]| -> [u32; 3] {
            if w >= 8 {
                [s[Slot::AUX], s[Slot::AUX + 1], s[Slot::AUX + 2]]
            } else {
                [0; 3]
            }
        };
        let jager_points = match self.shape.slot_kind {
            SlotKind::Jager(points) => points as usize,
            _ => 0,
        };
        // The slot `s` (its tangential vector `tangential`, with a wall slot's low part) as the
        // CPU's history of `kind`.
        let history = |kind: &ContactKind, tangential: DVec3, s: &[u32]| {
            let aux_words = aux_of(s);
            let aux = aux_words[0];
            Some(match kind {
                ContactKind::Spring(p)
                    if p.rolling.is_some_and(|r| {
                        r.rolling.model == wgdem_core::contact::rolling::RollingModel::Epsd
                    }) =>
                {
                    SlotHistory::SpringRolling(tangential, d3_words(&aux_words))
                }
                ContactKind::Spring(_) => SlotHistory::Spring(tangential),
                ContactKind::Linear(_) => SlotHistory::Linear(KuhnState {
                    overlap: f64::from(f32::from_bits(aux)),
                    tangential,
                    dissipated: 0.0,
                }),
                ContactKind::Hill(_) => SlotHistory::Hill(HillState {
                    shear: tangential,
                    moisture: match aux {
                        shared::moisture::RUPTURED => Moisture::Ruptured,
                        shared::moisture::WET => Moisture::Wet,
                        _ => Moisture::Dry,
                    },
                    dissipated: 0.0,
                }),
                ContactKind::Jager(_) if jager_points > 0 => {
                    SlotHistory::Jager(Box::new(jager_state(s, jager_points)))
                }
                ContactKind::Jager(_) => return None,
            })
        };
        let mut out = wgdem_core::snapshot::ContactHistories::default();
        let k = self.shape.params.slots as usize;
        let counts: Vec<u32> = self.read(&self.buffers.counts, n)?;
        let slots = self.read_slots()?;
        for i in 0..n {
            let c = (counts[i] as usize).min(k);
            for s in slots[i * k * w..(i * k + c) * w].chunks(w) {
                let slot = Slot::read(s);
                // Each pair once, from its body A (the smaller stable id).
                if !slot.is_a_side() {
                    continue;
                }
                let (a, b) = (ids[i], ids[slot.partner_index() as usize]);
                let kind = sim.pair_kind(a as usize, b as usize);
                match history(&kind, slot.tangential(), s) {
                    Some(h) if !h.is_blank() => {
                        out.pairs.insert((a, b), h);
                    }
                    Some(_) => {}
                    None => out.unreadable += 1,
                }
            }
        }
        let ws = self.shape.params.wall_slots as usize;
        let ww = wall_words(w);
        if ws > 0 && self.shape.wall_rows > 0 {
            let rows: Vec<u32> = self.read(&self.buffers.wall_row, n)?;
            let table: Vec<u32> = self.read(
                &self.buffers.wall_slots,
                self.shape.wall_rows as usize * ws * ww,
            )?;
            for (k, &row) in rows.iter().enumerate() {
                if row == shared::NO_ROW {
                    continue;
                }
                let i = ids[k];
                for s in table[row as usize * ws * ww..(row as usize + 1) * ws * ww].chunks(ww) {
                    let slot = Slot::read(s);
                    if slot.partner == shared::NO_WALL {
                        continue;
                    }
                    let wall = slot.partner;
                    // The low part of the history follows the neighbour slot (`WallSlot`).
                    let tangential = slot.tangential() + d3_words(&s[w..w + 3]);
                    let kind = sim.wall_kind(wall as usize, i as usize);
                    match history(&kind, tangential, s) {
                        Some(h) if !h.is_blank() => {
                            out.walls.insert((wall, i), h);
                        }
                        Some(_) => {}
                        None => out.unreadable += 1,
                    }
                }
            }
        }
        Ok(out)
    }
}

/// The Jäger contact state a slot's words `s` hold (a neighbour slot or the start of a wall slot
/// of `SlotKind::Jager(points)`), as the CPU reference keeps it: the tangential force in the
/// contact frame in `tangential.xy`, the number of history points in `tangential.z`'s bits,
/// the contact frame (a quaternion, xyzw) after the four aux words, then the points (ζ*, F*_n,
/// p*); the contact kernels write them (jager_slot.wgsl the head, models.wgsl the points
/// through slot_tables.wgsl). The count of merges the slot's capacity forced is not kept on
/// the device (0 here).
fn jager_state(s: &[u32], points: usize) -> wgdem_core::contact::jager::JagerState {
    use wgdem_core::contact::jager::{HistoryPoint, JagerState};
    let f = |k: usize| f64::from(f32::from_bits(s[k]));
    let frame = Slot::AUX + 4;
    let first = frame + 4;
    let count = (s[2] as usize).min(points);
    JagerState {
        history: (0..count)
            .map(|k| {
                let p = first + 4 * k;
                HistoryPoint {
                    zeta: f(p),
                    force: f(p + 1),
                    slope: DVec2::new(f(p + 2), f(p + 3)),
                }
            })
            .collect(),
        tangential: DVec2::new(f(0), f(1)),
        frame: DQuat::from_xyzw(f(frame), f(frame + 1), f(frame + 2), f(frame + 3)),
        forced_merges: 0,
    }
}

/// Three f32 stored as u32 words, in f64.
fn d3_words(w: &[u32]) -> DVec3 {
    DVec3::new(
        f64::from(f32::from_bits(w[0])),
        f64::from(f32::from_bits(w[1])),
        f64::from(f32::from_bits(w[2])),
    )
}

/// The first three components of a device vector, in f64.
pub(super) fn d3(a: [f32; 4]) -> DVec3 {
    DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64)
}
