//! The WGSL kernels, composed with WESL (`docs/decisions/shader-composition.md`): each kernel
//! file in `shaders/` imports by name what it takes from `common.wgsl`, `models.wgsl`,
//! `jager_slot.wgsl` and two modules generated here, `package::shared` (the constants of
//! [`crate::shared`]) and `package::spec` (the numbers a kernel is compiled for: slot words,
//! Jäger points and capacity, the models present, the one material, whether there are walls,
//! the list build's slots).
//! Variants are WESL flags on declarations: `slot_wide`, `slot_jager` (the slot layout) and
//! `words64` (64-bit storage words). No WGSL lives in Rust beyond those generated constants.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use wesl::{CompileOptions, Feature, Features, ModulePath, NoMangler, VirtualResolver};

/// Shared structs and functions (`package::common`).
pub const COMMON: &str = include_str!("../../../shaders/common.wgsl");

/// The contact kernels (`package::contact_forces` for `integrate.wgsl`).
const CONTACT_FORCES: &str = include_str!("../../../shaders/contact_forces.wgsl");

/// Every kernel file: name and source.
pub const KERNELS: [(&str, &str); 12] = [
    ("permute", include_str!("../../../shaders/permute.wgsl")),
    ("rebuild", include_str!("../../../shaders/rebuild.wgsl")),
    ("hash", include_str!("../../../shaders/hash.wgsl")),
    ("radix", include_str!("../../../shaders/radix.wgsl")),
    ("buckets", include_str!("../../../shaders/buckets.wgsl")),
    (
        "neighbours",
        include_str!("../../../shaders/neighbours.wgsl"),
    ),
    ("contact_forces", CONTACT_FORCES),
    (
        "wall_reduce",
        include_str!("../../../shaders/wall_reduce.wgsl"),
    ),
    ("integrate", include_str!("../../../shaders/integrate.wgsl")),
    (
        "cell_reduce",
        include_str!("../../../shaders/cell_reduce.wgsl"),
    ),
    ("moisture", include_str!("../../../shaders/moisture.wgsl")),
    (
        "row_reduce",
        include_str!("../../../shaders/row_reduce.wgsl"),
    ),
];

/// The contact models beyond the spring–dashpot (Kuhn, hill, Jäger; `package::models`).
pub const MODELS: &str = include_str!("../../../shaders/models.wgsl");

/// A Jäger history's head between a slot and the models' state (`package::jager_slot`).
pub const JAGER_SLOT: &str = include_str!("../../../shaders/jager_slot.wgsl");

/// The contact kernels' slot tables, where the models keep a Jäger history's points
/// (`package::slot_tables`).
pub const SLOT_TABLES: &str = include_str!("../../../shaders/slot_tables.wgsl");

/// The contact probe's `package::slot_tables`: its working Jäger points.
pub const CONTACT_PROBE_POINTS: &str = include_str!("../../../shaders/contact_probe_points.wgsl");

/// Drives contacts through given kinematics with the models of [`MODELS`].
pub const CONTACT_PROBE: &str = include_str!("../../../shaders/contact_probe.wgsl");

/// Test-only kernel that evaluates `contact_force` on arrays of states.
pub const CONTACT_LAW_PROBE: &str = include_str!("../../../shaders/contact_law_probe.wgsl");

/// Test-only kernel that packs and unpacks hash cells (`pack_cell`, `unpack_cell_near`).
pub const CELL_PROBE: &str = include_str!("../../../shaders/cell_probe.wgsl");

