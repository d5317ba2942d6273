//! A new engine's state, step by step ([`GpuEngine::new`](super::GpuEngine::new) reads as the
//! list of these): the scene checked against the engine's limits, the parameters of the
//! kernels, the tables sized and checked against the device, the scene's arrays in the kernels'
//! f32 and double-single layouts, the buffers, and what the kernels are compiled for.

use wgdem_core::contact::{ContactLaw, HistoryMode};
use wgdem_core::cpu::Simulation;
use wgpu::util::DeviceExt;

use super::bindings::Bind;
use super::cell::CELL_SUMS_BYTES;
use super::readback::ROW_SUMS_BYTES;
use super::state::{
    Buffers, BuildScratch, DriveTables, ORDER_PASSES, SlotChunk, check_table, dispatch_args,
    drive_tables, empty_wall_slots, gpu_walls, hash_table_bits, init, initial_slots, initial_work,
    jager_capacity_refusal, model_mask, pair_table, split, split3, v4, wall_words, zeroed,
};
use super::tables::STEPS;
use super::{GpuOptions, SINGLE_WORKGROUP_MAX, SINGLE_WORKGROUP_MAX_HARDWARE, WG64};
use crate::context::GpuError;
use crate::layout::{
    Counters, PairRecord, Position, Predicted, RadixPass, SimParams, Wall, WallAlloc,
};
use crate::shaders;
use crate::shared::{self, A_SIDE};

/// Refuses a scene the engine cannot hold: what only the CPU reference runs, no particles, more than one
/// dispatch can cover or a slot's partner word can name, more walls than a wall mask has bits.
pub(super) fn check_scene(device: &wgpu::Device, sim: &Simulation) -> Result<(), GpuError> {
    if let Some((_, refusal)) = cpu_only(sim) {
        return Err(GpuError::Unsupported(refusal));
    }
    let n = sim.particles.len();
    if n == 0 {
        return Err(GpuError::Unsupported(
            "the GPU engine needs at least one particle; the CPU engine runs a scene without particles".to_owned(),
        ));
    }
    let limit = device.limits().max_compute_workgroups_per_dimension as usize * shared::WG as usize;
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
    Ok(())
}

/// What in `sim` only the CPU reference runs, whatever the adapter: the reason `auto` gives
/// for taking the CPU, and the GPU engine's refusal. The conventional linear algorithm, and a
/// Jäger history capacity beyond the GPU's slots ([`shared::JAGER_GPU_CAPACITY`] points: the
/// exact histories of Kuhn & Jäger's presets hold 4 096).
pub(crate) fn cpu_only(sim: &Simulation) -> Option<(String, String)> {
    use wgdem_core::contact::model::PairModel;
    let nm = sim.n_materials();
    let models = || (0..nm * nm).map(|k| (k / nm, k % nm, sim.pair(k / nm, k % nm).model()));
    if models().any(|(_, _, m)| matches!(m, PairModel::Linear { refined: false, .. })) {
        return Some((
            "a linear pair has refined = false (the conventional algorithm, for comparisons), which only the CPU reference runs".to_owned(),
            "a linear pair with refined = false (the conventional algorithm, for comparisons) runs on the CPU reference only".to_owned(),
        ));
    }
    let cap = shared::JAGER_GPU_CAPACITY;
    models().find_map(|(a, b, m)| match m {
        PairModel::Jager { capacity, .. } if capacity > cap => Some((
            format!(
                "material pair ({a}, {b}) keeps Jäger histories of up to {capacity} points, beyond the GPU engine's {cap}"
            ),
            jager_capacity_refusal(a, b, capacity),
        )),
        _ => None,
    })
}

/// The CPU reference's skin (m): 10 % of the smallest diameter.
pub(super) fn skin_of(sim: &Simulation) -> f64 {
    let r_min = sim
        .particles
        .radius
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    wgdem_core::cpu::DEFAULT_SKIN_FRACTION * 2.0 * r_min
}

