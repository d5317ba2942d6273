//! `#[repr(C)]` mirrors of the WGSL structs of `shaders/`, with the same field names. Each
//! declares its fields through [`WgslMirror`], and a test (`shader_validation.rs`) compares
//! every field's name, offset and size with naga's layout of the kernels that use it.

use bytemuck::{Pod, Zeroable};

use crate::shared::{damping, linear, model, rolling};

/// One field of a mirrored struct: its name, byte offset and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The field's name (the same in Rust and WGSL).
    pub name: &'static str,
    /// Byte offset in the struct.
    pub offset: usize,
    /// Bytes.
    pub size: usize,
}

/// A Rust struct that mirrors the WGSL struct of the same name.
pub trait WgslMirror {
    /// The WGSL struct's name.
    const WGSL_NAME: &'static str;
    /// Every field, in order.
    fn fields() -> Vec<Field>;
}

fn field_size<S, F>(_: fn(&S) -> &F) -> usize {
    size_of::<F>()
}

/// Implements [`WgslMirror`] for a struct from the list of its fields; the list must name every
/// field (a pattern without `..` checks it at compile time).
macro_rules! mirror {
    ($ty:ident { $($field:ident),* $(,)? }) => {
        impl WgslMirror for $ty {
            const WGSL_NAME: &'static str = stringify!($ty);
            fn fields() -> Vec<Field> {
                #[allow(dead_code)]
                fn every_field_listed(v: $ty) {
                    let $ty { $($field: _),* } = v;
                }
                vec![$(Field {
                    name: stringify!($field),
                    offset: std::mem::offset_of!($ty, $field),
                    size: field_size(|s: &$ty| &s.$field),
                }),*]
            }
        }
    };
}

/// `SimParams`: per-run constants of every kernel.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct SimParams {
    /// Particle count.
    pub n: u32,
    /// Neighbour slots per particle.
    pub slots: u32,
    /// Wall count.
    pub n_walls: u32,
    /// Material count.
    pub n_materials: u32,
    /// The hash table has `2^table_bits` buckets.
    pub table_bits: u32,
    /// [`crate::shared::law`]: Hooke or Hertz.
    pub law: u32,
    /// [`crate::shared::history`]: true, pseudo or none.
    pub history: u32,
    /// Radix-sort tiles.
    pub n_tiles: u32,
    /// Time step (s).
    pub dt: f32,
    /// Hash cell size (m).
    pub cell_size: f32,
    /// Neighbour-list skin (m).
    pub skin: f32,
    /// 1.0 (see the double-single functions in common.wgsl).
    pub one: f32,
    /// Gravity (m/s²), w unused.
    pub gravity: [f32; 4],
    /// 1: rebuild the neighbour lists every step; 0: only when needed.
    pub rebuild_every_step: u32,
    /// Particles per slot chunk.
    pub chunk_particles: u32,
    /// Slot chunks.
    pub chunks: u32,
    /// Wall slots per particle.
    pub wall_slots: u32,
    /// Local damping α.
    pub local_damping: f32,
    /// Extra neighbour reach for liquid bridges (m).
    pub bridge_reach: f32,
    /// Drives (`[[loads]]`) in the scene; 0 skips their lookup in `integrate`.
    pub n_drives: u32,
    /// Square of the speed above which a sphere counts as blown up (m²/s²;
    /// `Simulation::max_speed`, capped at f32's largest).
    pub max_speed_sq: f32,
    /// 1 where the scene has a periodic cell (`Cell` in common.wgsl).
    pub periodic: u32,
    /// The step of the cell table's first entry, low and high words.
    pub cell_first_lo: u32,
    /// See [`SimParams::cell_first_lo`].
    pub cell_first_hi: u32,
    /// Entries in the cell table.
    pub cell_steps: u32,
}

mirror!(SimParams {
    n,
    slots,
    n_walls,
    n_materials,
    table_bits,
    law,
    history,
    n_tiles,
    dt,
    cell_size,
    skin,
    one,
    gravity,
    rebuild_every_step,
    chunk_particles,
    chunks,
    wall_slots,
    local_damping,
    bridge_reach,
    n_drives,
    max_speed_sq,
    periodic,
    cell_first_lo,
    cell_first_hi,
    cell_steps,
});