/// Layout of the neighbour slots an engine compiles its kernels for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// What the kernels are compiled for beyond their slot layout: the contact models a scene's
/// pairs use, whether all its particles share one material, and the storage words of the
/// per-step kernels (`words64`). The branches of the other models are compiled out; on
/// lavapipe this makes the Hertz contact stage 2–3 times faster, and the results are bitwise
/// those of the kernel compiled for every model (`tests/gpu_specialization.rs`). The law and
/// history mode stay run-time values: fixing them as constants gained nothing measurable and
/// let the compiler contract the arithmetic differently, which changes the last bits.
///
/// WGSL zero-initialises a private array in every invocation, and lavapipe keeps one that is
/// indexed at run time in memory: the per-step contact kernel has none sized by the tables
/// (it finds a wall's slot by rank, see contact_forces.wgsl), and the neighbour-list build's,
/// run only at rebuilds, are sized for the table's slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Specialization {
    /// Bit m set where some pair uses model m (`PairRecord::model`: 0 spring–dashpot, 1 Kuhn,
    /// 2 hill, 3 Jäger), and [`crate::shared::rolling::PRESENT_BIT`] where some pair has
    /// rolling resistance.
    pub models: u32,
    /// Neighbour slots per particle the list build can hold (`NEIGHBOUR_SLOTS`, the size of
    /// its private arrays; see neighbours.wgsl); the engine's must not exceed it. The engine
    /// rounds it up to a multiple of [`NEIGHBOUR_SLOTS_STEP`], so that most regrowths of the
    /// table leave the list build as it is; only the list build's source depends on it (the
    /// other kernels are composed without it), so a regrowth that changes it recompiles that
    /// one kernel.
    pub slots: u32,
    /// Whether the per-step kernels hold the per-particle arrays and neighbour slots as
    /// 64-bit words (the `words64` flag of common.wgsl: the same bytes, each pair of u32 words
    /// one u64; needs [`wgpu::Features::SHADER_INT64`]). Lavapipe compiles a load or store at
    /// a per-invocation index into one scalar access per SIMD lane and component, so a 64-bit
    /// component moves two words for the cost of one: about a quarter off the time of a Hertz
    /// step at 10^5 particles. Jäger slots keep their struct form.
    pub words64: bool,
    /// The material of every particle, where all are of one (`ONE_MATERIAL`, `THE_MATERIAL`):
    /// the contact kernel then loads neither the particle's nor its partner's material, and
    /// the pair record at an index known when it is compiled (one load for all invocations,
    /// not one per invocation, on lavapipe).
    pub one_material: Option<u32>,
    /// Whether the scene has walls (`WALLS_PRESENT`): an engine's walls are fixed when it is
    /// made, so without them (a periodic cell) the contact kernels are compiled without their
    /// wall contacts, which lavapipe compiles as a second copy of the contact models.
    pub walls: bool,
}

/// [`Specialization::slots`] is a multiple of this: a driver compiles each kernel variant at
/// its first use (lavapipe: about 12 s for an engine's Hertz kernels on a cold shader cache),
/// and a table regrown by a few slots then keeps its list build.
pub const NEIGHBOUR_SLOTS_STEP: u32 = 8;

/// The list build's capacity ([`Specialization::slots`]) for a table of `slots` per particle.
pub fn neighbour_slots_for(slots: u32) -> u32 {
    slots.max(1).div_ceil(NEIGHBOUR_SLOTS_STEP) * NEIGHBOUR_SLOTS_STEP
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
        walls: true,
    };
}

/// Points of the contact kernels' working Jäger history: one more than a slot holds (a step
/// may add one before merging); without Jäger slots it is never used, and kept small.
fn working_jager_points(slots: SlotKind) -> u32 {
    match slots {
        SlotKind::Jager(points) => points + 1,
        _ => 4,
    }
}

/// `package::spec`: the numbers a kernel is compiled for; `NEIGHBOUR_SLOTS` only where
/// `spec.slots` is set (the list build's).
fn spec_module(slots: SlotKind, spec: Specialization, jager_cap: u32) -> String {
    let points = match slots {
        SlotKind::Jager(points) => points,
        _ => 1,
    };
    format!(
        "// The numbers this kernel is compiled for (generated by wgdem-gpu's shaders.rs).
const SLOT_WORDS: u32 = {}u;
const JAGER_POINTS: u32 = {points}u;
const JAGER_CAP: u32 = {jager_cap}u;
const MODELS_PRESENT: u32 = {}u;
const ONE_MATERIAL: bool = {};
const THE_MATERIAL: u32 = {}u;
const WALLS_PRESENT: bool = {};
{}",
        slots.words(),
        spec.models,
        spec.one_material.is_some(),
        spec.one_material.unwrap_or(0),
        spec.walls,
        if spec.slots > 0 {
            format!("const NEIGHBOUR_SLOTS: u32 = {}u;\n", spec.slots)
        } else {
            String::new()
        }
    )
}

