//! `#[repr(C)]` mirrors of the WGSL structs in `shaders/common.wgsl` (a test compares their
//! sizes with naga's layout of the shader).

use bytemuck::{Pod, Zeroable};

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
    /// 0 Hooke, 1 Hertz.
    pub law: u32,
    /// 0 true, 1 pseudo, 2 none.
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
    /// x: rebuild the neighbour lists every step (1) or only when needed (0); y: particles per
    /// slot chunk; z: slot chunks; w: wall slots per particle.
    pub flags: [u32; 4],
    /// x: local damping α; y: extra neighbour reach for liquid bridges (m); z, w unused.
    pub extra: [f32; 4],
}

/// `PairRecord`: constants of a material pair.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct PairRecord {
    /// 1 for elastic constants, 0 for direct.
    pub elastic: u32,
    /// 0 spring–dashpot, 1 Kuhn linear, 2 hill, 3 Jäger (`k[0]` Ē, `k[1]` κ, `v[2]` |Δp_max|,
    /// `flags` the history capacity).
    pub model: u32,
    /// Linear: bit 0 twirl, bit 1 PFC deformability (E* in `m[1]`, κ* in `m[3]`).
    pub flags: u32,
    /// Padding.
    pub pad: u32,
    /// `k_n`, `k_t`, `γ_n`, `γ_t`.
    pub k: [f32; 4],
    /// μ, E*, G*, damping (ζ or β).
    pub m: [f32; 4],
    /// Characteristic velocity, hill suction ψ (Pa), then padding.
    pub v: [f32; 4],
}

impl PairRecord {
    /// The GPU record of a material pair, its contact model included.
    pub fn from_pair(p: &wgdem_core::material::PairParams) -> Self {
        use wgdem_core::contact::model::{LinearStiffness, PairModel};
        let r = p.record();
        let mut rec = PairRecord {
            elastic: u32::from(r.elastic),
            model: 0,
            flags: 0,
            pad: 0,
            k: [r.kn as f32, r.kt as f32, r.gamma_n as f32, r.gamma_t as f32],
            m: [
                r.friction as f32,
                r.e_star as f32,
                r.g_star as f32,
                r.damping as f32,
            ],
            v: [r.v_char as f32, 0.0, 0.0, 0.0],
        };
        match p.model() {
            PairModel::Linear { stiffness, twirl } => {
                rec.model = 1;
                rec.flags = u32::from(twirl);
                match stiffness {
                    LinearStiffness::Direct { kn, kt } => {
                        rec.k[0] = kn as f32;
                        rec.k[1] = kt as f32;
                    }
                    LinearStiffness::Deformability {
                        effective_modulus,
                        stiffness_ratio,
                    } => {
                        rec.flags |= 2;
                        rec.m[1] = effective_modulus as f32;
                        rec.m[3] = stiffness_ratio as f32;
                    }
                }
            }
            PairModel::Hill {
                e_e,
                g_e,
                damping_constant,
                suction,
            } => {
                rec.model = 2;
                rec.m[1] = e_e as f32;
                rec.m[2] = g_e as f32;
                rec.m[3] = damping_constant as f32;
                rec.v[1] = suction as f32;
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
                rec.model = 3;
                rec.flags = capacity.max(3) as u32;
                rec.k[0] = (8.0 * shear_modulus / (3.0 * (1.0 - nu))) as f32;
                rec.k[1] = ((2.0 - nu) / (2.0 * (1.0 - nu))) as f32;
                rec.v[2] = dp_max as f32;
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
    /// Padding.
    pub pad: [u32; 2],
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

/// `Position`: double-single centre; `hi[3]` radius, `lo[3]` mass.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct Position {
    /// High part, radius in w.
    pub hi: [f32; 4],
    /// Low part, mass in w.
    pub lo: [f32; 4],
}

/// `Predicted`: velocities at t_n for the dashpots.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct Predicted {
    /// Translational.
    pub v: [f32; 4],
    /// Angular.
    pub w: [f32; 4],
}

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

/// `ForceTorque`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct ForceTorque {
    /// Force (N).
    pub force: [f32; 4],
    /// Torque (N·m).
    pub torque: [f32; 4],
}

/// `Counters`: overflow flag and the largest neighbour count needed.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Eq, Default)]
pub struct Counters {
    /// Bit 0: a neighbour list overflowed; bit 1: a particle's wall slots did; bit 2: a particle
    /// touched a wall that was not within its skin at the last build, or had no slot for it (a
    /// defect); bit 3: the wall table had no free row.
    pub failed: u32,
    /// Largest neighbour count any particle needed.
    pub max_neighbours: u32,
    /// Most walls within the skin of a particle whose wall slots overflowed.
    pub max_wall_contacts: u32,
    /// Steps begun since the host cleared the counters (a step that overflows counts; none
    /// after it does).
    pub steps: u32,
}

/// `RadixPass` (radix.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct RadixPass {
    /// Bit shift of this pass's digit.
    pub shift: u32,
    /// Padding.
    pub pad: [u32; 3],
}
