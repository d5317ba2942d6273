//! Every kernel parses and validates with naga, and the WGSL structs have the sizes of their
//! Rust mirrors. Needs no GPU.

use wgdem_gpu::engine::{Bind, KERNEL_DECLS, Row, tables, unused};
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
/// other model alone with the slots it needs, with and without walls; and the neighbour-list
/// build for those slots.
#[test]
fn specialized_contact_kernels_validate() {
    for name in ["contact_forces", "moisture", "neighbours", "integrate"] {
        for (model, slots) in [
            (0, SlotKind::Narrow),
            (1, SlotKind::Wide),
            (2, SlotKind::Wide),
            (3, SlotKind::Jager(8)),
        ] {
            for (one_material, walls) in [(None, true), (Some(1), true), (Some(1), false)] {
                let spec = Specialization {
                    models: 1 << model,
                    slots: 9,
                    words64: false,
                    one_material,
                    walls,
                };
                validate(
                    &format!(
                        "{name} (model {model} alone, one material: {one_material:?}, walls: \
                         {walls})"
                    ),
                    &kernel_specialized(name, slots, spec),
                );
            }
        }
    }
}

/// Every kernel file compiled as an engine with narrow slots compiles it, with 32- and 64-bit
/// storage words.
fn engine_modules() -> Vec<(String, naga::Module)> {
    let mut out = Vec::new();
    for (name, _) in KERNELS {
        out.push((name.to_string(), validate(name, &kernel_for(name, false))));
        let spec = Specialization {
            words64: true,
            ..Specialization::ANY
        };
        out.push((
            format!("{name} (64-bit words)"),
            validate_with(
                name,
                &kernel_specialized(name, SlotKind::Narrow, spec),
                naga::valid::Capabilities::SHADER_INT64,
            ),
        ));
    }
    out
}

/// Every Rust mirror of `layout.rs`, compared field by field (name, offset, size) with each
/// WGSL struct of its name in every kernel that declares it; each mirror must be found in at
/// least one kernel.
#[test]
fn wgsl_structs_match_rust_field_by_field() {
    let mirrors: Vec<(&str, Vec<layout::Field>, usize)> = vec![
        mirror::<layout::SimParams>(),
        mirror::<layout::PairRecord>(),
        mirror::<layout::Wall>(),
        mirror::<layout::Position>(),
        mirror::<layout::Predicted>(),
        mirror::<layout::Slot>(),
        mirror::<layout::ForceTorque>(),
        mirror::<layout::Counters>(),
        mirror::<layout::RadixPass>(),
        mirror::<layout::Chunk>(),
        mirror::<layout::MoistureAction>(),
        mirror::<layout::WallAlloc>(),
        mirror::<layout::Permute>(),
        mirror::<layout::Drive>(),
        mirror::<layout::CellStep>(),
        mirror::<layout::CellHead>(),
        mirror::<layout::RowSums>(),
    ];
    let modules = engine_modules();
    for (name, fields, rust_size) in &mirrors {
        let mut found = 0;
        for (kernel, module) in &modules {
            let mut layouter = naga::proc::Layouter::default();
            layouter.update(module.to_ctx()).expect("layout");
            for (handle, ty) in module.types.iter() {
                if ty.name.as_deref() != Some(*name) {
                    continue;
                }
                let naga::TypeInner::Struct { members, .. } = &ty.inner else {
                    panic!("{kernel}: {name} is not a struct");
                };
                found += 1;
                let wgsl: Vec<layout::Field> = members
                    .iter()
                    .map(|m| layout::Field {
                        name: leak(m.name.clone().unwrap_or_default()),
                        offset: m.offset as usize,
                        size: layouter[m.ty].size as usize,
                    })
                    .collect();
                assert_eq!(
                    wgsl.len(),
                    fields.len(),
                    "{kernel}: {name} has {} fields in WGSL, {} in Rust",
                    wgsl.len(),
                    fields.len()
                );
                for (w, r) in wgsl.iter().zip(fields) {
                    assert_eq!(w, r, "{kernel}: {name}: WGSL field {w:?}, Rust {r:?}");
                }
                let size = layouter[handle].size as usize;
                assert_eq!(
                    size, *rust_size,
                    "{kernel}: {name}: WGSL {size} bytes, Rust {rust_size}"
                );
            }
        }
        assert!(found > 0, "no kernel declares the WGSL struct {name}");
    }
}