/// The kernels' parameters for `sim`; the slot chunks and wall slots are set once sized.
pub(super) fn sim_params(sim: &Simulation, options: &GpuOptions, skin: f64) -> SimParams {
    let p = &sim.particles;
    let n = p.len();
    SimParams {
        n: n as u32,
        slots: match options.slots {
            0 => initial_slots(sim, skin),
            k => k,
        },
        n_walls: sim.walls.len() as u32,
        n_materials: sim.n_materials() as u32,
        table_bits: hash_table_bits(n),
        law: match sim.model.law {
            ContactLaw::Hooke => shared::law::HOOKE,
            ContactLaw::Hertz => shared::law::HERTZ,
        },
        history: match sim.model.history {
            HistoryMode::True => shared::history::TRUE,
            HistoryMode::Pseudo => shared::history::PSEUDO,
            HistoryMode::None => shared::history::NONE,
        },
        n_tiles: (n as u32).div_ceil(shared::RADIX_TILE),
        dt: sim.dt as f32,
        cell_size: (2.0 * p.max_radius() + skin + sim.interaction_range()) as f32 * (1.0 + 1e-6),
        skin: skin as f32,
        one: 1.0,
        gravity: v4(sim.gravity),
        rebuild_every_step: u32::from(options.rebuild_every_step),
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
        periodic: u32::from(sim.cell().is_some()),
        // Set with the cell's table before each run (`cell.rs`).
        cell_first_lo: 0,
        cell_first_hi: 0,
        cell_steps: 0,
    }
}

/// The periodic images of `sim`'s particles as the kernels keep them (`[i32; 4]` by stable
/// id), or one zeroed entry without a cell.
fn initial_images(sim: &Simulation) -> Vec<[i32; 4]> {
    match sim.periodic() {
        Some(p) => p
            .images
            .iter()
            .map(|k| {
                let c = |x: i64| x.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
                [c(k[0]), c(k[1]), c(k[2]), 0]
            })
            .collect(),
        None => vec![[0; 4]],
    }
}

/// Rows of wall slots to start with: only the particles with a wall within their skin hold
/// one (regrown when more do), as many as now plus a quarter, unless the options say.
pub(super) fn initial_wall_rows(sim: &Simulation, options: &GpuOptions, skin: f64) -> u32 {
    let p = &sim.particles;
    let n = p.len();
    match options.wall_rows {
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
    .max(1) as u32
}

/// Refuses tables larger than the device can bind, each named with its sizing.
pub(super) fn check_tables(
    device: &wgpu::Device,
    params: &SimParams,
    wall_rows: u32,
    slot_words: usize,
) -> Result<(), GpuError> {
    let (n, n_walls, table_bits) = (params.n, params.n_walls, params.table_bits);
    let n64 = u64::from(n);
    let nw = n_walls.max(1) as u64;
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
            "dem.bucket_start",
            ((1u64 << table_bits) + 1) * 4,
            format!("2^{table_bits} hash buckets + 1 × 4 B"),
        ),
        ("dem.position", n64 * 32, format!("{n} particles × 32 B")),
    ] {
        check_table(device, label, bytes, &what)?;
    }
    Ok(())
}

/// The scene's state in the kernels' layouts, before it is uploaded.
pub(super) struct SceneArrays {
    /// Positions in double-single, radius and mass in the w words.
    positions: Vec<Position>,
    /// Velocities; the spare w words carry a copy of the angular velocity (x in `vel.w`, y and
    /// z in the predicted velocities' w), so that a pair loads its partner's spin with its
    /// velocities (common.wgsl `spin_of`).
    vel: Vec<[f32; 4]>,
    /// The low parts of the velocities and radii (double-single, as the positions).
    fine: Vec<[f32; 4]>,
    /// `built_at`'s first contents: the inverse moment of inertia in w (0 for a sphere whose
    /// spin is fixed), the positions of the first build (xyz) written by that build.
    built_at: Vec<[f32; 4]>,
    orientation: Vec<[f32; 4]>,
    pred: Vec<Predicted>,
    material: Vec<u32>,
    pair_table: Vec<PairRecord>,
    walls: Vec<Wall>,
    /// Drives, velocity schedules and each wall's schedule.
    pub(super) drive_tables: DriveTables,
}

impl SceneArrays {
    pub(super) fn of(sim: &Simulation) -> Self {
        let p = &sim.particles;
        let n = p.len();
        let positions: Vec<Position> = (0..n)
            .map(|i| {
                let (mut hi, mut lo) = split3(p.position[i]);
                hi[3] = p.radius[i] as f32;
                lo[3] = p.mass[i] as f32;
                Position { hi, lo }
            })
            .collect();
        let vel: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                let mut v = v4(p.velocity[i]);
                v[3] = p.angular_velocity[i].x as f32;
                v
            })
            .collect();
        let fine: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                let (_, mut lo) = split3(p.velocity[i]);
                lo[3] = split(p.radius[i]).1;
                lo
            })
            .collect();
        let built_at: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                let inv_inertia = if p.spin_fixed[i] {
                    0.0
                } else {
                    (1.0 / p.inertia[i]) as f32
                };
                [0.0, 0.0, 0.0, inv_inertia]
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
        let drive_tables = drive_tables(sim);
        Self {
            walls: gpu_walls(sim, &drive_tables.walls),
            positions,
            vel,
            fine,
            built_at,
            orientation,
            pred,
            material: p.material.iter().map(|&m| m as u32).collect(),
            pair_table: pair_table(sim),
            drive_tables,
        }
    }
}

