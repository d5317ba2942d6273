//! Packing readers and writers: formats, exact read-back, scene groups, errors.

use super::*;

fn file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

fn error(path: &Path) -> String {
    match read_packing(path) {
        Ok(p) => panic!("{} accepted: {p:?}", path.display()),
        Err(e) => e.to_string(),
    }
}

/// A CSV with or without a header, with unit-suffixed names and an id column, or the
/// documented order; bad cells are refused with line and column.
#[test]
fn csv_packings_and_their_errors() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path();
    let plain = read_packing(&file(
        d,
        "a.csv",
        "0,0,0.001,0.001\n0.003,0,0.001,0.0015,1,2,3\n",
    ));
    assert!(plain.is_err(), "rows of different lengths are refused");
    let p = read_packing(&file(
        d,
        "b.csv",
        "id,x_m,y_m,z_m,radius_m,vx_m_s,material\n0,0.0,0.0,0.001,0.001,0.5,1\n1,0.003,0.0,0.001,0.0015,0.0,glass\n",
    ))
    .expect("b.csv");
    assert_eq!(p.spheres.len(), 2);
    assert_eq!(p.spheres[1].radius, 0.0015);
    assert_eq!(p.spheres[0].velocity, DVec3::new(0.5, 0.0, 0.0));
    assert_eq!(p.spheres[0].material, MaterialRef::Index(1));
    assert_eq!(p.spheres[1].material, MaterialRef::Name("glass".into()));
    let p = read_packing(&file(d, "c.csv", "# x y z r\n1,2,3,0.5\n4,5,6,0.25\n")).expect("c");
    assert_eq!(p.spheres[1].position, DVec3::new(4.0, 5.0, 6.0));
    for (name, text, want) in [
        (
            "nan.csv",
            "x,y,z,radius\n0,0,NaN,0.001\n",
            "line 2: `column 3 (z)`",
        ),
        (
            "neg.csv",
            "x,y,z,radius\n0,0,0,-0.001\n",
            "line 2: `column 4 (radius)`",
        ),
        (
            "text.csv",
            "x,y,z,radius\n0,zero,0,0.001\n",
            "line 2: `column 2 (y)`",
        ),
        ("cols.csv", "x,y,z,radius\n0,0,0,0.001,7\n", "line 2"),
        ("head.csv", "x,y,z,r\n0,0,0,0.001\n", "column 4 (r)"),
        ("nor.csv", "x,y,z\n0,0,0\n", "no `radius` column"),
    ] {
        let e = error(&file(d, name, text));
        assert!(e.contains(name) && e.contains(want), "{name}: {e}");
    }
}

/// A LAMMPS data file of atom_style sphere (diameters; the velocities section by id) and
/// a dump file (the last frame; radius or diameter columns).
#[test]
fn lammps_data_and_dump() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path();
    let data = "LAMMPS data file via write_data\n\n3 atoms\n2 atom types\n\n0 0.1 xlo xhi\n0 0.1 ylo yhi\n0 0.1 zlo zhi\n\nAtoms # sphere\n\n2 1 0.002 2500 0.01 0.01 0.01 0 0 0\n1 2 0.004 2500 0.02 0.01 0.01 0 0 0\n3 1 0.002 2500 0.03 0.01 0.01\n\nVelocities\n\n1 0.1 0 0 0 0 5\n2 0 0 0 0 0 0\n3 0 0 0 0 0 0\n";
    let p = read_packing(&file(d, "p.data", data)).expect("data");
    assert!(p.lammps_types);
    // Sorted by id: atom 1 first, radius half its diameter, its velocities by id.
    assert_eq!(p.spheres[0].radius, 0.002);
    assert_eq!(p.spheres[0].material, MaterialRef::Index(2));
    assert_eq!(p.spheres[0].velocity, DVec3::new(0.1, 0.0, 0.0));
    assert_eq!(p.spheres[0].angular_velocity, DVec3::new(0.0, 0.0, 5.0));
    assert_eq!(p.spheres[1].position, DVec3::new(0.01, 0.01, 0.01));
    let e = error(&file(
        d,
        "q.data",
        &data.replace("3 1 0.002 2500 0.03", "3 1 -0.002 2500 0.03"),
    ));
    assert!(e.contains("line 14") && e.contains("diameter"), "{e}");
    let e = error(&file(d, "r.data", &data.replace("3 atoms", "4 atoms")));
    assert!(e.contains("declares 4 atoms"), "{e}");
    let dump = "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n1\nITEM: BOX BOUNDS pp pp pp\n0 1\n0 1\n0 1\nITEM: ATOMS id type x y z radius\n1 1 0.5 0.5 0.5 0.01\nITEM: TIMESTEP\n100\nITEM: NUMBER OF ATOMS\n2\nITEM: BOX BOUNDS pp pp pp\n0 1\n0 1\n0 1\nITEM: ATOMS id type x y z diameter vx vy vz\n1 1 0.5 0.5 0.4 0.02 1 0 0\n2 2 0.5 0.5 0.6 0.02 0 0 0\n";
    let p = read_packing(&file(d, "p.dump", dump)).expect("dump");
    assert_eq!(p.spheres.len(), 2, "the last frame");
    assert_eq!(p.spheres[0].radius, 0.01);
    assert_eq!(p.spheres[0].velocity, DVec3::X);
    assert_eq!(p.spheres[1].material, MaterialRef::Index(2));
    let e = error(&file(
        d,
        "q.dump",
        &dump.replace("2 2 0.5 0.5 0.6 0.02 0 0 0", "2 2 0.5 0.5 0.6 0.02 0 0"),
    ));
    assert!(e.contains("line 21") && e.contains("has 8 columns"), "{e}");
}

