//! One time step, pass by pass: the order in which the kernels run and what each dispatch
//! covers. `GpuEngine::record_step` is the algorithm; the rest of the engine sizes, binds,
//! submits and reads back around it.
//!
//! One step, in order (each line is a labelled dispatch):
//! 1. `rebuild.plan`: has any particle (flagged by the previous step's `integrate`, or by the
//!    host) or wall moved half the skin since the last build? The answer becomes the indirect
//!    dispatch sizes of steps 2–5 (full or zero), so the lists are rebuilt only when needed and
//!    the host never has to ask;
//! 2. (every `reorder_every` steps, at a batch start, with a rebuild forced: `hash.order`,
//!    `radix.count` / `radix.scan` / `radix.scatter` × 7, a stable sort by the cells' Morton
//!    code, then `permute.*`, which reorders all particle data, neighbour slots and stable ids
//!    into that order;)
//! 3. `hash.clear`, `hash`: cell and bucket of every particle, each bucket's particles
//!    counted (the build's arrays lie in the force array, dead until `contact_forces`);
//! 4. `buckets.scan`, `buckets.scatter`, `buckets.settle`: the counting sort by (bucket,
//!    index), each bucket's range in the sorted order;
//! 5. `neighbours`, `rebuild.walls_near`, `rebuild.walls_alloc`, `rebuild.halt`: each
//!    particle's partners within the skin, rebuilt in place with history carried over by
//!    partner (its slot's partner word also holds the pair's canonical order, from the stable
//!    ids); its walls within the skin counted; on an overflow the batch stops here;
//! 6. `contact_forces`: pair and wall forces, summed per particle in list order;
//! 7. `wall_reduce` (once, at the end of a batch, from the sums of its last step): per-wall force
//!    and torque, contact counts;
//! 8. `integrate`: (in a step that rebuilt, the positions of the build recorded, then)
//!    semi-implicit Euler in double-single, flagging a particle that has moved
//!    half the skin since the last build (for the next step's `plan`); walls move.
//!
//! That is a full step. A batch records every [`LEAN_EVERY`]-th step full and the others lean:
//! `rebuild.lean_plan` (the step is taken unless a rebuild is due), 6 and 8, which gives the
//! same steps with four dispatches instead of twelve ([`GpuEngine::record_batch`]; 6 is two
//! dispatches, `forces_only` and `main`, one of them zero-sized: the plan sizes `main`, which
//! sums the wall forces and contact counts, for the batch's last step only).

use super::GpuEngine;
use super::kernels::{Kernel, direct_dispatch, indirect_dispatch};
use super::state::ORDER_PASSES;
use crate::shared;

/// The stages of one step, in order (see [`GpuEngine::profile_stages`]): the rebuild plan
/// (whether this step rebuilds: `integrate` has flagged the particles that moved half the
/// skin), the sort (cell hash, radix sort, reorder, cell ranges), the neighbour lists (build and
/// history carry-over, and a moisture event applied to them), the contact forces (with the wall
/// reduction) and the integration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    RebuildPlan,
    Sort,
    Neighbours,
    Contacts,
    Integrate,
}

impl Stage {
    /// Every stage, in step order.
    pub(super) const ALL: [Stage; 5] = [
        Stage::RebuildPlan,
        Stage::Sort,
        Stage::Neighbours,
        Stage::Contacts,
        Stage::Integrate,
    ];

    /// Its name in profiles.
    pub(super) const fn name(self) -> &'static str {
        match self {
            Stage::RebuildPlan => "rebuild_plan",
            Stage::Sort => "sort",
            Stage::Neighbours => "neighbours",
            Stage::Contacts => "contacts",
            Stage::Integrate => "integrate",
        }
    }
}

/// The names of [`Stage::ALL`], in step order.
pub const STAGES: [&str; 5] = {
    let mut names = [""; 5];
    let mut i = 0;
    while i < Stage::ALL.len() {
        names[i] = Stage::ALL[i].name();
        i += 1;
    }
    names
};

/// Full steps among the steps a general-path batch records: every `LEAN_EVERY`-th (the
/// first included) is a full step, the others lean (see [`GpuEngine::record_batch`]). A lean
/// step costs four dispatches against a full one's twelve; a rebuild falling due in a lean
/// step loses the lean steps up to the next full one (`rebuild.lean_plan`).
pub const LEAN_EVERY: u32 = 16;