/// `CellStep`: the periodic cell at one step (common.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct CellStep {
    /// `H`'s columns, the edges (m), high parts (w unused).
    pub h_hi: [[f32; 4]; 3],
    /// Their low parts: `H = h_hi + h_lo` in double-single.
    pub h_lo: [[f32; 4]; 3],
    /// `H⁻¹`'s columns (1/m).
    pub inv: [[f32; 4]; 3],
    /// Hash bins along each edge (xyz).
    pub bins: [u32; 4],
}

mirror!(CellStep {
    h_hi,
    h_lo,
    inv,
    bins
});

/// `CellHead`: what the periodic cell keeps over a run (common.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct CellHead {
    /// `L`'s columns (1/s).
    pub l: [[f32; 4]; 3],
    /// `exp(L Δt) − I`'s columns.
    pub map: [[f32; 4]; 3],
    /// The fixed corner, double-single (m).
    pub origin_hi: [f32; 4],
    /// See [`CellHead::origin_hi`].
    pub origin_lo: [f32; 4],
}

mirror!(CellHead {
    l,
    map,
    origin_hi,
    origin_lo
});

/// `PairRecord`: constants of a material pair.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct PairRecord {
    /// 1 for elastic constants, 0 for direct.
    pub elastic: u32,
    /// [`crate::shared::model`]: spring–dashpot, Kuhn linear, hill, or Jäger (`kn` Ē, `kt` κ,
    /// `dp_max` |Δp_max|, `flags` the history capacity).
    pub model: u32,
    /// Linear: bit 0 twirl, bit 1 PFC deformability (E* in `e_star`, κ* in `damping`).
    pub flags: u32,
    /// Spring–dashpot: [`crate::shared::damping`], how the dashpots scale with overlap.
    pub dashpot: u32,
    /// Normal stiffness `k_n`.
    pub kn: f32,
    /// Tangential stiffness `k_t`.
    pub kt: f32,
    /// Normal damping `γ_n`.
    pub gamma_n: f32,
    /// Tangential damping `γ_t`.
    pub gamma_t: f32,
    /// Friction coefficient μ.
    pub friction: f32,
    /// Effective Young's modulus E* (Pa).
    pub e_star: f32,
    /// Effective shear modulus G* (Pa).
    pub g_star: f32,
    /// Damping (ζ, β or Tsuji's b).
    pub damping: f32,
    /// Characteristic velocity (m/s).
    pub v_char: f32,
    /// Hill suction ψ (Pa).
    pub suction: f32,
    /// Jäger |Δp_max|.
    pub dp_max: f32,
    /// Padding.
    pub _q2: f32,
    /// [`crate::shared::rolling`]: the spring–dashpot's rolling resistance model.
    pub rolling: u32,
    /// Rolling friction μ_r.
    pub rolling_friction: f32,
    /// Rolling stiffness k_r (N·m/rad); 0 for `2.25 k_n μ_r² R_r²`.
    pub rolling_stiffness: f32,
    /// Rolling damping ratio η_r.
    pub rolling_damping: f32,
}

mirror!(PairRecord {
    elastic,
    model,
    flags,
    dashpot,
    kn,
    kt,
    gamma_n,
    gamma_t,
    friction,
    e_star,
    g_star,
    damping,
    v_char,
    suction,
    dp_max,
    _q2,
    rolling,
    rolling_friction,
    rolling_stiffness,
    rolling_damping,
});

