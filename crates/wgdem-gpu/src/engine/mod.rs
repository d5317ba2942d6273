//! The GPU engine: buffers, pipelines and the passes of one time step.
//!
//! The order of the passes of one step is in the module `step` (`step.rs`), which reads as the
//! algorithm; the other modules each own one job:
//! - `state`: the buffers on the device, their sizes and the upload of a scene;
//! - `kernels`: the compute pipelines, each with its pass's binding table;
//! - `bindings`: bindings by name: a table row's WGSL global, access and buffer;
//! - `bind_groups`: the bind groups, built from the tables;
//! - `streaming`: batches in flight, wall-force readback, wall velocities, schedules;
//! - `regrow`: a table that overflowed is regrown and the batch finished;
//! - `checkpoint`: the state bit for bit;
//! - `profile`: stage timings, the byte model and the memory report;
//! - `readback`: the state back into the CPU's `Simulation`, lists for inspection.
//!
//! Steps are recorded `batch_steps` at a time into one compute pass and one submit; the host
//! reads back only the counters, wall forces and contact counts at the end of a batch. If a
//! neighbour list or a particle's wall slots would overflow, the rebuild finds it before
//! anything of that step is committed (`rebuild.walls_near` bounds the walls a particle can
//! touch until the next build) and `rebuild.halt` zeroes every remaining dispatch of the batch,
//! leaving the state as at the start of the failed step (the lists that fitted are rebuilt
//! already, carrying the same histories; an overflowing one is left as it was); the host
//! regrows the table to what was needed and finishes the batch from there. The result is the
//! one a table large enough from the start would give, and no copy of the state is kept for it.

use std::borrow::Cow;

use bytemuck::Pod;
use glam::{DQuat, DVec3};
use wgdem_core::contact::{ContactLaw, HistoryMode};
use wgdem_core::cpu::{MoistureEvent, Simulation, StepStats};
use wgdem_core::wall::WallShape;
use wgpu::util::DeviceExt;

use crate::context::{GpuError, read_buffer};
use crate::layout::{
    Chunk, Counters, Drive, ForceTorque, MoistureAction, PairRecord, Permute, Position, Predicted,
    RadixPass, SimParams, Slot, Wall, WallAlloc,
};
use crate::shaders::{self, SlotKind};
use crate::shared::{self, A_SIDE, PERMUTE_BLOCK};

mod bind_groups;
mod bindings;
mod checkpoint;
mod kernels;
mod profile;
mod readback;
mod regrow;
mod state;
mod step;
mod streaming;

use bind_groups::*;
use bindings::*;
use kernels::*;
use regrow::*;
use state::*;
use step::*;
use streaming::*;

pub use bindings::{Bind, Buf, Row, Table};
pub use kernels::{KERNEL_DECLS, KernelDecl};
pub use profile::StageTimes;
pub use state::{SLOT_HEADROOM, hash_table_bits};
pub use step::{STAGES, tables};
pub use streaming::{WallControl, WallReadout};

/// [`shared::WG`], the workgroup size of the per-particle kernels, for sizes in u64.
const WG64: u64 = shared::WG as u64;

/// Options of the GPU engine.
#[derive(Debug, Clone, Copy)]
pub struct GpuOptions {
    /// Neighbour slots per particle to start with (regrown when a list needs more). 0: sized
    /// from the scene, the most partners any particle has within the skin at the start plus
    /// [`SLOT_HEADROOM`].
    pub slots: u32,
    /// Steps recorded per submit.
    pub batch_steps: u32,
    /// Rebuild the neighbour lists every step instead of when some particle has moved half
    /// the skin (for tests: results must not depend on it beyond rounding).
    pub rebuild_every_step: bool,
    /// Wall slots per particle to start with (walls one particle touches at once; regrown
    /// when a particle touches more).
    pub wall_slots: u32,
    /// Rows of wall slots to start with: only the particles with a wall within their skin
    /// hold a row (regrown when more do). 0: as many as such particles at the start, plus a
    /// quarter.
    pub wall_rows: u32,
    /// Reorder particle data by cell at the first batch after every this many steps (0: never).
    pub reorder_every: u64,
    /// Compile the contact kernels for the scene's contact models only, and without the
    /// partner's material where every particle is of one material (see
    /// [`shaders::Specialization`]); `false` compiles them for every model and material
    /// (same results, slower).
    pub specialize: bool,
    /// Hold the per-particle arrays and neighbour slots as 64-bit words in the per-step
    /// kernels where the device has 64-bit integers (see [`shaders::words64`]); same results.
    /// `false` keeps 32-bit words (for tests of that path, which devices without 64-bit
    /// integers take).
    pub words64: bool,
}

