//! The numbers Rust and WGSL share, defined once here and generated as the WGSL module
//! `package::shared` ([`wgsl_module`]) that the kernels import by name: failure bits,
//! indirect-dispatch argument slots, contact model, law, history, wall-kind and moisture ids,
//! sentinels and workgroup sizes. No kernel defines these itself; a test
//! (`shader_validation.rs`) checks that each one reaches the shaders with its value.
//!
//! To add one: declare it in [`CONSTANTS`] (and as a Rust `const` where the host needs it), then
//! import it in the WGSL (`import package::shared::{NAME};`).

/// Bits of `Counters::failed`, set by the kernels and read by the host after each batch.
pub mod failed {
    /// A neighbour list overflowed its slots (the host regrows the neighbour table).
    pub const NEIGHBOURS: u32 = 1;
    /// A particle had more walls within its skin than wall slots (the host regrows the rows).
    pub const WALL_SLOTS: u32 = 2;
    /// A particle touched a wall beyond its skin at the last build, or had no row of wall
    /// slots: a defect of the engine, not a capacity.
    pub const DEFECT: u32 = 4;
    /// The wall table had no free row (the host adds rows).
    pub const WALL_ROWS: u32 = 8;
    /// A batch of the single-workgroup path (`integrate.steps`) met more rebuilds than it had
    /// rounds for and stopped before its end, every step it took complete: not a failure, the
    /// host finishes the batch from there.
    pub const SHORT: u32 = 16;
}

/// Slots of the indirect dispatch arguments (three u32 each), written by `rebuild.plan` at
/// every step and zeroed by `rebuild.halt`. With C slot chunks the buffer holds
/// `REBUILD_CHUNKS + C` rebuild slots, then `STEP_CHUNKS + C` slots for the rest of the step.
pub mod args {
    /// Rebuild kernels, zero-sized unless a rebuild is due: per particle.
    pub const REBUILD_PARTICLES: u32 = 0;
    /// Per radix-sort tile.
    pub const REBUILD_TILES: u32 = 1;
    /// One workgroup.
    pub const REBUILD_ONE: u32 = 2;
    /// Per hash bucket.
    pub const REBUILD_BUCKETS: u32 = 3;
    /// Per particle of slot chunk c, at `REBUILD_CHUNKS + c`.
    pub const REBUILD_CHUNKS: u32 = 4;
    /// Every other kernel of a step, zero-sized once a table has overflowed, at
    /// `REBUILD_CHUNKS + C +` these: per particle.
    pub const STEP_PARTICLES: u32 = 0;
    /// Per particle of slot chunk c, at `STEP_CHUNKS + c`; then the same for the contact
    /// forces at `STEP_CHUNKS + C + c` (without the wall sums and contact counts) and at
    /// `STEP_CHUNKS + 2C + c` (with them): the first zero in a batch's last step, the second
    /// in every other.
    pub const STEP_CHUNKS: u32 = 1;

    /// Argument slots in all with `chunks` slot chunks.
    pub const fn total(chunks: u32) -> u32 {
        REBUILD_CHUNKS + chunks + STEP_CHUNKS + 3 * chunks
    }
}

/// `PairRecord::model`: the contact model of a material pair.
pub mod model {
    /// The scene's spring–dashpot (Hooke or Hertz; Fleischmann et al.).
    pub const SPRING: u32 = 0;
    /// Kuhn, Suzuki & Daouadji's refined linear-frictional contact.
    pub const LINEAR: u32 = 1;
    /// Potyondy's hill model.
    pub const HILL: u32 = 2;
    /// Jäger's history-stack contact (Kuhn & Jäger).
    pub const JAGER: u32 = 3;
}

/// `SimParams::law`.
pub mod law {
    /// Linear spring.
    pub const HOOKE: u32 = 0;
    /// Hertzian spring.
    pub const HERTZ: u32 = 1;
}

/// `PairRecord::dashpot`: how the spring–dashpot's dashpots scale with overlap
/// (`contact::Damping`).
pub mod damping {
    /// `γ m̄ f v`: Fleischmann Eq. 1 as written.
    pub const VISCOELASTIC: u32 = 0;
    /// `γ m̄ √f v`: Tsuji et al. (1992).
    pub const TSUJI: u32 = 1;
}

/// `PairRecord::rolling`: the spring–dashpot's rolling resistance (`contact::rolling`).
pub mod rolling {
    /// None.
    pub const NONE: u32 = 0;
    /// Ai et al.'s type A, constant directional torque.
    pub const CDT: u32 = 1;
    /// Ai et al.'s type C, elastic–plastic spring–dashpot (its spring torque in the slot's
    /// aux words).
    pub const EPSD: u32 = 2;
    /// The bit of the kernels' model mask (`MODELS_PRESENT`) set where some pair has rolling
    /// resistance; without it the rolling code is compiled out.
    pub const PRESENT_BIT: u32 = 1 << 8;
}

/// `PairRecord::flags` of a Kuhn (linear) pair.
pub mod linear {
    /// Twirl the tangential force with the pair (Kuhn, Suzuki & Daouadji, Eq. 23).
    pub const TWIRL: u32 = 1;
    /// Stiffnesses from PFC's deformability method: E* in `e_star`, κ* in `damping`.
    pub const DEFORMABILITY: u32 = 2;
}

