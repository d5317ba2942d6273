//! The WGSL kernels, each prefixed with `common.wgsl` (a flat include, no shader composer).

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

/// Full source of a kernel that uses the contact models: common, models, then the kernel.
pub fn with_models(kernel: &str) -> String {
    format!("{COMMON}\n{MODELS}\n{kernel}")
}

/// Test-only kernel that evaluates `contact_force` on arrays of states.
pub const CONTACT_LAW_PROBE: &str = include_str!("../../../shaders/contact_law_probe.wgsl");

/// Full source of a kernel: the common prelude then the kernel.
pub fn source(kernel: &str) -> String {
    format!("{COMMON}\n{kernel}")
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
const SLOT_WORDS: u32 = 8u;
fn make_slot(tangential: vec3<f32>, partner: u32) -> Slot {
    return Slot(tangential, partner, vec4<f32>(0.0));
}
fn slot_aux(s: Slot) -> vec4<f32> {
    return s.aux;
}
fn with_aux(s: Slot, aux: vec4<f32>) -> Slot {
    return Slot(s.tangential, s.partner, aux);
}";

/// Full source of the named kernel; `wide` selects 32-byte slots (engines whose material pairs
/// use the Kuhn or hill model). The contact and moisture kernels also get the models of
/// [`MODELS`].
///
/// # Panics
/// If `name` is not in [`KERNELS`] (a programming error, caught by the tests).
pub fn kernel_for(name: &str, wide: bool) -> String {
    let (_, src) = KERNELS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no kernel named {name}"));
    let mut common = COMMON.to_owned();
    if wide {
        let begin = common.find("// @slot-begin").expect("slot block");
        let end = common.find("// @slot-end").expect("slot block");
        common.replace_range(begin..end, &format!("{WIDE_SLOT}\n"));
    }
    if name == "contact_forces" || name == "moisture" {
        format!("{common}\n{MODELS}\n{src}")
    } else {
        format!("{common}\n{src}")
    }
}