/// What one recorded step does beyond the stages every step runs.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct StepKind {
    /// Move the particles into Morton order within the sort.
    pub(super) reorder: bool,
    /// Apply the action in `moisture_action` to the lists just built (before the contact
    /// forces, as the CPU applies an event at the start of a step).
    pub(super) moisture: bool,
}

/// Slots of the indirect dispatch arguments (`plan` and `lean_plan` in rebuild.wgsl write them
/// each step).
#[derive(Debug, Clone, Copy)]
pub(super) enum Args {
    /// Rebuild kernels, zero-sized unless a rebuild is due: per particle, per radix tile, one
    /// group, per hash bucket, per particle of slot chunk c.
    RebuildParticles,
    RebuildTiles,
    RebuildOne,
    RebuildBuckets,
    RebuildChunk(usize),
    /// Every other kernel of a step, zero-sized once a table has overflowed or where the
    /// step is not taken: per particle, per particle of slot chunk c; the same for the
    /// contact forces without the wall sums and contact counts (zero in a batch's last step)
    /// and with them (zero in every other).
    Particles,
    Chunk(usize),
    ForcesChunk(usize),
    SumChunk(usize),
}

impl Args {
    /// Index of the argument triple with `chunks` slot chunks.
    pub(super) fn slot(self, chunks: usize) -> u64 {
        use shared::args;
        let step = (args::REBUILD_CHUNKS as usize + chunks) as u64;
        match self {
            Args::RebuildParticles => args::REBUILD_PARTICLES.into(),
            Args::RebuildTiles => args::REBUILD_TILES.into(),
            Args::RebuildOne => args::REBUILD_ONE.into(),
            Args::RebuildBuckets => args::REBUILD_BUCKETS.into(),
            Args::RebuildChunk(c) => (args::REBUILD_CHUNKS as usize + c) as u64,
            Args::Particles => step + u64::from(args::STEP_PARTICLES),
            Args::Chunk(c) => step + u64::from(args::STEP_CHUNKS) + c as u64,
            Args::ForcesChunk(c) => step + u64::from(args::STEP_CHUNKS) + (chunks + c) as u64,
            Args::SumChunk(c) => step + u64::from(args::STEP_CHUNKS) + (2 * chunks + c) as u64,
        }
    }
}

impl GpuEngine {
    /// Records one time step into `pass`: the algorithm, stage by stage.
    pub(super) fn record_step(&self, pass: &mut wgpu::ComputePass<'_>, kind: StepKind) {
        for stage in Stage::ALL {
            self.record_stage(pass, stage, kind);
        }
    }

    /// Records stage `stage` of a step of kind `kind` (alone for
    /// [`GpuEngine::profile_stages`]).
    pub(super) fn record_stage(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        stage: Stage,
        kind: StepKind,
    ) {
        match stage {
            Stage::RebuildPlan => {
                if kind.reorder {
                    let (k, g) = (&self.pipelines.kernels, &self.pipelines.groups);
                    direct_dispatch(pass, &k.force, &g.rebuild, 1);
                }
                self.plan_rebuild(pass);
            }
            Stage::Sort => self.sort(pass, kind.reorder),
            Stage::Neighbours => {
                self.build_lists(pass);
                if kind.moisture {
                    self.apply_moisture(pass);
                }
            }
            Stage::Contacts => self.contact_forces(pass),
            Stage::Integrate => self.integrate(pass),
        }
    }

    /// `rebuild.plan`: whether this step rebuilds, as the dispatch sizes of the rest.
    fn plan_rebuild(&self, pass: &mut wgpu::ComputePass<'_>) {
        direct_dispatch(
            pass,
            &self.pipelines.kernels.rebuild_plan,
            &self.pipelines.groups.rebuild,
            1,
        );
    }

