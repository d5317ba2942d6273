//! Every kernel parses and validates with naga, and the WGSL structs have the sizes of their
//! Rust mirrors. Needs no GPU.

use wgdem_gpu::layout;
use wgdem_gpu::shaders::{
    CELL_PROBE, CONTACT_LAW_PROBE, CONTACT_PROBE, KERNELS, SlotKind, Specialization, kernel_for,
    kernel_specialized, kernel_with, source, with_models,
};

/// Parses, validates and translates to SPIR-V (the Vulkan backend's path), so that a shader
/// the backend cannot translate fails here, without a GPU.
fn validate(name: &str, src: &str) -> naga::Module {
    validate_with(name, src, naga::valid::Capabilities::empty())
}

/// [`validate`] for a device with the capabilities `caps`.
fn validate_with(name: &str, src: &str, caps: naga::valid::Capabilities) -> naga::Module {
    let module = validate_only(name, src, caps);
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
    naga::back::spv::write_vec(&module, &info, &naga::back::spv::Options::default(), None)
        .unwrap_or_else(|e| panic!("{name}: SPIR-V: {e}"));
    module
}

fn validate_only(name: &str, src: &str, caps: naga::valid::Capabilities) -> naga::Module {
    let module = naga::front::wgsl::parse_str(src)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(src)));
    module
}

#[test]
fn every_kernel_validates() {
    for (name, _) in KERNELS {
        validate(name, &kernel_for(name, false));
        validate(&format!("{name} (wide slots)"), &kernel_for(name, true));
        validate(
            &format!("{name} (Jäger slots)"),
            &kernel_with(name, SlotKind::Jager(32)),
        );
    }
    validate("contact_law_probe", &source(CONTACT_LAW_PROBE));
    validate("cell_probe", &source(CELL_PROBE));
    validate("contact_probe", &with_models(CONTACT_PROBE));
}

/// Every kernel with the per-step kernels' 64-bit storage words (`shaders::words64`), for
/// each slot kind, on a device with 64-bit integers; and the 64-bit words need that
/// capability (so a device without it gets the 32-bit words).
#[test]
fn words64_kernels_validate() {
    let int64 = naga::valid::Capabilities::SHADER_INT64;
    for (name, _) in KERNELS {
        for slots in [SlotKind::Narrow, SlotKind::Wide, SlotKind::Jager(8)] {
            let spec = Specialization {
                words64: true,
                ..Specialization::ANY
            };
            validate_with(
                &format!("{name} ({slots:?} slots, 64-bit words)"),
                &kernel_specialized(name, slots, spec),
                int64,
            );
        }
    }
    let spec = Specialization {
        words64: true,
        ..Specialization::ANY
    };
    let src = kernel_specialized("contact_forces", SlotKind::Narrow, spec);
    let module = naga::front::wgsl::parse_str(&src).expect("parses");
    assert!(
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty()
        )
        .validate(&module)
        .is_err(),
        "64-bit words validated without SHADER_INT64"
    );
}

/// The contact kernels as engines compile them: for the spring–dashpot alone, and for each
/// other model alone with the slots it needs; and the neighbour-list build for those slots.
#[test]
fn specialized_contact_kernels_validate() {
    for name in ["contact_forces", "moisture", "neighbours"] {
        for (model, slots) in [
            (0, SlotKind::Narrow),
            (1, SlotKind::Wide),
            (2, SlotKind::Wide),
            (3, SlotKind::Jager(8)),
        ] {
            for one_material in [None, Some(1)] {
                let spec = Specialization {
                    models: 1 << model,
                    slots: 9,
                    words64: false,
                    one_material,
                };
                validate(
                    &format!("{name} (model {model} alone, one material: {one_material:?})"),
                    &kernel_specialized(name, slots, spec),
                );
            }
        }
    }
}

#[test]
fn wgsl_struct_sizes_match_rust() {
    let module = validate("common", &source(""));
    let expected = [
        ("SimParams", size_of::<layout::SimParams>()),
        ("PairRecord", size_of::<layout::PairRecord>()),
        ("Wall", size_of::<layout::Wall>()),
        ("Position", size_of::<layout::Position>()),
        ("Predicted", size_of::<layout::Predicted>()),
        ("Slot", size_of::<layout::Slot>()),
        ("ForceTorque", size_of::<layout::ForceTorque>()),
        ("Counters", size_of::<layout::Counters>()),
    ];
    assert_sizes(&module, &expected);
}

/// Each named WGSL struct of `module` has the size of its Rust mirror.
fn assert_sizes(module: &naga::Module, expected: &[(&str, usize)]) {
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).expect("layout");
    for &(name, rust) in expected {
        let (handle, _) = module
            .types
            .iter()
            .find(|(_, t)| t.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no WGSL struct {name}"));
        let wgsl = layouter[handle].size as usize;
        assert_eq!(wgsl, rust, "{name}: WGSL {wgsl} bytes, Rust {rust} bytes");
    }
}

#[test]
fn contact_probe_struct_sizes_match_rust() {
    use wgdem_gpu::contact_probe::{PROBE_STATE_BYTES, ProbeOut, ProbeSetup, ProbeStep};
    let module = validate("contact_probe", &with_models(CONTACT_PROBE));
    assert_sizes(
        &module,
        &[
            ("ProbeSetup", size_of::<ProbeSetup>()),
            ("ProbeStep", size_of::<ProbeStep>()),
            ("ProbeOut", size_of::<ProbeOut>()),
            ("ProbeState", PROBE_STATE_BYTES),
        ],
    );
}