fn mirror<T: layout::WgslMirror>() -> (&'static str, Vec<layout::Field>, usize) {
    (T::WGSL_NAME, T::fields(), size_of::<T>())
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// A global with a binding: its name, its access, and whether the entry point uses it.
type Global = (String, Bind, bool);

/// The globals of `module` by binding index (all in group 0), each marked with whether entry
/// point `entry` uses it (a module shared by several kernels declares more than each binds).
fn wgsl_bindings(what: &str, module: &naga::Module, entry: &str) -> Vec<Option<Global>> {
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(module)
    .unwrap_or_else(|e| panic!("{what}: {e}"));
    let index = module
        .entry_points
        .iter()
        .position(|e| e.name == entry)
        .unwrap_or_else(|| panic!("{what}: no entry point {entry}"));
    let uses = info.get_entry_point(index);
    let mut out: Vec<Option<Global>> = Vec::new();
    for (handle, var) in module.global_variables.iter() {
        let Some(binding) = &var.binding else {
            continue;
        };
        let name = var.name.clone().unwrap_or_default();
        assert_eq!(
            binding.group, 0,
            "{what}: `{name}` is in group {}",
            binding.group
        );
        let access = match var.space {
            naga::AddressSpace::Uniform => Bind::Uniform,
            naga::AddressSpace::Storage { access }
                if access.contains(naga::StorageAccess::STORE) =>
            {
                Bind::Write
            }
            naga::AddressSpace::Storage { .. } => Bind::Read,
            other => panic!("{what}: `{name}` in address space {other:?}"),
        };
        let k = binding.binding as usize;
        if out.len() <= k {
            out.resize(k + 1, None);
        }
        assert!(out[k].is_none(), "{what}: two globals at binding {k}");
        out[k] = Some((name, access, !uses[handle].is_empty()));
    }
    out
}

/// Whether `table` binds the entry point's globals: row i names the global at `@binding(i)`
/// and has its access; an unused row (a gap) has no global the entry point uses; and the
/// entry point uses no global beyond the table.
fn table_matches(table: &[Row], wgsl: &[Option<Global>]) -> Result<(), String> {
    for (k, row) in table.iter().enumerate() {
        let global = wgsl.get(k).and_then(Option::as_ref);
        if row.access == Bind::Unused {
            if let Some((name, _, true)) = global {
                return Err(format!(
                    "the kernel uses `{name}` at binding {k}, where Rust binds nothing"
                ));
            }
            continue;
        }
        let Some((name, access, _)) = global else {
            return Err(format!(
                "Rust binds `{}` ({:?}) at {k}, where the WGSL declares nothing",
                row.name, row.buffer
            ));
        };
        if row.name != name {
            return Err(format!(
                "binding {k} is `{name}` in the WGSL, where Rust binds `{}` ({:?})",
                row.name, row.buffer
            ));
        }
        if row.access != *access {
            return Err(format!(
                "`{name}` (binding {k}) is {access:?} in the WGSL, {:?} in Rust",
                row.access
            ));
        }
    }
    if let Some((k, (name, _, _))) = wgsl
        .iter()
        .enumerate()
        .skip(table.len())
        .find_map(|(k, g)| g.as_ref().filter(|g| g.2).map(|g| (k, g)))
    {
        return Err(format!(
            "the kernel uses `{name}` at binding {k}, which Rust does not bind"
        ));
    }
    Ok(())
}

/// Each pipeline of `KERNEL_DECLS` binds its WGSL globals by name: row i of its pass's table
/// names the global at `@binding(i)`, with its access (a uniform where Rust says `Uniform`,
/// read-only storage where it says `Read`, read-write where it says `Write`), for every slot
/// layout and storage word size the engine compiles it with. So two buffers of one type
/// swapped in a table, or a buffer left out, fail here by name.
#[test]
fn kernel_bindings_match_rust_by_name() {
    assert!(!KERNEL_DECLS.is_empty());
    for decl in KERNEL_DECLS {
        assert!(
            tables::ALL
                .iter()
                .any(|(_, t)| std::ptr::eq(*t, decl.table)),
            "{}: its table is not among `tables::ALL`",
            decl.label
        );
        let words64 = Specialization {
            words64: true,
            ..Specialization::ANY
        };
        let variants = [
            (
                kernel_for(decl.file, false),
                naga::valid::Capabilities::empty(),
            ),
            (
                kernel_with(decl.file, SlotKind::Jager(8)),
                naga::valid::Capabilities::empty(),
            ),
            (
                kernel_specialized(decl.file, SlotKind::Wide, words64),
                naga::valid::Capabilities::SHADER_INT64,
            ),
        ];
        for (src, caps) in variants {
            let module = validate_with(decl.label, &src, caps);
            assert!(
                module.entry_points.iter().any(|e| e.name == decl.entry),
                "{}: no entry point {} in {}.wgsl",
                decl.label,
                decl.entry,
                decl.file
            );
            let wgsl = wgsl_bindings(decl.label, &module, decl.entry);
            if let Err(e) = table_matches(decl.table, &wgsl) {
                panic!("{} ({}.wgsl): {e}", decl.label, decl.file);
            }
        }
    }
}

/// The check above fails, naming the binding, for a table with two buffers of one type
/// swapped, one left out, one too many, or an access changed.
#[test]
fn a_swapped_or_missing_binding_fails_by_name() {
    let module = validate("contact_forces", &kernel_for("contact_forces", false));
    let wgsl = wgsl_bindings("contact_forces", &module, "main");
    let good = tables::CONTACTS.to_vec();
    assert_eq!(table_matches(&good, &wgsl), Ok(()));
    // `vel` and `pred` are both read-only storage: a swap keeps every binding's type.
    let mut swapped = good.clone();
    swapped.swap(2, 3);
    assert_eq!(swapped[2].access, swapped[3].access);
    let e = table_matches(&swapped, &wgsl).expect_err("swap passed");
    assert!(e.contains("`vel`") && e.contains("`pred`"), "{e}");
    let mut missing = good.clone();
    missing.pop();
    let e = table_matches(&missing, &wgsl).expect_err("missing binding passed");
    assert!(e.contains("`cell_stress`"), "{e}");
    let mut extra = good.clone();
    extra.push(good[1]);
    assert!(
        table_matches(&extra, &wgsl).is_err(),
        "extra binding passed"
    );
    let mut access = good;
    access[1].access = Bind::Write;
    let e = table_matches(&access, &wgsl).expect_err("access change passed");
    assert!(e.contains("`pos`"), "{e}");
    // `integrate` shares the contact kernels' module and numbering, leaving gaps where they
    // bind what it does not: a gap where it uses a global fails by name.
    let module = validate("integrate", &kernel_for("integrate", false));
    let wgsl = wgsl_bindings("integrate", &module, "integrate");
    let good = tables::INTEGRATE.to_vec();
    assert_eq!(table_matches(&good, &wgsl), Ok(()));
    let mut gap = good;
    gap[1] = unused();
    let e = table_matches(&gap, &wgsl).expect_err("a gap over a used global passed");
    assert!(e.contains("`pos`"), "{e}");
}

/// The value of the `u32` (or abstract integer) constant `name` of `module`, if it has one.
fn constant(module: &naga::Module, name: &str) -> Option<u64> {
    let (_, c) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))?;
    match module.global_expressions[c.init] {
        naga::Expression::Literal(naga::Literal::U32(v)) => Some(u64::from(v)),
        naga::Expression::Literal(naga::Literal::AbstractInt(v)) => u64::try_from(v).ok(),
        ref other => panic!("{name} is {other:?}"),
    }
}