    /// `neighbours`, `rebuild.walls_near`, `rebuild.walls_alloc`, `rebuild.halt`: each
    /// particle's partners and walls within the skin, with their histories carried over; the
    /// batch stops here on an overflow.
    fn build_lists(&self, pass: &mut wgpu::ComputePass<'_>) {
        let (k, g) = (&self.pipelines.kernels, &self.pipelines.groups);
        for c in 0..self.buffers.chunks.len() {
            self.indirect(pass, &k.neighbours, &g.neighbours[c], Args::RebuildChunk(c));
        }
        // Where pairs are evaluated once: link each pair's two slots.
        if self.pairs_once() {
            self.indirect(pass, &k.link, &g.neighbours[0], Args::RebuildChunk(0));
        }
        if self.shape.params.n_walls > 0 {
            self.indirect(
                pass,
                &k.rebuild_walls,
                &g.rebuild_walls,
                Args::RebuildParticles,
            );
            self.indirect(
                pass,
                &k.rebuild_walls_alloc,
                &g.rebuild_walls,
                Args::RebuildParticles,
            );
        }
        // Nothing of the step that changes its outcome is committed before this point (the
        // lists that fitted are rebuilt in place, with the same histories; wall rows handed
        // out are only addresses): on an overflow, the rest of the batch is dispatched with
        // zero workgroups, and the step is begun again. (A direct dispatch in every step:
        // `halt` writes the arguments an indirect one would be read from.) The positions of
        // the build are recorded by `integrate`.
        direct_dispatch(pass, &k.rebuild_halt, &g.rebuild, 1);
    }

    /// `moisture`: a moisture event applied to every listed pair, slot chunk by chunk.
    fn apply_moisture(&self, pass: &mut wgpu::ComputePass<'_>) {
        for c in 0..self.buffers.chunks.len() {
            self.indirect(
                pass,
                &self.pipelines.kernels.moisture,
                &self.pipelines.groups.moisture[c],
                Args::Chunk(c),
            );
        }
    }

    /// `contact_forces` (pair and wall forces, summed per particle in list order): without
    /// the per-workgroup wall sums and contact counts (`forces_only`), or with them
    /// (`main`) in the batch's last step; the plan makes one of the two zero-sized.
    fn contact_forces(&self, pass: &mut wgpu::ComputePass<'_>) {
        let (k, g) = (&self.pipelines.kernels, &self.pipelines.groups);
        for c in 0..self.buffers.chunks.len() {
            self.indirect(pass, &k.contacts_only, &g.contacts[c], Args::ForcesChunk(c));
            self.indirect(pass, &k.contacts, &g.contacts[c], Args::SumChunk(c));
        }
    }

    /// `wall_reduce` at the end of a batch: per-wall force and torque, and the contact
    /// counts, from the per-workgroup sums of its last step taken (one workgroup per wall and
    /// one for the counts: which recorded step was the last is known only on the GPU); in a
    /// periodic cell `cell_reduce`, the stress sums of that step for the host's servo.
    fn reduce(&self, pass: &mut wgpu::ComputePass<'_>) {
        let (k, g) = (&self.pipelines.kernels, &self.pipelines.groups);
        let walls = self.shape.params.n_walls;
        if walls > 0 {
            direct_dispatch(pass, &k.reduce_walls, &g.reduce, walls);
        }
        direct_dispatch(pass, &k.reduce_stats, &g.reduce, 1);
        if let (Some((partials, total)), Some(group)) = (&k.cell_reduce, &g.cell_reduce) {
            let n = self.shape.params.n;
            direct_dispatch(pass, partials, group, n.div_ceil(shared::WG));
            direct_dispatch(pass, total, group, 1);
        }
    }