/// Composes `root` (a kernel file's source; `name` in messages) with the shared modules for
/// slots of kind `slots`, specialised by `spec`.
///
/// # Panics
/// Where the sources do not compose (a programming error, caught by `shader_validation.rs`).
fn compose(
    name: &str,
    root: &str,
    slots: SlotKind,
    spec: Specialization,
    jager_cap: u32,
) -> String {
    let path = |p: &str| -> ModulePath {
        p.parse()
            .unwrap_or_else(|e| panic!("module path {p}: {e:?}"))
    };
    let mut resolver = VirtualResolver::new();
    resolver.add_module(
        path("package::shared"),
        Cow::Owned(crate::shared::wgsl_module()),
    );
    resolver.add_module(
        path("package::spec"),
        Cow::Owned(spec_module(slots, spec, jager_cap)),
    );
    resolver.add_module(path("package::common"), Cow::Borrowed(COMMON));
    resolver.add_module(path("package::models"), Cow::Borrowed(MODELS));
    resolver.add_module(path("package::jager_slot"), Cow::Borrowed(JAGER_SLOT));
    // Where the models keep a Jäger history's points: the probe's working array, or the slots.
    let slot_tables = if name == "probe" {
        CONTACT_PROBE_POINTS
    } else {
        SLOT_TABLES
    };
    resolver.add_module(path("package::slot_tables"), Cow::Borrowed(slot_tables));
    resolver.add_module(
        path("package::contact_forces"),
        Cow::Borrowed(CONTACT_FORCES),
    );
    resolver.add_module(path("package::kernel"), Cow::Borrowed(root));
    // `integrate.wgsl` builds on the contact kernels' module, whose state bindings are then
    // writable (see `steps` there).
    let integrating = name == "integrate";
    let flags = [
        ("slot_wide", slots == SlotKind::Wide),
        ("slot_jager", matches!(slots, SlotKind::Jager(_))),
        ("words64", spec.words64),
        ("integrating", integrating),
    ];
    let options = CompileOptions {
        // Every declaration kept, as written: the bindings a pass declares stay in the
        // module whether or not an entry point uses them.
        strip: false,
        lazy: false,
        validate: false,
        lower: false,
        mangle_root: false,
        features: Features {
            default: Feature::Error,
            flags: flags
                .iter()
                .map(|&(flag, on)| (flag.to_owned(), Feature::from(on)))
                .collect(),
        },
        ..CompileOptions::default()
    };
    let mut composed = wesl::compile(&path("package::kernel"), &resolver, &NoMangler, &options)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    // WESL assembles the modules in an order that changes from one process to the next (it
    // keeps a module's imports in a hash map). The same kernel must be the same text every
    // time: the driver's shader cache is keyed by it, and a run is reproducible to the bit only
    // if the pipeline is. So the declarations are put in the order of a spliced source: the
    // shared constants, the spec, common, models, the Jäger slot helpers, then the kernel,
    // each module's in its own order.
    let sources = [
        crate::shared::wgsl_module(),
        spec_module(slots, spec, jager_cap),
        COMMON.to_owned(),
        slot_tables.to_owned(),
        MODELS.to_owned(),
        JAGER_SLOT.to_owned(),
        if integrating {
            CONTACT_FORCES.to_owned()
        } else {
            String::new()
        },
        root.to_owned(),
    ];
    let rank = declaration_ranks(&sources);
    composed
        .syntax
        .global_declarations
        .sort_by_key(|d| declared_name(d.node()).and_then(|n| rank.get(&n).copied()));
    composed.to_string()
}