impl Default for GpuOptions {
    fn default() -> Self {
        Self {
            slots: 0,
            batch_steps: 200,
            rebuild_every_step: false,
            wall_slots: 4,
            wall_rows: 0,
            reorder_every: 2000,
            specialize: true,
            words64: true,
        }
    }
}

/// The DEM engine on a wgpu device.
pub struct GpuEngine {
    device: wgpu::Device,
    queue: wgpu::Queue,
    kernels: Kernels,
    buffers: Buffers,
    groups: BindGroups,
    params: SimParams,
    radix_passes: u32,
    batch_steps: u32,
    last: WallReadout,
    staging: Vec<Staging>,
    /// Wall velocities as last written (m/s).
    wall_velocity: Vec<DVec3>,
    /// Per wall, its velocity schedule in the schedule points (`[first, count]`).
    wall_schedules: Vec<[u32; 2]>,
    /// The step at which the GPU counters were last cleared (they count steps begun).
    counted_from: u64,
    /// Steps taken.
    pub steps: u64,
    /// Simulated time (s).
    pub time: f64,
    /// Times the neighbour slots were regrown after an overflow.
    pub regrowths: u32,
    start_steps: u64,
    start_time: f64,
    dt: f64,
    reorder_every: u64,
    next_reorder: u64,
    options: GpuOptions,
    /// u32 words per contact slot: 4, or 8 when some pair uses the Kuhn or hill model.
    slot_words: usize,
    slot_kind: SlotKind,
    /// What the contact kernels are compiled for.
    spec: shaders::Specialization,
    /// Rows of wall slots the wall table holds.
    wall_rows: u32,
    /// The scene's moisture events in time order, and how many have been applied.
    moisture_events: Vec<MoistureEvent>,
    events_applied: usize,
}