/// `.vtu` files of other writers: a points-only file (empty cell arrays, on which vtkio 0.6
/// panicked: exit 101 with a backtrace) is refused with the file named and the fix; one with
/// vertex cells and a `diameter` array reads with half of it as the radius.
#[test]
fn foreign_vtu_files_are_read_or_refused_without_a_panic() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path();
    let vtu = |cells: &str, data: &str| {
        format!(
            "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" byte_order=\"LittleEndian\"><UnstructuredGrid><Piece NumberOfPoints=\"2\" NumberOfCells=\"{cells}\"><Points><DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">0.01 0.01 0.01 0.03 0.01 0.01</DataArray></Points>{data}</Piece></UnstructuredGrid></VTKFile>\n"
        )
    };
    let points_only = file(
        d,
        "points.vtu",
        &vtu(
            "0",
            "<Cells><DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\"></DataArray><DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\"></DataArray><DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\"></DataArray></Cells><PointData><DataArray type=\"Float64\" Name=\"radius\" format=\"ascii\">0.005 0.005</DataArray></PointData>",
        ),
    );
    let e = error(&points_only);
    assert!(
        e.contains("points.vtu") && e.contains("VTK reader failed") && e.contains("CSV"),
        "{e}"
    );
    let diameters = file(
        d,
        "diameters.vtu",
        &vtu(
            "2",
            "<Cells><DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">0 1</DataArray><DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">1 2</DataArray><DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">1 1</DataArray></Cells><PointData><DataArray type=\"Float64\" Name=\"diameter\" format=\"ascii\">0.01 0.008</DataArray></PointData>",
        ),
    );
    let p = read_packing(&diameters).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.spheres.len(), 2);
    assert_eq!(p.spheres[0].radius, 0.005);
    assert_eq!(p.spheres[1].radius, 0.004);
    assert_eq!(p.spheres[1].position, DVec3::new(0.03, 0.01, 0.01));
}

