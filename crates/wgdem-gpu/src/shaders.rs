//! The WGSL kernels, each prefixed with the shared constants ([`crate::shared::wgsl_prelude`])
//! and `common.wgsl` (a flat include, no shader composer).

/// Shared structs and functions.
pub const COMMON: &str = include_str!("../../../shaders/common.wgsl");

/// Every kernel file: name and source (without the common prelude).
pub const KERNELS: [(&str, &str); 11] = [
    ("permute", include_str!("../../../shaders/permute.wgsl")),
    ("rebuild", include_str!("../../../shaders/rebuild.wgsl")),
    ("commit", include_str!("../../../shaders/commit.wgsl")),
    ("hash", include_str!("../../../shaders/hash.wgsl")),
    ("radix", include_str!("../../../shaders/radix.wgsl")),
    ("ranges", include_str!("../../../shaders/ranges.wgsl")),
    (
        "neighbours",
        include_str!("../../../shaders/neighbours.wgsl"),
    ),
    (
        "contact_forces",
        include_str!("../../../shaders/contact_forces.wgsl"),
    ),
    (
        "wall_reduce",
        include_str!("../../../shaders/wall_reduce.wgsl"),
    ),
    ("integrate", include_str!("../../../shaders/integrate.wgsl")),
    ("moisture", include_str!("../../../shaders/moisture.wgsl")),
];

/// The contact models beyond the spring–dashpot (Kuhn, hill, Jäger), prepended after
/// [`COMMON`] where they are evaluated.
pub const MODELS: &str = include_str!("../../../shaders/models.wgsl");

/// Drives contacts through given kinematics with the models of [`MODELS`].
pub const CONTACT_PROBE: &str = include_str!("../../../shaders/contact_probe.wgsl");

/// Full source of a kernel that uses the contact models: the prelude, common, models (with a
/// working history of [`crate::contact_probe::JAGER_GPU_CAPACITY`] points and one more),
/// then the kernel.
pub fn with_models(kernel: &str) -> String {
    format!(
        "{}{COMMON}\n{}\n{MODELS}\n{kernel}",
        prelude(SlotKind::Narrow),
        jager_cap(crate::contact_probe::JAGER_GPU_CAPACITY as u32 + 1)
    )
}

/// The shared constants, generated from Rust, and `SLOT_WORDS`, the u32 words of a neighbour
/// slot of kind `slots` ([`SlotKind::words`]).
fn prelude(slots: SlotKind) -> String {
    format!(
        "{}const SLOT_WORDS: u32 = {}u;\n",
        crate::shared::wgsl_prelude(),
        slots.words()
    )
}

/// `JAGER_CAP` of models.wgsl: the points a contact's working Jäger history holds.
fn jager_cap(points: u32) -> String {
    format!("const JAGER_CAP: u32 = {points}u;")
}

/// Test-only kernel that evaluates `contact_force` on arrays of states.
pub const CONTACT_LAW_PROBE: &str = include_str!("../../../shaders/contact_law_probe.wgsl");

/// Test-only kernel that packs and unpacks hash cells (`pack_cell`, `unpack_cell_near`).
pub const CELL_PROBE: &str = include_str!("../../../shaders/cell_probe.wgsl");

/// Full source of a kernel: the shared constants, common.wgsl, then the kernel.
pub fn source(kernel: &str) -> String {
    format!("{}{COMMON}\n{kernel}", prelude(SlotKind::Narrow))
}

/// Full source of the named kernel with narrow (16-byte) contact slots.
///
/// # Panics
/// If `name` is not in [`KERNELS`] (a programming error, caught by the tests).
pub fn kernel(name: &str) -> String {
    kernel_for(name, false)
}

/// The slot definitions of a wide (32-byte) contact slot: the spring history plus four words of
/// model state (`aux`) for the Kuhn and hill models.
const WIDE_SLOT: &str = "struct Slot {
    tangential: vec3<f32>,
    partner: u32,
    aux: vec4<f32>,
}
fn make_slot(tangential: vec3<f32>, partner: u32) -> Slot {
    return Slot(tangential, partner, vec4<f32>(0.0));
}
fn slot_aux(s: Slot) -> vec4<f32> {
    return s.aux;
}
fn with_aux(s: Slot, aux: vec4<f32>) -> Slot {
    return Slot(s.tangential, s.partner, aux);
}";