    /// Records a batch of the general path, its `steps` steps and `spare` ones after them:
    /// every [`LEAN_EVERY`]-th a full step (the first of kind `first`: a reorder
    /// or a moisture event falls there), the others lean — `rebuild.lean_plan`, the contact
    /// forces and `integrate`, without the rebuild's eight passes, which a full step
    /// dispatches (zero-sized where no rebuild is due; `halt` a direct dispatch). On lavapipe
    /// that made the general path 1.3–1.6 times as fast up to 4 000 spheres and changed
    /// nothing measurable from 10⁴ on (docs/decisions/lean-steps.md). A lean step in which a rebuild is due does nothing, nor do
    /// the lean steps after it, until the next full step rebuilds and takes that step, so the
    /// steps taken are those of a run of full steps, bit for bit; steps past the batch's end
    /// do nothing. Then the reduction of the last step's sums, and `rebuild.close`, which
    /// stops the batch short (for the host to finish) where it took fewer steps than its own.
    /// With lists rebuilt every step, or without [`super::GpuOptions::lean_steps`], every
    /// step is full, and none spare.
    pub(super) fn record_batch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        first: StepKind,
        steps: u32,
        spare: u32,
    ) {
        let (k, g) = (&self.pipelines.kernels, &self.pipelines.groups);
        let (every, slots) =
            if self.shape.params.rebuild_every_step != 0 || !self.options.lean_steps {
                (1, steps)
            } else {
                (LEAN_EVERY, steps + spare)
            };
        for s in 0..slots {
            if s % every == 0 {
                let kind = if s == 0 { first } else { StepKind::default() };
                self.record_step(pass, kind);
            } else {
                direct_dispatch(pass, &k.lean_plan, &g.rebuild, 1);
                self.contact_forces(pass);
                self.integrate(pass);
            }
        }
        self.reduce(pass);
        direct_dispatch(pass, &k.close, &g.rebuild, 1);
    }

    /// Records a single-workgroup batch (see [`GpuEngine::single_workgroup`]): a general step
    /// of kind `first` where the batch must begin with one (`Some`: a rebuild is due, a
    /// reorder or a moisture event), then `integrate.steps`, which takes steps until a rebuild
    /// is due or the batch ends; then `rounds` times a general step (which rebuilds the lists)
    /// and `integrate.steps` again; then the wall and count reduction of the last step's
    /// sums. A general step does nothing once the batch has reached its end, and one that
    /// takes the last step sums like `integrate.steps` does there.
    pub(super) fn record_single_workgroup(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        first: Option<StepKind>,
        rounds: u32,
    ) {
        let (Some(kernel), Some(group)) = (
            self.pipelines.kernels.steps.as_ref(),
            self.pipelines.groups.steps.as_ref(),
        ) else {
            return;
        };
        if let Some(kind) = first {
            self.record_step(pass, kind);
        }
        direct_dispatch(pass, kernel, group, 1);
        for _ in 0..rounds {
            self.record_step(pass, StepKind::default());
            direct_dispatch(pass, kernel, group, 1);
        }
        self.reduce(pass);
    }

    /// `integrate`: semi-implicit Euler in double-single, flagging a particle that has moved
    /// half the skin; the walls move in its first workgroup.
    fn integrate(&self, pass: &mut wgpu::ComputePass<'_>) {
        let (k, g) = (&self.pipelines.kernels, &self.pipelines.groups);
        self.indirect(pass, &k.integrate, &g.integrate, Args::Particles);
    }

    /// Dispatches `kernel` over the workgroup counts that `rebuild.plan` wrote for `args`.
    pub(super) fn indirect(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        kernel: &Kernel,
        group: &wgpu::BindGroup,
        args: Args,
    ) {
        let slot = args.slot(self.buffers.chunks.len());
        indirect_dispatch(pass, kernel, group, &self.buffers.dispatch_args, slot);
    }

    /// (`hash.order`, `radix.*` and `permute.*` for a reorder,) `hash.clear`, `hash`,
    /// `buckets.*`: the sort stage, each a zero-sized dispatch when no rebuild is due.
    fn sort(&self, pass: &mut wgpu::ComputePass<'_>, reorder: bool) {
        let (k, g) = (&self.pipelines.kernels, &self.pipelines.groups);
        if reorder {
            // A rebuild was forced for this step, so these dispatches are full: sort by Morton
            // code and move every particle to its sorted position. (The buckets' own order
            // scatters neighbouring cells over the arrays: a step of the bench's packing took
            // 1.8 times as long on lavapipe in that order as in the lattice's.)
            self.indirect(pass, &k.hash_order, &g.hash, Args::RebuildParticles);
            for radix in &g.radix[..ORDER_PASSES as usize] {
                self.indirect(pass, &k.radix_count, radix, Args::RebuildTiles);
                self.indirect(pass, &k.radix_scan, radix, Args::RebuildOne);
                self.indirect(pass, &k.radix_scatter, radix, Args::RebuildTiles);
            }
            let pg = &g.permute;
            self.indirect(pass, &k.permute_invert, &pg.invert, Args::Particles);
            for block in &pg.moves {
                for (group, _) in &block.ranges {
                    self.indirect(pass, &k.permute_take, group, Args::Particles);
                }
                for (group, args) in &block.ranges {
                    self.indirect(pass, &k.permute_put, group, *args);
                }
            }
        }
        // The bucket sort of the neighbour search, in the new order after a reorder (its
        // counters in the force array, which the reorder's moves have just used: cleared).
        self.indirect(pass, &k.hash_clear, &g.hash, Args::RebuildBuckets);
        self.indirect(pass, &k.hash, &g.hash, Args::RebuildParticles);
        self.indirect(pass, &k.buckets_scan, &g.buckets, Args::RebuildOne);
        self.indirect(pass, &k.buckets_scatter, &g.buckets, Args::RebuildParticles);
        self.indirect(pass, &k.buckets_settle, &g.buckets, Args::RebuildBuckets);
    }
}