impl PairRecord {
    /// The GPU record of a material pair, its contact model included.
    pub fn from_pair(p: &wgdem_core::material::PairParams) -> Self {
        use wgdem_core::contact::model::{LinearStiffness, PairModel};
        let r = p.record();
        let mut rec = PairRecord {
            elastic: u32::from(r.elastic),
            model: model::SPRING,
            flags: 0,
            dashpot: match r.dashpot {
                wgdem_core::contact::Damping::Viscoelastic => damping::VISCOELASTIC,
                wgdem_core::contact::Damping::Tsuji => damping::TSUJI,
            },
            kn: r.kn as f32,
            kt: r.kt as f32,
            gamma_n: r.gamma_n as f32,
            gamma_t: r.gamma_t as f32,
            friction: r.friction as f32,
            e_star: r.e_star as f32,
            g_star: r.g_star as f32,
            damping: r.damping as f32,
            v_char: r.v_char as f32,
            suction: 0.0,
            dp_max: 0.0,
            _q2: 0.0,
            rolling: rolling::NONE,
            rolling_friction: 0.0,
            rolling_stiffness: 0.0,
            rolling_damping: 0.0,
        };
        if let Some(r) = p.rolling() {
            use wgdem_core::contact::rolling::RollingModel;
            rec.rolling = match r.model {
                RollingModel::Cdt => rolling::CDT,
                RollingModel::Epsd => rolling::EPSD,
            };
            rec.rolling_friction = r.friction as f32;
            rec.rolling_stiffness = r.stiffness.unwrap_or(0.0) as f32;
            rec.rolling_damping = r.damping as f32;
        }
        match p.model() {
            PairModel::Linear {
                stiffness, twirl, ..
            } => {
                rec.model = model::LINEAR;
                rec.flags = if twirl { linear::TWIRL } else { 0 };
                match stiffness {
                    LinearStiffness::Direct { kn, kt } => {
                        rec.kn = kn as f32;
                        rec.kt = kt as f32;
                    }
                    LinearStiffness::Deformability {
                        effective_modulus,
                        stiffness_ratio,
                    } => {
                        rec.flags |= linear::DEFORMABILITY;
                        rec.e_star = effective_modulus as f32;
                        rec.damping = stiffness_ratio as f32;
                    }
                }
            }
            PairModel::Hill {
                e_e,
                g_e,
                damping_constant,
                suction,
            } => {
                rec.model = model::HILL;
                rec.e_star = e_e as f32;
                rec.g_star = g_e as f32;
                rec.damping = damping_constant as f32;
                rec.suction = suction as f32;
            }
            PairModel::Jager {
                shear_modulus,
                poisson_ratio,
                dp_max,
                capacity,
            } => {
                // Ē and κ of Kuhn & Jäger Eq. 1 and 5 (as `contact::jager::JagerParams::new`);
                // the pair's radius comes from the spheres in the kernel.
                let nu = poisson_ratio;
                rec.model = model::JAGER;
                rec.flags = capacity.max(3) as u32;
                rec.kn = (8.0 * shear_modulus / (3.0 * (1.0 - nu))) as f32;
                rec.kt = ((2.0 - nu) / (2.0 * (1.0 - nu))) as f32;
                rec.dp_max = dp_max as f32;
            }
            PairModel::Spring => {}
        }
        rec
    }
}

/// `Wall`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct Wall {
    /// 0 plane, 1 plate.
    pub kind: u32,
    /// Material index.
    pub material: u32,
    /// First point of its velocity schedule in the schedule points.
    pub schedule_first: u32,
    /// Points of its velocity schedule (0: the velocity below, set by the host).
    pub schedule_count: u32,
    /// Point or centre, high part.
    pub point_hi: [f32; 4],
    /// Point or centre, low part.
    pub point_lo: [f32; 4],
    /// Unit normal.
    pub normal: [f32; 4],
    /// Plate in-plane axis.
    pub u_axis: [f32; 4],
    /// Plate half extents in x, y.
    pub extents: [f32; 4],
    /// Velocity (m/s).
    pub velocity: [f32; 4],
}

mirror!(Wall {
    kind,
    material,
    schedule_first,
    schedule_count,
    point_hi,
    point_lo,
    normal,
    u_axis,
    extents,
    velocity,
});

/// `Position`: double-single centre; `hi[3]` radius, `lo[3]` mass.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct Position {
    /// High part, radius in w.
    pub hi: [f32; 4],
    /// Low part, mass in w.
    pub lo: [f32; 4],
}

mirror!(Position { hi, lo });

/// `Predicted`: velocities at t_n for the dashpots.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct Predicted {
    /// Translational.
    pub v: [f32; 4],
    /// Angular.
    pub w: [f32; 4],
}