impl Buffers {
    /// Every buffer of a new engine on `sim`, with the scene's arrays uploaded and the tables
    /// sized by `params`, `chunks` and `wall_rows` (checked by [`check_tables`]).
    pub(super) fn upload(
        device: &wgpu::Device,
        sim: &Simulation,
        params: &SimParams,
        scene: &SceneArrays,
        chunks: Vec<SlotChunk>,
        wall_rows: u32,
        slot_words: usize,
    ) -> Self {
        let n = params.n as usize;
        let n64 = n as u64;
        let nw = params.n_walls.max(1) as u64;
        let table = 1u64 << params.table_bits;
        // Slots of 8 words and more belong to engines whose pairs may account their work.
        let wide = slot_words >= 8;
        let d = &scene.drive_tables;
        let scratch = BuildScratch::new(
            n64,
            table,
            device.limits().min_storage_buffer_offset_alignment.into(),
        );
        Buffers {
            params: device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("dem.params"),
                contents: bytemuck::bytes_of(params),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            }),
            radix_passes: (0..ORDER_PASSES)
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
            pos: init(device, "dem.position", &scene.positions),
            vel: init(device, "dem.velocity", &scene.vel),
            orientation: init(device, "dem.orientation", &scene.orientation),
            pred: init(device, "dem.predicted_velocity", &scene.pred),
            fine: init(device, "dem.low_parts", &scene.fine),
            material: init(device, "dem.material", &scene.material),
            pair_table: init(device, "dem.pair_table", &scene.pair_table),
            walls: init(device, "dem.walls", &scene.walls),
            ft: zeroed(device, "dem.force_torque", scratch.ft_bytes(n64)),
            scratch,
            work: init(device, "dem.contact_work", &initial_work(sim, wide)),
            // Contact counts per workgroup of `contact_forces` (summed there).
            stats: zeroed(device, "dem.contact_stats", n64.div_ceil(WG64) * 16),
            sorted: zeroed(device, "dem.sorted", n64 * 4),
            tile_hist: zeroed(
                device,
                "dem.radix.tile_hist",
                16 * params.n_tiles as u64 * 4,
            ),
            bucket_start: zeroed(device, "dem.bucket_start", (table + 1) * 4),
            counts: zeroed(device, "dem.neighbour_count", n64 * 4),
            dispatch_args: dispatch_args(device, chunks.len()),
            chunks,
            built_at: init(device, "dem.built_at", &scene.built_at),
            walls_built: init(
                device,
                "dem.walls_built",
                &scene
                    .walls
                    .iter()
                    .flat_map(|w| [w.point_hi, w.point_lo])
                    .chain(std::iter::once([0.0f32; 4]))
                    .collect::<Vec<_>>(),
            ),
            drive_of: init(device, "dem.drive_of", &d.drive_of),
            drives: init(device, "dem.drives", &d.drives),
            schedule_points: init(device, "dem.schedule_points", &d.points),
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
            wall_mask: zeroed(device, "dem.wall_mask", n64 * 4),
            wall_partial: zeroed(device, "dem.wall_partial", nw * n64.div_ceil(WG64) * 32),
            wall_out: zeroed(device, "dem.wall_force", nw * 32),
            stats_out: zeroed(device, "dem.contact_stats.total", 16),
            counters: zeroed(device, "dem.counters", size_of::<Counters>() as u64),
            cell: zeroed(
                device,
                "dem.cell",
                super::cell::cell_buffer_bytes(params.periodic != 0),
            ),
            cell_stress: zeroed(
                device,
                "dem.cell_stress",
                if params.periodic != 0 { n64 * 48 } else { 48 },
            ),
            cell_partial: zeroed(
                device,
                "dem.cell_partial",
                if params.periodic != 0 {
                    n64.div_ceil(WG64) * CELL_SUMS_BYTES
                } else {
                    CELL_SUMS_BYTES
                },
            ),
            cell_sums: zeroed(device, "dem.cell_sums", CELL_SUMS_BYTES),
            images: init(device, "dem.images", &initial_images(sim)),
            row_partial: zeroed(
                device,
                "dem.row_partial",
                n64.div_ceil(WG64).max(1) * ROW_SUMS_BYTES,
            ),
            row_sums: zeroed(device, "dem.row_sums", ROW_SUMS_BYTES),
        }
    }
}