/// Damaged or contradictory files are refused with the line and the fix, where before they
/// read without a word: a dump whose last frame holds fewer atoms than it declares (cut while
/// being written), duplicated atom ids in a data file or a dump, and a column named twice in a
/// dump's `ITEM: ATOMS` or a CSV header (read as the second, then reported as overlaps).
#[test]
fn damaged_and_contradictory_files_are_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path();
    let frame = |declared: usize, rows: &str| {
        format!(
            "ITEM: TIMESTEP\n100\nITEM: NUMBER OF ATOMS\n{declared}\nITEM: BOX BOUNDS pp pp pp\n0 1\n0 1\n0 1\nITEM: ATOMS id type x y z radius\n{rows}"
        )
    };
    let rows = "1 1 0.1 0.5 0.5 0.01\n2 1 0.3 0.5 0.5 0.01\n3 1 0.5 0.5 0.5 0.01\n";
    let ok = read_packing(&file(d, "ok.dump", &frame(3, rows))).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ok.spheres.len(), 3);
    let e = error(&file(d, "cut.dump", &frame(8, rows)));
    assert!(
        e.contains("line 4") && e.contains("declares 8 atoms but holds 3"),
        "{e}"
    );
    let e = error(&file(
        d,
        "ids.dump",
        &frame(3, &rows.replace("3 1 0.5", "2 1 0.5")),
    ));
    assert!(e.contains("atom id 2 is listed twice"), "{e}");
    let e = error(&file(
        d,
        "cols.dump",
        &frame(3, rows).replace("id type x y z radius", "id type x y x radius"),
    ));
    assert!(e.contains("names column `x` twice"), "{e}");
    let data = "LAMMPS data file\n\n2 atoms\n1 atom types\n\nAtoms # sphere\n\n1 1 0.02 2500 0.1 0.5 0.5\n1 1 0.02 2500 0.3 0.5 0.5\n";
    let e = error(&file(d, "ids.data", data));
    assert!(e.contains("atom id 1 is listed twice"), "{e}");
    let e = error(&file(d, "x.csv", "x,y,x_m,radius\n0.1,0.2,0.3,0.01\n"));
    assert!(
        e.contains("line 1") && e.contains("names the column `x` twice"),
        "{e}"
    );
}

/// A specimen written as CSV and as `.vtu` reads back bit for bit.
#[test]
fn specimens_read_back_exactly() {
    use wgdem_core::snapshot::{Frame, ParticleField, VtkContent};
    let sim = wgdem_core::bench::specimen(64, "hertz").expect("specimen");
    let dir = tempfile::tempdir().expect("dir");
    let csv = dir.path().join("s.csv");
    write_packing_csv(&csv, &sim).expect("csv");
    let content = VtkContent {
        particle_fields: vec![
            ParticleField::Radius,
            ParticleField::Velocity,
            ParticleField::Material,
        ],
        contacts: false,
        walls: false,
    };
    let frame = Frame {
        sim: &sim,
        reference: (&sim.particles.position, &sim.particles.orientation),
        contacts: &[],
        material_names: &[],
        content: &content,
    };
    let vtu = dir.path().join("s.vtu");
    crate::vtk::write_particles(&vtu, &frame).expect("vtu");
    for path in [csv, vtu] {
        let p = read_packing(&path).expect("read");
        assert_eq!(p.spheres.len(), sim.particles.len());
        for (s, i) in p.spheres.iter().zip(0..) {
            assert_eq!(s.position, sim.particles.position[i], "{}", path.display());
            assert_eq!(s.radius, sim.particles.radius[i]);
            assert_eq!(s.velocity, sim.particles.velocity[i]);
            assert_eq!(
                s.material,
                MaterialRef::Index(sim.particles.material[i] as u64)
            );
        }
    }
}

/// A test's specimen files record their largest overlap (the bench lattice's 0.5 %: 0.01 of
/// the radius), the CSV in a comment line before its header and the `.vtu` as field data;
/// the packing's limit rises to it, so that the writing test reads its specimen back under a
/// stricter `max_overlap`; files without the record keep the configured limit.
#[test]
fn specimens_record_their_largest_overlap() {
    let sim = wgdem_core::bench::specimen(64, "hertz").expect("specimen");
    let largest =
        wgdem_core::packing::largest_overlap(&sim.particles.position, &sim.particles.radius);
    assert!((largest - 0.01).abs() < 1e-9, "{largest}");
    let dir = tempfile::tempdir().expect("dir");
    crate::write_specimen(dir.path(), "s", &sim).expect("specimen files");
    for ext in ["csv", "vtu"] {
        let p = read_packing(&dir.path().join(format!("s.{ext}"))).expect("read");
        assert_eq!(p.recorded_max_overlap, Some(largest), "{ext}");
        assert!(p.check(&[], 0.005, "max_overlap").is_err(), "{ext}");
        let limit = p.overlap_limit(0.005);
        assert_eq!(limit, largest, "{ext}");
        p.check(&[], limit, "max_overlap")
            .unwrap_or_else(|e| panic!("{ext}: {e}"));
        assert_eq!(p.overlap_limit(0.1), 0.1, "a record below the limit");
    }
    // Capped: a record of a whole radius does not lift the limit past half of one.
    let mut p = read_packing(&dir.path().join("s.csv")).expect("read");
    p.recorded_max_overlap = Some(1.0);
    assert_eq!(
        p.overlap_limit(0.1),
        wgdem_core::packing::MAX_RECORDED_OVERLAP
    );
    p.recorded_max_overlap = Some(f64::INFINITY);
    assert_eq!(p.overlap_limit(0.1), 0.1);
    let plain = dir.path().join("plain.csv");
    write_packing_csv(&plain, &sim).expect("csv");
    assert_eq!(
        read_packing(&plain).expect("read").recorded_max_overlap,
        None
    );
}