mirror!(Predicted { v, w });

/// `Slot`: a neighbour and this side's copy of the pair's tangential history.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct Slot {
    /// Tangential displacement `u_t` (m).
    pub tangential: [f32; 3],
    /// Partner index in the low 31 bits; the top bit set where this side is the pair's body A
    /// (the smaller stable id).
    pub partner: u32,
}

mirror!(Slot {
    tangential,
    partner,
});

impl Slot {
    /// u32 words of this struct: the start of every slot, narrow, wide or Jäger, and of a
    /// wall slot (`WallSlot`).
    pub const WORDS: usize = size_of::<Slot>() / 4;
    /// Where a wide slot's `aux` words (model state: Kuhn, hill, type C rolling) begin.
    pub const AUX: usize = Self::WORDS;

    /// The slot at the start of `words` (one slot or wall slot of any width, as read back).
    pub fn read(words: &[u32]) -> Self {
        bytemuck::pod_read_unaligned(bytemuck::cast_slice(&words[..Self::WORDS]))
    }

    /// The partner's index (a particle's, or a wall's in a wall slot).
    pub fn partner_index(&self) -> u32 {
        self.partner & !crate::shared::A_SIDE
    }

    /// Whether this side is the pair's body A (the smaller stable id).
    pub fn is_a_side(&self) -> bool {
        self.partner & crate::shared::A_SIDE != 0
    }

    /// The tangential history in f64.
    pub fn tangential(&self) -> glam::DVec3 {
        glam::Vec3::from_array(self.tangential).as_dvec3()
    }
}

/// `ForceTorque`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct ForceTorque {
    /// Force (N).
    pub force: [f32; 4],
    /// Torque (N·m).
    pub torque: [f32; 4],
}

mirror!(ForceTorque { force, torque });

/// `RowSums` (row_reduce.wgsl): a direct shear row's sums of the particles, in f32.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Default)]
pub struct RowSums {
    /// Σ n ⊗ n over the touching pairs: xx, yy, zz; w: the kinetic energy Σ ½ m |v|² + ½ I |ω|² (J).
    pub diagonal: [f32; 4],
    /// Σ n ⊗ n: xy, xz, yz; w: the highest sphere top max(z + r) (m).
    pub off: [f32; 4],
    /// x: the touching pairs, each once.
    pub pairs: [u32; 4],
}

mirror!(RowSums {
    diagonal,
    off,
    pairs
});

impl RowSums {
    /// The sums in the core's terms ([`wgdem_core::runner::RowSums`]), in f64.
    pub fn to_core(&self) -> wgdem_core::runner::RowSums {
        let f = |x: f32| f64::from(x);
        let (d, o) = (self.diagonal, self.off);
        wgdem_core::runner::RowSums {
            kinetic_energy: f(d[3]),
            top: f(o[3]),
            pairs: u64::from(self.pairs[0]),
            normals: glam::DMat3::from_cols(
                glam::DVec3::new(f(d[0]), f(o[0]), f(o[1])),
                glam::DVec3::new(f(o[0]), f(d[1]), f(o[2])),
                glam::DVec3::new(f(o[1]), f(o[2]), f(d[2])),
            ),
        }
    }
}

/// `Counters`: overflow flag and the largest neighbour count needed.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Eq, Default)]
pub struct Counters {
    /// [`crate::shared::failed`] bits: a neighbour list, a particle's wall slots or the wall
    /// table's rows overflowed, or a particle touched a wall that was not within its skin at
    /// the last build, or had no slot for it (a defect).
    pub failed: u32,
    /// Largest neighbour count any particle needed.
    pub max_neighbours: u32,
    /// Most walls within the skin of a particle whose wall slots overflowed.
    pub max_wall_contacts: u32,
    /// Steps begun since the host cleared the counters (a step that overflows counts; none
    /// after it does).
    pub steps: u32,
    /// The step count when the host cleared the counters, low and high words: the step being
    /// taken is `base + steps − 1` (its time drives the schedules of `integrate`).
    pub base_lo: u32,
    /// High word of the base.
    pub base_hi: u32,
    /// Spheres `integrate` found with a non-finite position or velocity, or faster than
    /// `max_speed` (counted once per step each).
    pub runaway: u32,
    /// The smallest stable id among them (cleared to `u32::MAX`).
    pub first_runaway: u32,
    /// `steps` at the end of the batch being run: no step begins beyond it.
    pub end: u32,
    /// Rounds (a general step, then `integrate.steps`) of a single-workgroup batch not yet
    /// begun; the host sizes the next batch's rounds by what this one used.
    pub rounds: u32,
}