/// Layout of the neighbour slots an engine compiles its kernels for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotKind {
    /// 16 bytes: the spring–dashpot history.
    Narrow,
    /// 32 bytes: plus four words of model state for the Kuhn and hill models.
    Wide,
    /// A wide slot plus a Jäger history of this many points and its contact frame.
    Jager(u32),
}

impl SlotKind {
    /// u32 words per slot.
    pub fn words(self) -> usize {
        match self {
            SlotKind::Narrow => 4,
            SlotKind::Wide => 8,
            SlotKind::Jager(points) => 12 + 4 * points as usize,
        }
    }

    /// Whether slots of this kind can hold the history of slots of kind `other`.
    pub fn holds(self, other: SlotKind) -> bool {
        match (self, other) {
            (_, SlotKind::Narrow) => true,
            (SlotKind::Narrow, _) => false,
            (_, SlotKind::Wide) => true,
            (SlotKind::Jager(have), SlotKind::Jager(need)) => need <= have,
            (SlotKind::Wide, SlotKind::Jager(_)) => false,
        }
    }
}

/// Helpers of the contact kernels that move a Jäger history between a slot and the models'
/// `JagerState`: without Jäger slots, an empty history.
const NO_JAGER: &str = "fn jager_load(s: Slot) -> JagerState {
    var st: JagerState;
    st.frame = vec4<f32>(0.0, 0.0, 0.0, 1.0);
    return st;
}
fn jager_store(st: ptr<function, JagerState>, s: Slot) -> Slot {
    return s;
}";

/// The Jäger slot: the wide slot, the contact frame and `JAGER_POINTS` history points; the
/// tangential force in the contact frame and the point count live in `tangential`.
fn jager_slot(points: u32) -> String {
    format!(
        "struct Slot {{
    tangential: vec3<f32>,
    partner: u32,
    aux: vec4<f32>,
    frame: vec4<f32>,
    points: array<vec4<f32>, {points}u>,
}}
const JAGER_POINTS: u32 = {points}u;
fn make_slot(tangential: vec3<f32>, partner: u32) -> Slot {{
    return Slot(tangential, partner, vec4<f32>(0.0), vec4<f32>(0.0), array<vec4<f32>, {points}u>());
}}
fn slot_aux(s: Slot) -> vec4<f32> {{
    return s.aux;
}}
fn with_aux(s: Slot, aux: vec4<f32>) -> Slot {{
    var out = s;
    out.aux = aux;
    return out;
}}"
    )
}

/// [`NO_JAGER`] for Jäger slots: the count in `tangential.z`'s bits, the force in `.xy`.
const JAGER_HELPERS: &str = "fn jager_load(s: Slot) -> JagerState {
    var st: JagerState;
    st.count = bitcast<u32>(s.tangential.z);
    st.tangential = s.tangential.xy;
    st.frame = s.frame;
    for (var k = 0u; k < min(st.count, JAGER_POINTS); k++) {
        st.points[k] = s.points[k];
    }
    return st;
}
fn jager_store(st: ptr<function, JagerState>, s: Slot) -> Slot {
    var out = s;
    out.tangential = vec3<f32>((*st).tangential, bitcast<f32>((*st).count));
    out.frame = (*st).frame;
    for (var k = 0u; k < min((*st).count, JAGER_POINTS); k++) {
        out.points[k] = (*st).points[k];
    }
    return out;
}";

/// Full source of the named kernel; `wide` selects 32-byte slots (engines whose material pairs
/// use the Kuhn or hill model). The contact and moisture kernels also get the models of
/// [`MODELS`].
///
/// # Panics
/// If `name` is not in [`KERNELS`] (a programming error, caught by the tests).
pub fn kernel_for(name: &str, wide: bool) -> String {
    kernel_with(
        name,
        if wide {
            SlotKind::Wide
        } else {
            SlotKind::Narrow
        },
    )
}

/// Full source of the named kernel for slots of kind `slots`, for any contact model, law and
/// history mode.
///
/// # Panics
/// If `name` is not in [`KERNELS`] (a programming error, caught by the tests).
pub fn kernel_with(name: &str, slots: SlotKind) -> String {
    kernel_specialized(name, slots, Specialization::ANY)
}