/// `Wall::kind`.
pub mod wall {
    /// An infinite plane, two-sided.
    pub const PLANE: u32 = 0;
    /// A rectangular plate.
    pub const PLATE: u32 = 1;
}

/// The moisture state of a hill contact (`HillState::moisture`, a slot's `aux.x` bits).
pub mod moisture {
    /// No liquid bridge.
    pub const DRY: u32 = 0;
    /// A bridge that has ruptured (dry until the next wetting).
    pub const RUPTURED: u32 = 1;
    /// A liquid bridge.
    pub const WET: u32 = 2;
}

/// The contact probe's spring–dashpot word: the law plus the history mode shifted by this.
pub const LAW_HISTORY_SHIFT: u32 = 8;

/// `SimParams::history`: the spring–dashpot's tangential mode (Fleischmann et al.).
pub mod history {
    /// Multi-step history.
    pub const TRUE: u32 = 0;
    /// Single-step history.
    pub const PSEUDO: u32 = 1;
    /// No history.
    pub const NONE: u32 = 2;
}

/// The top bit of a neighbour slot's partner word: set where the slot's particle is the pair's
/// body A (the smaller stable id); the low 31 bits are the partner's index.
pub const A_SIDE: u32 = 0x8000_0000;
/// A wall slot that holds no contact (its partner word).
pub const NO_WALL: u32 = u32::MAX;
/// A particle without a row of wall slots (no wall within its skin).
pub const NO_ROW: u32 = u32::MAX;
/// Workgroup size of the per-particle kernels.
pub const WG: u32 = 64;
/// Keys per radix-sort tile.
pub const RADIX_TILE: u32 = 128;
/// The most walls a scene may have (one bit each in a particle's wall mask; `integrate` moves
/// them in its first workgroup, so at most [`WG`]).
pub const MAX_WALLS: u32 = 16;
const _: () = assert!(MAX_WALLS <= WG);
/// u32 words per particle that the reorder moves through its scratch at a time.
pub const PERMUTE_BLOCK: u32 = 8;

/// Most Jäger history points the GPU holds per contact (`JAGER_CAP − 1` in models.wgsl, whose
/// `JAGER_CAP` comes from `package::spec`).
pub const JAGER_GPU_CAPACITY: usize = 32;

/// Every shared constant: its WGSL name and value.
pub const CONSTANTS: &[(&str, u32)] = &[
    ("FAILED_NEIGHBOURS", failed::NEIGHBOURS),
    ("FAILED_WALL_SLOTS", failed::WALL_SLOTS),
    ("FAILED_DEFECT", failed::DEFECT),
    ("FAILED_WALL_ROWS", failed::WALL_ROWS),
    ("FAILED_SHORT", failed::SHORT),
    ("ARGS_REBUILD_PARTICLES", args::REBUILD_PARTICLES),
    ("ARGS_REBUILD_TILES", args::REBUILD_TILES),
    ("ARGS_REBUILD_ONE", args::REBUILD_ONE),
    ("ARGS_REBUILD_BUCKETS", args::REBUILD_BUCKETS),
    ("ARGS_REBUILD_CHUNKS", args::REBUILD_CHUNKS),
    ("ARGS_STEP_PARTICLES", args::STEP_PARTICLES),
    ("ARGS_STEP_CHUNKS", args::STEP_CHUNKS),
    ("MODEL_SPRING", model::SPRING),
    ("MODEL_LINEAR", model::LINEAR),
    ("MODEL_HILL", model::HILL),
    ("MODEL_JAGER", model::JAGER),
    ("LAW_HOOKE", law::HOOKE),
    ("LAW_HERTZ", law::HERTZ),
    ("DAMPING_VISCOELASTIC", damping::VISCOELASTIC),
    ("DAMPING_TSUJI", damping::TSUJI),
    ("ROLLING_NONE", rolling::NONE),
    ("ROLLING_CDT", rolling::CDT),
    ("ROLLING_EPSD", rolling::EPSD),
    ("ROLLING_PRESENT", rolling::PRESENT_BIT),
    ("LINEAR_TWIRL", linear::TWIRL),
    ("LINEAR_DEFORMABILITY", linear::DEFORMABILITY),
    ("WALL_PLANE", wall::PLANE),
    ("WALL_PLATE", wall::PLATE),
    ("MOISTURE_DRY", moisture::DRY),
    ("MOISTURE_RUPTURED", moisture::RUPTURED),
    ("MOISTURE_WET", moisture::WET),
    ("LAW_HISTORY_SHIFT", LAW_HISTORY_SHIFT),
    ("HISTORY_TRUE", history::TRUE),
    ("HISTORY_PSEUDO", history::PSEUDO),
    ("HISTORY_NONE", history::NONE),
    ("A_SIDE", A_SIDE),
    ("NO_WALL", NO_WALL),
    ("NO_ROW", NO_ROW),
    ("WG", WG),
    ("RADIX_TILE", RADIX_TILE),
    ("MAX_WALLS", MAX_WALLS),
    ("PERMUTE_BLOCK", PERMUTE_BLOCK),
];

/// `package::shared`, the WGSL module of [`CONSTANTS`] that the kernels import from.
pub fn wgsl_module() -> String {
    let mut out = String::from("// Shared with the host: generated from wgdem-gpu's shared.rs.\n");
    for (name, value) in CONSTANTS {
        out.push_str(&format!("const {name}: u32 = {value:#x}u;\n"));
    }
    out
}
