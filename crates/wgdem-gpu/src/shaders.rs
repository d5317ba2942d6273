//! The WGSL kernels, each prefixed with `common.wgsl` (a flat include, no shader composer).

/// Shared structs and functions.
pub const COMMON: &str = include_str!("../../../shaders/common.wgsl");

/// Every kernel file: name and source (without the common prelude).
pub const KERNELS: [(&str, &str); 10] = [
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

/// Full source of the named kernel.
///
/// # Panics
/// If `name` is not in [`KERNELS`] (a programming error, caught by the tests).
pub fn kernel(name: &str) -> String {
    let (_, src) = KERNELS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no kernel named {name}"));
    source(src)
}