/// What the kernels are compiled for: the scene's models and its one material, where
/// `options.specialize`, else every model; 64-bit words where asked and the device has them.
/// The list build's private arrays are sized for the table's slots in either case, rounded up
/// to a multiple of [`shaders::NEIGHBOUR_SLOTS_STEP`].
pub(super) fn specialization(
    device: &wgpu::Device,
    options: &GpuOptions,
    params: &SimParams,
    scene: &SceneArrays,
) -> shaders::Specialization {
    let words64 = options.words64 && device.features().contains(wgpu::Features::SHADER_INT64);
    if options.specialize {
        let material = &scene.material;
        shaders::Specialization {
            models: model_mask(&scene.pair_table),
            slots: shaders::neighbour_slots_for(params.slots),
            words64,
            one_material: material
                .first()
                .copied()
                .filter(|&m0| material.iter().all(|&m| m == m0)),
            walls: params.n_walls > 0,
        }
    } else {
        shaders::Specialization {
            slots: shaders::neighbour_slots_for(params.slots),
            words64,
            ..shaders::Specialization::ANY
        }
    }
}

/// Whether the engine takes its steps in one workgroup between general steps
/// ([`GpuOptions::single_workgroup`]): where asked, or by size where not, and only where it can
/// run: one slot chunk (`integrate.steps` binds one), lists rebuilt when due (rebuilt every
/// step, every step would be a general one) and a device that binds its storage buffers.
pub(super) fn single_workgroup(
    device: &wgpu::Device,
    options: &GpuOptions,
    params: &SimParams,
) -> bool {
    let storage = STEPS
        .iter()
        .filter(|r| matches!(r.access, Bind::Read | Bind::Write))
        .count() as u32;
    let can = params.chunks == 1
        && params.rebuild_every_step == 0
        && device.limits().max_storage_buffers_per_shader_stage >= storage;
    let most = single_workgroup_max(device.adapter_info().device_type);
    can && options.single_workgroup.unwrap_or(params.n <= most)
}

/// The most particles for which `auto` takes one workgroup on an adapter of this type: a
/// software adapter runs the general path's dispatches on the same few cores, a GPU spreads
/// them over its multiprocessors while the workgroup holds one.
fn single_workgroup_max(device_type: wgpu::DeviceType) -> u32 {
    match device_type {
        wgpu::DeviceType::Cpu => SINGLE_WORKGROUP_MAX,
        _ => SINGLE_WORKGROUP_MAX_HARDWARE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a software adapter takes one workgroup up to lavapipe's threshold; every kind of
    /// GPU takes the H100's, the lower.
    #[test]
    fn the_single_workgroup_threshold_follows_the_adapter() {
        use wgpu::DeviceType::*;
        assert_eq!(single_workgroup_max(Cpu), SINGLE_WORKGROUP_MAX);
        for gpu in [DiscreteGpu, IntegratedGpu, VirtualGpu, Other] {
            assert_eq!(
                single_workgroup_max(gpu),
                SINGLE_WORKGROUP_MAX_HARDWARE,
                "{gpu:?}"
            );
        }
    }

    /// `auto` evaluates pairs once only on a software adapter and only for wide slots; a
    /// choice made by hand holds on every adapter.
    #[test]
    fn pairs_are_evaluated_once_by_default_only_for_wide_slots_on_a_software_adapter() {
        use crate::shaders::SlotKind;
        use wgpu::DeviceType::*;
        let auto = GpuOptions::default();
        for kind in [SlotKind::Wide, SlotKind::Jager(16)] {
            assert!(auto.wants_pairs_once(kind, Cpu), "{kind:?}");
        }
        assert!(!auto.wants_pairs_once(SlotKind::Narrow, Cpu));
        for gpu in [DiscreteGpu, IntegratedGpu, VirtualGpu, Other] {
            for kind in [SlotKind::Narrow, SlotKind::Wide, SlotKind::Jager(16)] {
                assert!(!auto.wants_pairs_once(kind, gpu), "{gpu:?} {kind:?}");
                for forced in [true, false] {
                    let options = GpuOptions {
                        pairs_once: Some(forced),
                        ..GpuOptions::default()
                    };
                    assert_eq!(options.wants_pairs_once(kind, gpu), forced);
                    assert_eq!(options.wants_pairs_once(kind, Cpu), forced);
                }
            }
        }
    }
}