/// What the kernels are compiled for beyond their slot layout: the contact models a scene's
/// pairs use, whether all its particles share one material, and the storage words of the
/// per-step kernels ([`words64`]). The branches of the other models are compiled out; on lavapipe this makes the
/// Hertz contact stage 2–3 times faster, and the results are bitwise those of the kernel
/// compiled for every model (`tests/gpu_specialization.rs`). The law and history mode stay
/// run-time values: fixing them as constants gained nothing measurable and let the compiler
/// contract the arithmetic differently, which changes the last bits.
///
/// WGSL zero-initialises a private array in every invocation, and lavapipe keeps one that is
/// indexed at run time in memory: the per-step contact kernel has none sized by the tables
/// (it finds a wall's slot by rank, see contact_forces.wgsl), and the neighbour-list build's,
/// run only at rebuilds, are sized for the table's slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Specialization {
    /// Bit m set where some pair uses model m (`PairRecord::model`: 0 spring–dashpot, 1 Kuhn,
    /// 2 hill, 3 Jäger), and [`crate::shared::rolling::PRESENT_BIT`] where some pair has
    /// rolling resistance.
    pub models: u32,
    /// Neighbour slots per particle the list build can hold (`NEIGHBOUR_SLOTS`, the size of
    /// its private arrays; see neighbours.wgsl); the engine's must not exceed it (a regrown
    /// neighbour table recompiles the kernels).
    pub slots: u32,
    /// Whether the per-step kernels hold the per-particle arrays and neighbour slots as
    /// 64-bit words ([`words64`]; needs [`wgpu::Features::SHADER_INT64`]).
    pub words64: bool,
    /// The material of every particle, where all are of one (`ONE_MATERIAL`, `THE_MATERIAL`):
    /// the contact kernel then loads neither the particle's nor its partner's material, and
    /// the pair record at an index known when it is compiled (one load for all invocations,
    /// not one per invocation, on lavapipe).
    pub one_material: Option<u32>,
}

/// The most walls a scene may have (one bit each in a particle's wall mask).
pub use crate::shared::MAX_WALLS;

impl Specialization {
    /// Every model and the default 16 neighbour slots.
    pub const ANY: Self = Self {
        models: 0xf | crate::shared::rolling::PRESENT_BIT,
        slots: 16,
        words64: false,
        one_material: None,
    };
}

