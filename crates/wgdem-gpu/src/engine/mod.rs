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
//! Steps are recorded `batch_steps` at a time into one compute pass and one submit (most of
//! them lean, without the rebuild's passes: `step::GpuEngine::record_batch`); the host reads
//! back only the counters, wall forces and contact counts at the end of a batch. If a
//! neighbour list or a particle's wall slots would overflow, the rebuild finds it before
//! anything of that step is committed (`rebuild.walls_near` bounds the walls a particle can
//! touch until the next build) and `rebuild.halt` zeroes every remaining dispatch of the batch,
//! leaving the state as at the start of the failed step (the lists that fitted are rebuilt
//! already, carrying the same histories; an overflowing one is left as it was); the host
//! regrows the table to what was needed and finishes the batch from there. The result is the
//! one a table large enough from the start would give, and no copy of the state is kept for it.

use glam::DVec3;
use wgdem_core::cpu::{MoistureEvent, Simulation};

use crate::context::GpuError;
use crate::layout::{Predicted, SimParams, Wall};
use crate::shaders::{self, SlotKind};
use crate::shared;

mod bind_groups;
mod bindings;
mod cell;
mod checkpoint;
mod kernels;
mod profile;
mod readback;
mod regrow;
mod state;
mod step;
mod streaming;
pub mod tables;
mod upload;

use bind_groups::BindGroups;
use kernels::Kernels;
use state::{Buffers, gpu_walls, model_mask, pair_table, slot_chunks, slot_kind_for, split3, v4};
use streaming::{Staging, write_wall_velocity};
pub(crate) use upload::cpu_only;
use upload::{
    SceneArrays, check_scene, check_tables, initial_wall_rows, sim_params, single_workgroup,
    skin_of, specialization,
};

pub use bindings::{Bind, Buf, Row, Table, unused};
pub use kernels::{KERNEL_DECLS, KernelDecl, storage_buffers_per_kernel};
pub use profile::StageTimes;
pub use state::{SLOT_HEADROOM, hash_table_bits};
pub use step::{LEAN_EVERY, STAGES};
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
    /// kernels where the device has 64-bit integers (the `words64` flag of common.wgsl, see
    /// [`shaders::Specialization::words64`]); same results.
    /// `false` keeps 32-bit words (for tests of that path, which devices without 64-bit
    /// integers take).
    pub words64: bool,
    /// Take many steps per dispatch in one workgroup (`integrate.steps`): `None` chooses by
    /// size ([`SINGLE_WORKGROUP_MAX`] particles or fewer on a software adapter,
    /// [`SINGLE_WORKGROUP_MAX_HARDWARE`] on a GPU; one slot chunk, lists rebuilt only
    /// when due, and a device that binds the kernel's 31 storage buffers); `Some(true)` takes
    /// it wherever it can run, `Some(false)` never. Same bits as the general path.
    pub single_workgroup: Option<bool>,
    /// Record the general path's steps lean where they can be: every
    /// [`LEAN_EVERY`]-th step of a batch full (the rebuild's passes, zero-sized where no
    /// rebuild is due), the others without them (four dispatches, one of them zero-sized,
    /// against a full step's twelve). `false` records every step full. Same bits either way.
    pub lean_steps: bool,
    /// Evaluate each pair once, on its A side, which hands the force and torque on B to B's
    /// neighbour slot (`hand`, 32 bytes more per slot, and a 4-byte link), instead of on both
    /// sides: `None` chooses it on a software adapter where the slots are wide (Kuhn's and the
    /// hill model, Type C rolling resistance, Jäger's), whose arithmetic outweighs the handed
    /// bytes there (1.2–1.3× on lavapipe), and not for the 16-byte slots of the spring–dashpot
    /// laws, whose slot memory it would multiply by 3.25 for about a tenth; nor on a GPU, where
    /// the bytes decide and it was slower for every model (0.69× for Kuhn's at 10⁶ spheres on
    /// an NVIDIA H100; docs/decisions/pairs-once.md). Only where the slots are one chunk (a
    /// partner's slot must be in the same binding). Same bits either way.
    pub pairs_once: Option<bool>,
}