/// The shared constants are defined once, in Rust: every kernel as composed carries each of
/// them with its value, no WGSL file defines one of them itself, and each is used by some
/// shader.
#[test]
fn shared_constants_are_defined_once_in_rust() {
    use wgdem_gpu::shared::CONSTANTS;
    let files: Vec<(&str, &str)> = KERNELS
        .iter()
        .copied()
        .chain([
            ("common", wgdem_gpu::shaders::COMMON),
            ("models", wgdem_gpu::shaders::MODELS),
            ("jager_slot", wgdem_gpu::shaders::JAGER_SLOT),
            ("slot_tables", wgdem_gpu::shaders::SLOT_TABLES),
            (
                "contact_probe_points",
                wgdem_gpu::shaders::CONTACT_PROBE_POINTS,
            ),
            ("contact_probe", CONTACT_PROBE),
            ("contact_law_probe", CONTACT_LAW_PROBE),
            ("cell_probe", CELL_PROBE),
        ])
        .collect();
    let modules: Vec<(&str, naga::Module)> = KERNELS
        .iter()
        .map(|(kernel, _)| (*kernel, validate(kernel, &kernel_for(kernel, false))))
        .collect();
    for (name, value) in CONSTANTS {
        for (kernel, module) in &modules {
            assert_eq!(
                constant(module, name),
                Some(u64::from(*value)),
                "{kernel}: {name}"
            );
        }
        let own = format!("const {name}");
        for (file, src) in &files {
            assert!(!src.contains(&own), "{file}.wgsl defines {name} itself");
        }
        assert!(
            files.iter().any(|(_, src)| contains_word(src, name)),
            "no shader uses {name}"
        );
    }
    // A slot's width in words comes from `SlotKind::words` alone, through `package::spec`.
    for (file, src) in &files {
        assert!(
            !src.contains("const SLOT_WORDS"),
            "{file}.wgsl defines SLOT_WORDS itself"
        );
    }
    for slots in [SlotKind::Narrow, SlotKind::Wide, SlotKind::Jager(8)] {
        for (kernel, _) in KERNELS {
            let module = validate(kernel, &kernel_with(kernel, slots));
            assert_eq!(
                constant(&module, "SLOT_WORDS"),
                Some(slots.words() as u64),
                "{kernel} ({slots:?})"
            );
        }
    }
}