/// A scene's `kind = "file"` group: spheres behind a wall, or overlapping beyond the
/// limit, are refused with the count and the worst; LAMMPS types map to materials.
#[test]
fn scene_file_groups() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path();
    let scene = |packing: &str, extra: &str| {
        file(
            d,
            "scene.toml",
            &format!(
                r#"
                [simulation]
                duration = 0.001
                output_interval = 0.001
                [contact]
                law = "hertz"
                history = "true"
                [[materials]]
                name = "a"
                density = 2500.0
                friction = 0.5
                young_modulus = 1e8
                poisson_ratio = 0.25
                restitution = 0.5
                [[materials]]
                name = "b"
                density = 7800.0
                friction = 0.5
                young_modulus = 1e8
                poisson_ratio = 0.25
                restitution = 0.5
                [[particles]]
                kind = "file"
                material = "a"
                path = "{packing}"
                {extra}
                [[walls]]
                kind = "plane"
                name = "floor"
                material = "a"
                point = [0.0, 0.0, 0.0]
                normal = [0.0, 0.0, 1.0]
                "#
            ),
        )
    };
    file(
        d,
        "ok.dump",
        "ITEM: ATOMS id type x y z radius\n1 1 0 0 0.01 0.01\n2 2 0.03 0 0.01 0.01\n",
    );
    let s = load_scene(&scene("ok.dump", "types = [\"a\", \"b\"]")).expect("scene");
    assert_eq!(s.simulation.particles.material, vec![0, 1]);
    assert!(
        (s.simulation.particles.mass[1] / s.simulation.particles.mass[0] - 7800.0 / 2500.0).abs()
            < 1e-12
    );
    let e = load_scene(&scene("ok.dump", "types = [\"a\"]"))
        .expect_err("type 2 unnamed")
        .to_string();
    assert!(
        e.contains("particles[0].types") && e.contains("atom type 2"),
        "{e}"
    );
    // `types` without `material`, as docs/scene.md allows ("missing field material" before);
    // with neither, the sphere that needs the group's material names it.
    let without = |extra: &str| {
        let path = scene("ok.dump", extra);
        let text = std::fs::read_to_string(&path).expect("scene");
        let text = text.replacen("material = \"a\"\n", "", 1);
        assert!(
            !text.contains("kind = \"file\"\n                material"),
            "{text}"
        );
        std::fs::write(&path, text).expect("write");
        load_scene(&path)
    };
    let s = without("types = [\"a\", \"b\"]").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.simulation.particles.material, vec![0, 1]);
    let e = without("").expect_err("no material").to_string();
    assert!(
        e.contains("particles[0].material") && e.contains("no `types`"),
        "{e}"
    );
    file(
        d,
        "out.csv",
        "x,y,z,radius\n0,0,0.01,0.01\n0.1,0,-0.02,0.01\n0.2,0,-0.05,0.01\n",
    );
    let e = load_scene(&scene("out.csv", ""))
        .expect_err("outside")
        .to_string();
    assert!(
        e.contains("2 sphere(s) lie outside") && e.contains("sphere 3") && e.contains("5.000e-2"),
        "{e}"
    );
    file(
        d,
        "deep.csv",
        "x,y,z,radius\n0,0,0.01,0.01\n0.019,0,0.01,0.01\n0.5,0,0.01,0.01\n0.51,0,0.01,0.01\n",
    );
    let e = load_scene(&scene("deep.csv", ""))
        .expect_err("overlap")
        .to_string();
    assert!(
        e.contains("2 pair(s) overlap by more than 0.1") && e.contains("spheres 3 and 4"),
        "{e}"
    );
    assert!(load_scene(&scene("deep.csv", "max_overlap = 1.0")).is_ok());
    let e = wgdem_core::scene::load_scene(&scene("ok.dump", ""))
        .expect_err("no reader")
        .to_string();
    assert!(e.contains("wgdem_io::load_scene"), "{e}");
    // A LIGGGHTS data file (atom_style granular, named as LIGGGHTS names them): its
    // densities are the materials' (types 1 → a, 2 → b) or the file is refused, naming it.
    let data = |densities: [&str; 2]| {
        format!(
            "LIGGGHTS data file via write_data\n\n2 atoms\n2 atom types\n\nAtoms # granular\n\n1 1 0.02 {} 0 0 0.01\n2 2 0.02 {} 0.03 0 0.01\n",
            densities[0], densities[1]
        )
    };
    file(d, "data.granular", &data(["2500", "7800.0"]));
    let s = load_scene(&scene("data.granular", "types = [\"a\", \"b\"]"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.simulation.particles.material, vec![0, 1]);
    // Atoms 1 and 2 keep their LAMMPS ids as `source_id`; a dump's ids likewise, in its order.
    assert_eq!(s.simulation.source_id, vec![1, 2]);
    file(
        d,
        "ids.dump",
        "ITEM: ATOMS id type x y z radius\n40 1 0 0 0.01 0.01\n7 1 0.03 0 0.01 0.01\n",
    );
    let s = load_scene(&scene("ids.dump", "")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.simulation.source_id, vec![40, 7]);
    assert_eq!(s.simulation.source_id_of(1), 7);
    file(d, "data.granular", &data(["2500", "2650"]));
    let e = load_scene(&scene("data.granular", "types = [\"a\", \"b\"]"))
        .expect_err("density")
        .to_string();
    assert!(
        e.contains("particles[0].path")
            && e.contains("sphere 2 has density 2650 kg/m³ but its material \"b\" has 7800")
            && e.contains("density = 2650"),
        "{e}"
    );
}