/// The most particles for which [`GpuOptions::single_workgroup`] chooses one workgroup on a
/// software adapter (a CPU: lavapipe). On lavapipe (2 cores) a step of the general path has a
/// fixed cost of its dispatches (about 0.8 ms with full steps only, less with lean steps), and
/// the workgroup (one core) costs about 0.5–0.7 µs per sphere-step of a dense packing: on
/// `wgdem bench`'s lattice, with lean steps, it was the faster at 1 000 and 1 210 spheres and
/// the slower from 1 584 (docs/decisions/lean-steps.md; 2 560 before lean steps).
pub const SINGLE_WORKGROUP_MAX: u32 = 1500;

/// The same on a hardware GPU, where one workgroup holds one of the device's many
/// multiprocessors. On an NVIDIA H100 a lean step of the general path cost about 45 µs
/// whatever the size up to 10⁴ spheres, the single workgroup about 0.13 µs per sphere-step:
/// it was 2.6× the faster at 125 spheres, as fast at 343 and 1.5× the slower at 512
/// (docs/decisions/single-workgroup.md). Other GPUs were not measured.
pub const SINGLE_WORKGROUP_MAX_HARDWARE: u32 = 340;

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
            single_workgroup: None,
            lean_steps: true,
            pairs_once: None,
        }
    }
}

impl GpuOptions {
    /// Whether pairs are to be evaluated once with slots of `kind` on an adapter of type
    /// `device` (where the slots are one chunk): [`GpuOptions::pairs_once`], or by default on
    /// a software adapter where the slots are wide.
    pub(super) fn wants_pairs_once(&self, kind: SlotKind, device: wgpu::DeviceType) -> bool {
        self.pairs_once
            .unwrap_or(kind != SlotKind::Narrow && device == wgpu::DeviceType::Cpu)
    }
}

/// The DEM engine on a wgpu device.
pub struct GpuEngine {
    device: wgpu::Device,
    queue: wgpu::Queue,
    buffers: Buffers,
    shape: Shape,
    pipelines: Pipelines,
    stream: Stream,
    schedule: Schedule,
    options: GpuOptions,
    /// The periodic cell on the host's side, where the scene has one (`cell.rs`).
    cell: Option<cell::HostCell>,
    /// Steps taken.
    pub steps: u64,
    /// Simulated time (s).
    pub time: f64,
    /// Times the neighbour slots were regrown after an overflow.
    pub regrowths: u32,
    /// Batches that met more rebuilds than they had rounds (single workgroup) or spare steps
    /// (general path) for, and were finished by the next batch.
    pub short_batches: u64,
}

/// The layout and sizes of the state on the device (what a regrowth changes).
struct Shape {
    /// The kernels' parameters (counts, sizes, the scene's constants).
    params: SimParams,
    /// Layout of the neighbour slots.
    slot_kind: SlotKind,
    /// u32 words per contact slot: 4, or 8 when some pair uses the Kuhn or hill model.
    slot_words: usize,
    /// Rows of wall slots the wall table holds.
    wall_rows: u32,
}

/// The compiled kernels and their bind groups.
struct Pipelines {
    kernels: Kernels,
    groups: BindGroups,
    /// What the contact kernels are compiled for.
    spec: shaders::Specialization,
}

/// Batches in flight and what the host sees of the walls between them.
struct Stream {
    /// Steps recorded per submit.
    batch_steps: u32,
    /// The wall forces and contact counts last read back.
    last: WallReadout,
    /// Staging buffers of the batches in flight.
    staging: Vec<Staging>,
    /// Wall velocities as last written (m/s).
    wall_velocity: Vec<DVec3>,
    /// Per wall, its velocity schedule in the schedule points (`[first, count]`).
    wall_schedules: Vec<[u32; 2]>,
    /// The step at which the GPU counters were last cleared (they count steps begun).
    counted_from: u64,
    /// Rounds (a general step, then `integrate.steps`) recorded per single-workgroup batch
    /// for rebuilds within it: as many as the last batch met (twice as many after a batch
    /// that ran out of them).
    rounds: u32,
    /// Spare steps recorded after a general-path batch's own, for the lean steps that
    /// rebuilds within it lose (`step::LEAN_EVERY`): as many as the last batch lost and a
    /// quarter more, at least `LEAN_EVERY` (twice as many after a batch that lost more).
    spare: u32,
    /// Whether the next single-workgroup batch begins with a general step: the lists are
    /// due for a rebuild (at the start, after a batch that stopped for one).
    rebuild_first: bool,
}