impl GpuEngine {
    /// Uploads `sim` (at the start of a run: contact history begins empty) to `device`.
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        sim: &Simulation,
        options: GpuOptions,
    ) -> Result<Self, GpuError> {
        let p = &sim.particles;
        let n = p.len();
        if n == 0 {
            return Err(GpuError::Unsupported(
                "the GPU engine needs at least one particle; the CPU engine runs a scene without particles".to_owned(),
            ));
        }
        let limit =
            device.limits().max_compute_workgroups_per_dimension as usize * shared::WG as usize;
        if n > limit {
            return Err(GpuError::TooMany {
                what: "particles (its one-dimensional dispatch limit on this adapter)",
                count: n as u64,
                max: limit as u64,
            });
        }
        if n as u64 >= u64::from(A_SIDE) {
            return Err(GpuError::TooMany {
                what: "particles (a neighbour slot keeps its partner's index in 31 bits)",
                count: n as u64,
                max: u64::from(A_SIDE) - 1,
            });
        }
        let n_walls = sim.walls.len() as u32;
        if n_walls > shaders::MAX_WALLS {
            return Err(GpuError::TooMany {
                what: "walls",
                count: u64::from(n_walls),
                max: u64::from(shaders::MAX_WALLS),
            });
        }
        let slot_kind = slot_kind_for(sim)?;
        let slot_words = slot_kind.words();
        // Slots of 8 words and more belong to engines whose pairs may account their work.
        let wide = slot_words >= 8;
        let table_bits = hash_table_bits(n);
        // The CPU reference's skin: 10 % of the smallest diameter.
        let r_min = p.radius.iter().copied().fold(f64::INFINITY, f64::min);
        let skin = wgdem_core::cpu::DEFAULT_SKIN_FRACTION * 2.0 * r_min;
        let n_tiles = (n as u32).div_ceil(shared::RADIX_TILE);
        let params = SimParams {
            n: n as u32,
            slots: match options.slots {
                0 => initial_slots(sim, skin),
                k => k,
            },
            n_walls,
            n_materials: sim.n_materials() as u32,
            table_bits,
            law: match sim.model.law {
                ContactLaw::Hooke => shared::law::HOOKE,
                ContactLaw::Hertz => shared::law::HERTZ,
            },
            history: match sim.model.history {
                HistoryMode::True => shared::history::TRUE,
                HistoryMode::Pseudo => shared::history::PSEUDO,
                HistoryMode::None => shared::history::NONE,
            },
            n_tiles,
            dt: sim.dt as f32,
            cell_size: (2.0 * p.max_radius() + skin + sim.interaction_range()) as f32
                * (1.0 + 1e-6),
            skin: skin as f32,
            one: 1.0,
            gravity: v4(sim.gravity),
            rebuild_every_step: u32::from(options.rebuild_every_step),
            // The slot chunks and wall slots are set below.
            chunk_particles: 0,
            chunks: 0,
            wall_slots: 0,
            local_damping: sim.local_damping as f32,
            bridge_reach: sim.interaction_range() as f32,
            n_drives: sim.drives.len() as u32,
            max_speed_sq: {
                let m = sim.max_speed.min(f32::MAX as f64);
                (m * m).min(f32::MAX as f64) as f32
            },
        };

        let positions: Vec<Position> = (0..n)
            .map(|i| {
                let (mut hi, mut lo) = split3(p.position[i]);
                hi[3] = p.radius[i] as f32;
                lo[3] = p.mass[i] as f32;
                Position { hi, lo }
            })
            .collect();
        // The spare w words of the velocities carry a copy of the angular velocity (x in
        // `vel.w`, y and z in the predicted velocities' w), so that a pair loads its
        // partner's spin with its velocities (common.wgsl `spin_of`).
        let vel: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                let mut v = v4(p.velocity[i]);
                v[3] = p.angular_velocity[i].x as f32;
                v
            })
            .collect();
        // The low parts of the velocities and radii (double-single, as the positions).
        let fine: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                let (_, mut lo) = split3(p.velocity[i]);
                lo[3] = split(p.radius[i]).1;
                lo
            })
            .collect();
        let omega: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                let mut w = v4(p.angular_velocity[i]);
                w[3] = if p.spin_fixed[i] {
                    0.0
                } else {
                    (1.0 / p.inertia[i]) as f32
                };
                w
            })
            .collect();
        let orientation: Vec<[f32; 4]> = p
            .orientation
            .iter()
            .map(|q| [q.x as f32, q.y as f32, q.z as f32, q.w as f32])
            .collect();
        let pred: Vec<Predicted> = (0..n)
            .map(|i| {
                let w = v4(p.angular_velocity[i]);
                let mut v = vel[i];
                v[3] = w[1];
                Predicted {
                    v,
                    w: [w[0], w[1], w[2], w[2]],
                }
            })
            .collect();
        let material: Vec<u32> = p.material.iter().map(|&m| m as u32).collect();
        let pair_table = pair_table(sim);
        let drive_tables = drive_tables(sim);
        let walls: Vec<Wall> = gpu_walls(sim, &drive_tables.walls);

        let radix_passes = table_bits.div_ceil(4);
        let nw = n_walls.max(1) as u64;
        let table = 1u64 << table_bits;
        let n64 = n as u64;
        let chunks = slot_chunks(device, n as u32, params.slots, slot_words, None)?;
        let mut params = params;
        params.chunk_particles = chunks[0].count;
        params.chunks = chunks.len() as u32;
        // A particle touches few walls at once (regrown on overflow).
        params.wall_slots = options.wall_slots.clamp(1, n_walls.max(1));
        // Only the particles near a wall hold wall slots (regrown when more are).
        let wall_rows = match options.wall_rows {
            0 => {
                let near = (0..n)
                    .filter(|&i| {
                        sim.walls
                            .iter()
                            .any(|w| w.contact(p.position[i], p.radius[i] + skin).is_some())
                    })
                    .count();
                (near + near / 4 + 64).min(n.max(1))
            }
            rows => rows as usize,
        }
        .max(1) as u32;
        for (label, bytes, what) in [
            (
                "dem.wall_partial",
                nw * n64.div_ceil(WG64) * 32,
                format!("{} workgroups × {n_walls} walls × 32 B", n64.div_ceil(WG64)),
            ),
            (
                "dem.wall_history",
                wall_rows as u64 * params.wall_slots as u64 * 4 * wall_words(slot_words) as u64,
                format!(
                    "{wall_rows} rows (particles near a wall) × {} wall slots × {} B",
                    params.wall_slots,
                    4 * wall_words(slot_words)
                ),
            ),
            (
                "dem.cell_ranges",
                table * 8,
                format!("2^{table_bits} hash buckets × 8 B"),
            ),
            ("dem.position", n64 * 32, format!("{n} particles × 32 B")),
        ] {
            check_table(device, label, bytes, &what)?;
        }
        let buffers = Buffers {
            params: device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("dem.params"),
                contents: bytemuck::bytes_of(&params),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            }),
            radix_passes: (0..order_passes(radix_passes))
                .map(|k| {
                    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("dem.radix.pass"),
                        contents: bytemuck::bytes_of(&RadixPass {
                            shift: 4 * k,
                            _p0: 0,
                            _p1: 0,
                            _p2: 0,
                        }),
                        usage: wgpu::BufferUsages::UNIFORM,
                    })
                })
                .collect(),
            pos: init(device, "dem.position", &positions),
            vel: init(device, "dem.velocity", &vel),
            omega: init(device, "dem.angular_velocity", &omega),
            orientation: init(device, "dem.orientation", &orientation),
            pred: init(device, "dem.predicted_velocity", &pred),
            fine: init(device, "dem.low_parts", &fine),
            material: init(device, "dem.material", &material),
            pair_table: init(device, "dem.pair_table", &pair_table),
            walls: init(device, "dem.walls", &walls),
            ft: zeroed(device, "dem.force_torque", n as u64 * FORCE_TORQUE_BYTES),
            work: init(device, "dem.contact_work", &initial_work(sim, wide)),
            // Contact counts per workgroup of `contact_forces` (summed there).
            stats: zeroed(device, "dem.contact_stats", n64.div_ceil(WG64) * 16),
            cells: zeroed(device, "dem.cells", n as u64 * 4),
            keys: [
                zeroed(device, "dem.keys.a", n as u64 * 4),
                zeroed(device, "dem.keys.b", n as u64 * 4),
            ],
            vals: [
                zeroed(device, "dem.vals.a", n as u64 * 4),
                zeroed(device, "dem.vals.b", n as u64 * 4),
            ],
            tile_hist: zeroed(device, "dem.radix.tile_hist", 16 * n_tiles as u64 * 4),
            ranges: zeroed(device, "dem.cell_ranges", table * 8),
            counts: zeroed(device, "dem.neighbour_count", n as u64 * 4),
            dispatch_args: dispatch_args(device, chunks.len()),
            chunks,
            built_at: zeroed(device, "dem.built_at", n as u64 * 16),
            walls_built: init(
                device,
                "dem.walls_built",
                &walls
                    .iter()
                    .flat_map(|w| [w.point_hi, w.point_lo])
                    .chain(std::iter::once([0.0f32; 4]))
                    .collect::<Vec<_>>(),
            ),
            drive_of: init(device, "dem.drive_of", &drive_tables.drive_of),
            drives: init(device, "dem.drives", &drive_tables.drives),
            schedule_points: init(device, "dem.schedule_points", &drive_tables.points),
            ids: init(
                device,
                "dem.stable_id",
                &(0..n as u32).collect::<Vec<u32>>(),
            ),
            dummy: zeroed(device, "dem.permute.unused", 16),
            moisture_action: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("dem.moisture.action"),
                size: 16,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            // The flag starts set: the first step builds the lists.
            rebuild_state: init(device, "dem.rebuild_state", &[1u32, 0, 0, 0]),

            wall_slots: init(
                device,
                "dem.wall_history",
                &empty_wall_slots(
                    wall_rows as usize * params.wall_slots as usize,
                    wall_words(slot_words),
                ),
            ),
            wall_row: init(device, "dem.wall_row", &vec![shared::NO_ROW; n.max(1)]),
            wall_free: zeroed(device, "dem.wall_free", wall_rows.max(1) as u64 * 4),
            wall_alloc: init(
                device,
                "dem.wall_alloc",
                &[WallAlloc {
                    top: 0,
                    next: 0,
                    capacity: wall_rows,
                    _p0: 0,
                }],
            ),
            wall_mask: zeroed(device, "dem.wall_mask", n as u64 * 4),
            wall_partial: zeroed(device, "dem.wall_partial", nw * n64.div_ceil(WG64) * 32),
            wall_out: zeroed(device, "dem.wall_force", nw * 32),
            stats_out: zeroed(device, "dem.contact_stats.total", 16),
            counters: zeroed(device, "dem.counters", size_of::<Counters>() as u64),
        };
        // The list build's private arrays are sized for the table's slots in either case.
        let words64 = options.words64 && device.features().contains(wgpu::Features::SHADER_INT64);
        let spec = if options.specialize {
            shaders::Specialization {
                models: model_mask(&pair_table),
                slots: params.slots,
                words64,
                one_material: material
                    .first()
                    .copied()
                    .filter(|&m0| material.iter().all(|&m| m == m0)),
            }
        } else {
            shaders::Specialization {
                slots: params.slots,
                words64,
                ..shaders::Specialization::ANY
            }
        };
        let kernels = Kernels::new(device, slot_kind, spec);
        let groups = Self::bind_groups(
            device,
            &kernels,
            &buffers,
            radix_passes,
            params.n,
            params.slots * slot_words as u32,
        );
        Ok(Self {
            device: device.clone(),
            queue: queue.clone(),
            kernels,
            buffers,
            groups,
            params,
            radix_passes,
            batch_steps: options.batch_steps.max(1),
            last: WallReadout::default(),
            staging: Vec::new(),
            wall_velocity: sim.walls.iter().map(|w| w.velocity).collect(),
            wall_schedules: drive_tables.walls,
            counted_from: sim.steps,
            steps: sim.steps,
            time: sim.time,
            regrowths: 0,
            start_steps: sim.steps,
            start_time: sim.time,
            dt: sim.dt,
            reorder_every: options.reorder_every,
            // The first reorder comes after `reorder_every` steps: the initial order is the
            // scene's, and the lists are empty until the first build.
            next_reorder: sim.steps + options.reorder_every.max(1),
            options,
            slot_words,
            slot_kind,
            spec,
            wall_rows,
            moisture_events: sim.moisture_events().0.to_vec(),
            events_applied: sim.moisture_events().1,
        })
    }

    /// Reorders the particle data by cell (Morton order) at the next batch, and every
    /// `reorder_every` steps from there. A scene's own order can be anything (a lattice, a
    /// generator's), and the first scheduled reorder comes `reorder_every` steps after the start;
    /// `wgdem bench` calls this so that it times the order a long run has. Does nothing when
    /// `reorder_every` is 0.
    pub fn reorder_next_batch(&mut self) {
        self.next_reorder = self.steps;
    }

    /// Steps recorded per submit; also the interval at which `run_streaming` reports.
    pub fn set_batch_steps(&mut self, steps: u32) {
        self.batch_steps = steps.max(1);
        self.options.batch_steps = self.batch_steps;
    }

    /// Uploads the walls of `sim` (geometry, velocity), e.g. a plate the host moved.
    pub fn update_walls(&mut self, sim: &Simulation) {
        let walls: Vec<Wall> = gpu_walls(sim, &self.wall_schedules);
        self.wall_velocity = sim.walls.iter().map(|w| w.velocity).collect();
        if !walls.is_empty() {
            self.queue
                .write_buffer(&self.buffers.walls, 0, bytemuck::cast_slice(&walls));
        }
    }

    /// Sets wall `wall`'s velocity (m/s) from the next batch on, as a servo does between
    /// batches (see [`GpuEngine::run_streaming`] for the same within a run).
    pub fn set_wall_velocity(&mut self, wall: usize, velocity: DVec3) {
        write_wall_velocity(&self.queue, &self.buffers.walls, wall, velocity);
        if let Some(v) = self.wall_velocity.get_mut(wall) {
            *v = velocity;
        }
    }

    /// Uploads the particles' velocities and angular velocities of `sim` (e.g. set by the
    /// host between batches), keeping positions and contact history. The velocities the
    /// dashpots see in the next step are predicted from them as from the engine's own: each
    /// particle keeps the increment `F Δt / 2m` (and `T Δt / 2I`) it had.
    pub fn write_velocities(&mut self, sim: &Simulation) -> Result<(), GpuError> {
        let n = self.params.n as usize;
        let ids = self.particle_order()?;
        let mut vel: Vec<[f32; 4]> = self.read(&self.buffers.vel, n)?;
        let mut omega: Vec<[f32; 4]> = self.read(&self.buffers.omega, n)?;
        let mut pred: Vec<Predicted> = self.read(&self.buffers.pred, n)?;
        let mut fine: Vec<[f32; 4]> = self.read(&self.buffers.fine, n)?;
        for (k, &id) in ids.iter().enumerate() {
            let (v, v_lo) = split3(sim.particles.velocity[id as usize]);
            let w = v4(sim.particles.angular_velocity[id as usize]);
            fine[k][..3].copy_from_slice(&v_lo[..3]);
            for c in 0..3 {
                pred[k].v[c] = v[c] + (pred[k].v[c] - vel[k][c]);
                pred[k].w[c] = w[c] + (pred[k].w[c] - omega[k][c]);
                vel[k][c] = v[c];
                omega[k][c] = w[c];
            }
            // The spare words' copies of the spin (`spin_of` in common.wgsl).
            vel[k][3] = w[0];
            pred[k].v[3] = w[1];
            pred[k].w[3] = w[2];
        }
        let b = &self.buffers;
        self.queue
            .write_buffer(&b.vel, 0, bytemuck::cast_slice(&vel));
        self.queue
            .write_buffer(&b.omega, 0, bytemuck::cast_slice(&omega));
        self.queue
            .write_buffer(&b.pred, 0, bytemuck::cast_slice(&pred));
        self.queue
            .write_buffer(&b.fine, 0, bytemuck::cast_slice(&fine));
        Ok(())
    }

    /// Uploads the material-pair table of `sim` (contact history is kept). The contact kernels
    /// are compiled for the models the pairs use (see [`shaders::Specialization`]): a table
    /// that brings in another model recompiles them; one that needs another slot layout (wider
    /// history) is refused.
    pub fn update_pair_table(&mut self, sim: &Simulation) -> Result<(), GpuError> {
        if !self.slot_kind.holds(slot_kind_for(sim)?) {
            return Err(GpuError::Unsupported(
                "the new material-pair table uses a contact model whose history does not fit this engine's slots; start a new engine for it".to_owned(),
            ));
        }
        let table = pair_table(sim);
        let models = model_mask(&table);
        self.queue
            .write_buffer(&self.buffers.pair_table, 0, bytemuck::cast_slice(&table));
        if models & !self.spec.models != 0 {
            self.spec.models |= models;
            self.kernels = Kernels::new(&self.device, self.slot_kind, self.spec);
            self.rebind();
        }
        Ok(())
    }

    /// A new engine on the same device for `sim`, with this one's options (history empty).
    pub fn rebuild(&self, sim: &Simulation) -> Result<Self, GpuError> {
        Self::new(&self.device, &self.queue, sim, self.options)
    }
}