mirror!(Counters {
    failed,
    max_neighbours,
    max_wall_contacts,
    steps,
    base_lo,
    base_hi,
    runaway,
    first_runaway,
    end,
    rounds,
});

/// `Drive` (integrate.wgsl): a particle's loads and constraints, each schedule a range of
/// the schedule points (`count` 0: none).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Eq, Default)]
pub struct Drive {
    /// Applied force: first point, count.
    pub force: [u32; 2],
    /// Applied torque.
    pub torque: [u32; 2],
    /// Prescribed velocity.
    pub velocity: [u32; 2],
    /// Prescribed angular velocity.
    pub spin: [u32; 2],
    /// Bits 0–5: x, y, z, rx, ry, rz locked.
    pub lock: u32,
    /// Padding.
    pub _p0: u32,
    /// Padding.
    pub _p1: u32,
    /// Padding.
    pub _p2: u32,
}

mirror!(Drive {
    force,
    torque,
    velocity,
    spin,
    lock,
    _p0,
    _p1,
    _p2,
});

/// `RadixPass` (radix.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct RadixPass {
    /// Bit shift of this pass's digit.
    pub shift: u32,
    /// Padding.
    pub _p0: u32,
    /// Padding.
    pub _p1: u32,
    /// Padding.
    pub _p2: u32,
}

mirror!(RadixPass {
    shift,
    _p0,
    _p1,
    _p2,
});

/// `Chunk`: the particles `[first, first + count)` whose neighbour slots one buffer holds.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct Chunk {
    /// First particle.
    pub first: u32,
    /// Particles.
    pub count: u32,
    /// 1 where each pair is evaluated once, by its A side, with the force on B handed over
    /// (the only chunk); 0 where both sides evaluate it.
    pub once: u32,
    /// Padding.
    pub _p1: u32,
}

mirror!(Chunk {
    first,
    count,
    once,
    _p1,
});

/// `MoistureAction` (moisture.wgsl): the moisture events due at the start of a batch.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct MoistureAction {
    /// 1: make every contact dry first.
    pub dry: u32,
    /// 1: then make the touching contacts wet with `gap`.
    pub wet: u32,
    /// Moisture gap g_m (m).
    pub gap: f32,
    /// Padding.
    pub _p0: u32,
}

mirror!(MoistureAction { dry, wet, gap, _p0 });

/// `WallAlloc` (rebuild.wgsl): the wall table's free stack and rows.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct WallAlloc {
    /// Entries on the free stack.
    pub top: i32,
    /// Rows below this have been handed out at some time.
    pub next: u32,
    /// Rows in the table.
    pub capacity: u32,
    /// Padding.
    pub _p0: u32,
}

mirror!(WallAlloc {
    top,
    next,
    capacity,
    _p0,
});

/// `Permute` (permute.wgsl): one column block of one array moved by a reorder.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct Permute {
    /// u32 words per particle of the array being moved.
    pub stride: u32,
    /// Its first word this dispatch moves (a multiple of `PERMUTE_BLOCK`).
    pub block: u32,
    /// 1: neighbour slots, whose partner word is remapped.
    pub remap: u32,
    /// Padding.
    pub _p0: u32,
    /// The array holds particles `[first, first + count)` (a slot chunk, or all).
    pub first: u32,
    /// Particles it holds.
    pub count: u32,
    /// Padding.
    pub _p1: u32,
    /// Padding.
    pub _p2: u32,
}

mirror!(Permute {
    stride,
    block,
    remap,
    _p0,
    first,
    count,
    _p1,
    _p2,
});