/// The run's clock and what is due at given steps: reorders and moisture events.
struct Schedule {
    /// Time step (s).
    dt: f64,
    /// Steps and time at the engine's start.
    start_steps: u64,
    start_time: f64,
    /// Reorder the particle data every this many steps (0: never), next at `next_reorder`.
    reorder_every: u64,
    next_reorder: u64,
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
        check_scene(device, sim)?;
        kernels::check_storage_buffers(device.limits().max_storage_buffers_per_shader_stage)?;
        let slot_kind = slot_kind_for(sim)?;
        let slot_words = slot_kind.words();
        let skin = skin_of(sim);
        let mut params = sim_params(sim, &options, skin);
        let chunks = slot_chunks(
            device,
            params.n,
            params.slots,
            slot_words,
            None,
            options.wants_pairs_once(slot_kind, device.adapter_info().device_type),
        )?;
        params.chunk_particles = chunks[0].count;
        params.chunks = chunks.len() as u32;
        // A particle touches few walls at once (regrown on overflow).
        params.wall_slots = options.wall_slots.clamp(1, params.n_walls.max(1));
        let wall_rows = initial_wall_rows(sim, &options, skin);
        check_tables(device, &params, wall_rows, slot_words)?;
        let scene = SceneArrays::of(sim);
        let buffers = Buffers::upload(device, sim, &params, &scene, chunks, wall_rows, slot_words);
        let spec = specialization(device, &options, &params, &scene);
        let single_workgroup = single_workgroup(device, &options, &params);
        let kernels = Kernels::new(
            device,
            slot_kind,
            spec,
            single_workgroup,
            params.periodic != 0,
        );
        let groups = Self::bind_groups(
            device,
            &kernels,
            &buffers,
            params.n,
            params.slots * slot_words as u32,
        );
        let drive_tables = scene.drive_tables;
        let reach = 2.0 * sim.particles.max_radius() + skin + sim.interaction_range();
        let cell = sim.cell().map(|c| cell::HostCell::new(*c, reach));
        Ok(Self {
            device: device.clone(),
            queue: queue.clone(),
            buffers,
            shape: Shape {
                params,
                slot_kind,
                slot_words,
                wall_rows,
            },
            pipelines: Pipelines {
                kernels,
                groups,
                spec,
            },
            stream: Stream {
                batch_steps: options.batch_steps.max(1),
                last: WallReadout::default(),
                staging: Vec::new(),
                wall_velocity: sim.walls.iter().map(|w| w.velocity).collect(),
                wall_schedules: drive_tables.walls,
                counted_from: sim.steps,
                rounds: 0,
                spare: step::LEAN_EVERY,
                rebuild_first: true,
            },
            schedule: Schedule {
                dt: sim.dt,
                start_steps: sim.steps,
                start_time: sim.time,
                reorder_every: options.reorder_every,
                // The first reorder comes after `reorder_every` steps: the initial order is
                // the scene's, and the lists are empty until the first build.
                next_reorder: sim.steps + options.reorder_every.max(1),
                moisture_events: sim.moisture_events().0.to_vec(),
                events_applied: sim.moisture_events().1,
            },
            options,
            cell,
            steps: sim.steps,
            time: sim.time,
            regrowths: 0,
            short_batches: 0,
        })
    }

    /// Reorders the particle data by cell (Morton order) at the next batch, and every
    /// `reorder_every` steps from there. A scene's own order can be anything (a lattice, a
    /// generator's), and the first scheduled reorder comes `reorder_every` steps after the start;
    /// `wgdem bench` calls this so that it times the order a long run has. Does nothing when
    /// `reorder_every` is 0.
    pub fn reorder_next_batch(&mut self) {
        self.schedule.next_reorder = self.steps;
    }

    /// Steps recorded per submit; also the interval at which `run_streaming` reports.
    pub fn set_batch_steps(&mut self, steps: u32) {
        self.stream.batch_steps = steps.max(1);
        self.options.batch_steps = self.stream.batch_steps;
    }

    /// Uploads the walls of `sim` (geometry, velocity), e.g. a plate the host moved.
    pub fn update_walls(&mut self, sim: &Simulation) {
        let walls: Vec<Wall> = gpu_walls(sim, &self.stream.wall_schedules);
        self.stream.wall_velocity = sim.walls.iter().map(|w| w.velocity).collect();
        if !walls.is_empty() {
            self.queue
                .write_buffer(&self.buffers.walls, 0, bytemuck::cast_slice(&walls));
        }
    }

    /// Sets wall `wall`'s velocity (m/s) from the next batch on, as a servo does between
    /// batches (see [`GpuEngine::run_streaming`] for the same within a run).
    pub fn set_wall_velocity(&mut self, wall: usize, velocity: DVec3) {
        write_wall_velocity(&self.queue, &self.buffers.walls, wall, velocity);
        if let Some(v) = self.stream.wall_velocity.get_mut(wall) {
            *v = velocity;
        }
    }

    /// Uploads the particles' velocities and angular velocities of `sim` (e.g. set by the
    /// host between batches), keeping positions and contact history. The velocities the
    /// dashpots see in the next step are predicted from them as from the engine's own: each
    /// particle keeps the increment `F Δt / 2m` (and `T Δt / 2I`) it had.
    pub fn write_velocities(&mut self, sim: &Simulation) -> Result<(), GpuError> {
        let n = self.shape.params.n as usize;
        let ids = self.particle_order()?;
        let mut vel: Vec<[f32; 4]> = self.read(&self.buffers.vel, n)?;
        let mut pred: Vec<Predicted> = self.read(&self.buffers.pred, n)?;
        let mut fine: Vec<[f32; 4]> = self.read(&self.buffers.fine, n)?;
        for (k, &id) in ids.iter().enumerate() {
            let (v, v_lo) = split3(sim.particles.velocity[id as usize]);
            let w = v4(sim.particles.angular_velocity[id as usize]);
            // The engine's angular velocity, from its copies in the spare words.
            let w_old = [vel[k][3], pred[k].v[3], pred[k].w[3]];
            fine[k][..3].copy_from_slice(&v_lo[..3]);
            for c in 0..3 {
                pred[k].v[c] = v[c] + (pred[k].v[c] - vel[k][c]);
                pred[k].w[c] = w[c] + (pred[k].w[c] - w_old[c]);
                vel[k][c] = v[c];
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
        if !self.shape.slot_kind.holds(slot_kind_for(sim)?) {
            return Err(GpuError::Unsupported(
                "the new material-pair table uses a contact model whose history does not fit this engine's slots; start a new engine for it".to_owned(),
            ));
        }
        let table = pair_table(sim);
        let models = model_mask(&table);
        self.queue
            .write_buffer(&self.buffers.pair_table, 0, bytemuck::cast_slice(&table));
        if models & !self.pipelines.spec.models != 0 {
            self.pipelines.spec.models |= models;
            self.remake_kernels();
            self.rebind();
        }
        Ok(())
    }

    /// Makes the kernels again for `self.pipelines.spec` (after it changed), with the paths
    /// this engine has (the single workgroup's, a periodic cell's stress sums).
    fn remake_kernels(&mut self) {
        self.pipelines.kernels = Kernels::new(
            &self.device,
            self.shape.slot_kind,
            self.pipelines.spec,
            self.pipelines.kernels.steps.is_some(),
            self.pipelines.kernels.cell_reduce.is_some(),
        );
    }

    /// Takes over `sim`'s gravity and local damping from the next step on (contact history,
    /// state and tables kept): a host that settles a packing with damping, then switches it
    /// off, or tilts gravity between stages.
    pub fn update_gravity_and_damping(&mut self, sim: &Simulation) {
        self.shape.params.gravity = v4(sim.gravity);
        self.shape.params.local_damping = sim.local_damping as f32;
        self.queue.write_buffer(
            &self.buffers.params,
            0,
            bytemuck::bytes_of(&self.shape.params),
        );
    }

    /// A new engine on the same device for `sim`, with this one's options (history empty).
    pub fn rebuild(&self, sim: &Simulation) -> Result<Self, GpuError> {
        Self::new(&self.device, &self.queue, sim, self.options)
    }
}