/// A kernel composes to the same text every time (WESL's own module order changes between
/// compilations: the driver's shader cache and the reproducibility of a run need one text).
#[test]
fn composition_is_the_same_every_time() {
    let first = with_models(CONTACT_PROBE);
    for _ in 0..8 {
        assert!(
            with_models(CONTACT_PROBE) == first,
            "contact_probe composed differently"
        );
    }
    let first = source(CELL_PROBE);
    for _ in 0..8 {
        assert!(
            source(CELL_PROBE) == first,
            "cell_probe composed differently"
        );
    }
    // The shared constants first and the kernel's own declarations last, as a spliced source.
    let shared = first
        .find("const FAILED_NEIGHBOURS")
        .expect("shared constants");
    let common = first.find("struct SimParams").expect("common");
    let own = first.find("fn main").expect("entry point");
    assert!(shared < common && common < own);
}

/// The kernel files are WGSL composed by WESL alone: none is spliced by markers, and the Rust
/// that composes them holds no WGSL function or struct (the generated constant modules aside).
#[test]
fn kernels_are_composed_from_the_shader_files() {
    let files = KERNELS.iter().copied().chain([
        ("common", wgdem_gpu::shaders::COMMON),
        ("models", wgdem_gpu::shaders::MODELS),
    ]);
    for (file, src) in files {
        assert!(
            !src.contains("@slot-begin") && !src.contains("@words-begin"),
            "{file}"
        );
    }
    let composer = include_str!("../src/shaders.rs");
    for wgsl in ["fn slot_of(", "struct Slot {", "fn jager_load(", "alias "] {
        assert!(!composer.contains(wgsl), "shaders.rs holds `{wgsl}`");
    }
}

fn contains_word(src: &str, word: &str) -> bool {
    src.match_indices(word).any(|(i, _)| {
        let before = src[..i].chars().next_back();
        let after = src[i + word.len()..].chars().next();
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !ident(before) && !ident(after)
    })
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