/// The stored forms of common.wgsl's words block (`Vec4Words`, `PositionWords`, ...) as
/// 64-bit words: the same bytes, each pair of u32 words one u64 (low word first, as the
/// bytes lie). Lavapipe compiles a load or store at a per-invocation index into one scalar
/// access per SIMD lane and component, so a 64-bit component moves two words for the cost of
/// one: about a quarter off the time of a Hertz step at 10^5 particles (README, Performance).
/// Jäger slots keep their struct form.
pub fn words64(slots: SlotKind) -> String {
    let slot = match slots {
        SlotKind::Narrow => {
            "alias SlotWords = vec2<u64>;
fn slot_of(w: SlotWords) -> Slot {
    let u = u32x4_of(w);
    return Slot(bitcast<vec3<f32>>(u.xyz), u.w);
}
fn slot_words(s: Slot) -> SlotWords {
    return u32x4_words(vec4<u32>(bitcast<vec3<u32>>(s.tangential), s.partner));
}"
        }
        SlotKind::Wide => {
            "alias SlotWords = vec4<u64>;
fn slot_of(w: SlotWords) -> Slot {
    let u = u32x4_of(w.xy);
    return Slot(bitcast<vec3<f32>>(u.xyz), u.w, vec4_of(w.zw));
}
fn slot_words(s: Slot) -> SlotWords {
    return vec4<u64>(u32x4_words(vec4<u32>(bitcast<vec3<u32>>(s.tangential), s.partner)),
        vec4_words(s.aux));
}"
        }
        SlotKind::Jager(_) => {
            "alias SlotWords = Slot;
fn slot_of(w: SlotWords) -> Slot {
    return w;
}
fn slot_words(s: Slot) -> SlotWords {
    return s;
}"
        }
    };
    format!(
        "fn halves(x: u64) -> vec2<u32> {{
    return vec2<u32>(u32(x), u32(x >> 32u));
}}
fn word64(h: vec2<u32>) -> u64 {{
    return u64(h.x) | (u64(h.y) << 32u);
}}
alias U32x4Words = vec2<u64>;
fn u32x4_of(w: U32x4Words) -> vec4<u32> {{
    return vec4<u32>(halves(w.x), halves(w.y));
}}
fn u32x4_words(v: vec4<u32>) -> U32x4Words {{
    return vec2<u64>(word64(v.xy), word64(v.zw));
}}
alias Vec4Words = vec2<u64>;
fn vec4_of(w: Vec4Words) -> vec4<f32> {{
    return bitcast<vec4<f32>>(u32x4_of(w));
}}
fn vec4_words(v: vec4<f32>) -> Vec4Words {{
    return u32x4_words(bitcast<vec4<u32>>(v));
}}
alias PositionWords = vec4<u64>;
fn position_of(w: PositionWords) -> Position {{
    return Position(vec4_of(w.xy), vec4_of(w.zw));
}}
fn position_words(p: Position) -> PositionWords {{
    return vec4<u64>(vec4_words(p.hi), vec4_words(p.lo));
}}
alias PredictedWords = vec4<u64>;
fn predicted_of(w: PredictedWords) -> Predicted {{
    return Predicted(vec4_of(w.xy), vec4_of(w.zw));
}}
fn predicted_words(p: Predicted) -> PredictedWords {{
    return vec4<u64>(vec4_words(p.v), vec4_words(p.w));
}}
alias ForceTorqueWords = vec4<u64>;
fn force_torque_of(w: ForceTorqueWords) -> ForceTorque {{
    return ForceTorque(vec4_of(w.xy), vec4_of(w.zw));
}}
fn force_torque_words(f: ForceTorque) -> ForceTorqueWords {{
    return vec4<u64>(vec4_words(f.force), vec4_words(f.torque));
}}
{slot}
"
    )
}

/// Full source of the named kernel for slots of kind `slots`, specialised by `spec` (the
/// models and material for the contact and moisture kernels, the slot count for the
/// neighbour-list build, the storage words for the per-step kernels).
///
/// # Panics
/// If `name` is not in [`KERNELS`] (a programming error, caught by the tests).
pub fn kernel_specialized(name: &str, slots: SlotKind, spec: Specialization) -> String {
    let (_, src) = KERNELS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no kernel named {name}"));
    let mut common = format!("{}{COMMON}", prelude(slots));
    let slot = match slots {
        SlotKind::Narrow => None,
        SlotKind::Wide => Some(WIDE_SLOT.to_owned()),
        SlotKind::Jager(points) => Some(jager_slot(points)),
    };
    if let Some(slot) = slot {
        let begin = common.find("// @slot-begin").expect("slot block");
        let end = common.find("// @slot-end").expect("slot block");
        common.replace_range(begin..end, &format!("{slot}\n"));
    }
    if spec.words64 {
        let begin = common.find("// @words-begin").expect("words block");
        let end = common.find("// @words-end").expect("words block");
        common.replace_range(begin..end, &words64(slots));
    }
    if name == "contact_forces" || name == "moisture" {
        // The models' working history holds one point more than a slot (a step may add one
        // before merging); without Jäger slots it is never used, and kept small.
        let cap = match slots {
            SlotKind::Jager(points) => points + 1,
            _ => 4,
        };
        let helpers = match slots {
            SlotKind::Jager(_) => JAGER_HELPERS,
            _ => NO_JAGER,
        };
        format!(
            "{common}\n{}\n{MODELS}\n{helpers}\nconst MODELS_PRESENT: u32 = {}u;\nconst ONE_MATERIAL: bool = {};\nconst THE_MATERIAL: u32 = {}u;\n{src}",
            jager_cap(cap),
            spec.models,
            spec.one_material.is_some(),
            spec.one_material.unwrap_or(0)
        )
    } else if name == "neighbours" {
        format!(
            "{common}\nconst NEIGHBOUR_SLOTS: u32 = {}u;\n{src}",
            spec.slots.max(1)
        )
    } else {
        format!("{common}\n{src}")
    }
}