/// Formats from the content where the extension says nothing (LIGGGHTS's `dump.particles`,
/// `data.granular`), or as `format` says; an unknown one is refused naming `format`.
#[test]
fn packing_formats_from_content_or_as_given() {
    use wgdem_core::packing::PackingFormat;
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path();
    let dump = file(
        d,
        "dump.particles",
        "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n1\nITEM: BOX BOUNDS ff ff ff\n0 1\n0 1\n0 1\nITEM: ATOMS id type x y z radius density\n1 1 0.5 0.5 0.5 0.01 2500\n",
    );
    let data = file(
        d,
        "data.granular",
        "LIGGGHTS data file\n\n1 atoms\n1 atom types\n\nAtoms # granular\n\n1 1 0.02 2500 0.1 0.5 0.5\n",
    );
    let csv = file(d, "spheres.txt", "x,y,z,radius\n0,0,0,0.5\n");
    for (path, format) in [
        (&dump, PackingFormat::LammpsDump),
        (&data, PackingFormat::LammpsData),
        (&csv, PackingFormat::Csv),
    ] {
        assert_eq!(
            detect_format(path).expect("read"),
            Some(format),
            "{}",
            path.display()
        );
        let p = read_packing(path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.spheres.len(), 1);
    }
    assert_eq!(
        read_packing(&dump).expect("dump").spheres[0].density,
        Some(2500.0)
    );
    assert_eq!(
        read_packing(&data).expect("data").spheres[0].density,
        Some(2500.0)
    );
    // A table named as a dump, read as what `format` says.
    let odd = file(d, "table.dump", "x,y,z,radius\n0,0,0,0.5\n");
    assert!(read_packing(&odd).is_err());
    let p = read_packing_as(&odd, Some(PackingFormat::Csv)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.spheres[0].radius, 0.5);
    let e = error(&file(d, "notes", "spheres somewhere\n"));
    assert!(
        e.contains("unknown packing format") && e.contains("format = \"csv\""),
        "{e}"
    );
}