/// The place of every module-scope name of `sources` (in that order, each in source order):
/// the declarations that start a line (`const`, `struct`, `fn`, `alias`, `override`, and
/// `var`, bare or after a binding's attributes).
fn declaration_ranks(sources: &[String]) -> HashMap<String, usize> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut rank = HashMap::new();
    for line in sources.iter().flat_map(|s| s.lines()) {
        let name = if let Some(var) = line.strip_prefix("var").or_else(|| {
            line.starts_with('@')
                .then(|| line.split_once(" var").map(|(_, v)| v))?
        }) {
            // `var<space, access> name` or `var name`.
            let rest = match var.strip_prefix('<') {
                Some(r) => r.split_once('>').map_or("", |(_, r)| r),
                None => var,
            };
            ident(rest)
        } else {
            let mut words = line.splitn(2, ' ');
            match (words.next(), words.next()) {
                (Some("const" | "struct" | "fn" | "alias" | "override"), Some(rest)) => ident(rest),
                _ => continue,
            }
        };
        if !name.is_empty() {
            let next = rank.len();
            rank.entry(name).or_insert(next);
        }
    }
    rank
}

/// The name a module-scope declaration declares, if any.
fn declared_name(d: &wesl::syntax::GlobalDeclaration) -> Option<String> {
    use wesl::syntax::GlobalDeclaration as G;
    let ident = match d {
        G::Declaration(d) => &d.ident,
        G::TypeAlias(a) => &a.ident,
        G::Struct(s) => &s.ident,
        G::Function(f) => &f.ident,
        G::Void | G::ConstAssert(_) => return None,
    };
    Some(ident.name().clone())
}

/// Full source of a probe kernel that uses the contact models (narrow slots, every model, a
/// working Jäger history of [`crate::shared::JAGER_GPU_CAPACITY`] points and one more).
pub fn with_models(kernel: &str) -> String {
    compose(
        "probe",
        kernel,
        SlotKind::Narrow,
        Specialization::ANY,
        crate::shared::JAGER_GPU_CAPACITY as u32 + 1,
    )
}

/// Full source of a probe kernel (narrow slots, every model).
pub fn source(kernel: &str) -> String {
    compose(
        "probe",
        kernel,
        SlotKind::Narrow,
        Specialization::ANY,
        working_jager_points(SlotKind::Narrow),
    )
}

/// Full source of the named kernel with narrow (16-byte) contact slots.
///
/// # Panics
/// If `name` is not in [`KERNELS`] (a programming error, caught by the tests).
pub fn kernel(name: &str) -> String {
    kernel_for(name, false)
}

/// Full source of the named kernel; `wide` selects 32-byte slots (engines whose material pairs
/// use the Kuhn or hill model).
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

/// What a composed kernel depends on: its file, the slot layout and the specialisation.
type KernelKey = (&'static str, SlotKind, Specialization);

/// Full source of the named kernel for slots of kind `slots`, specialised by `spec` (the
/// models and material for the contact kernel, the slot count for the neighbour-list build,
/// the storage words for the per-step kernels).
///
/// # Panics
/// If `name` is not in [`KERNELS`] (a programming error, caught by the tests).
pub fn kernel_specialized(name: &str, slots: SlotKind, spec: Specialization) -> String {
    let (name, src) = KERNELS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no kernel named {name}"));
    // Composing takes about 10 ms a kernel; an engine compiles 23 and a regrowth or a new
    // engine of the same kind compiles the same again, so each is composed once a process.
    static COMPOSED: LazyLock<Mutex<HashMap<KernelKey, Arc<str>>>> = LazyLock::new(Mutex::default);
    // Only the list build's source depends on the slot count (`NEIGHBOUR_SLOTS`); the other
    // kernels are composed without it, so that a regrown table recompiles the list build alone.
    let spec = if *name == "neighbours" {
        spec
    } else {
        Specialization { slots: 0, ..spec }
    };
    let key = (*name, slots, spec);
    if let Some(src) = COMPOSED.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return src.to_string();
    }
    let composed: Arc<str> = compose(name, src, slots, spec, working_jager_points(slots)).into();
    if let Ok(mut cache) = COMPOSED.lock() {
        cache.insert(key, composed.clone());
    }
    composed.to_string()
}
