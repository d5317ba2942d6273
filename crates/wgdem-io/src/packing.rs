//! Packings in and out: spheres read from CSV, wgdem's own `.vtu`, and LAMMPS/LIGGGHTS data
//! (`atom_style sphere`) and dump files; the specimen of a shear test written as CSV and
//! `.vtu`. A bad file is refused in one line naming the file, the line and the column.

use std::path::Path;

use glam::DVec3;
use vtkio::model::{Attribute, DataSet, Piece};
use wgdem_core::cpu::Simulation;
use wgdem_core::error::{Error, Result};
use wgdem_core::output::{atomic_write, fmt};
use wgdem_core::packing::{MaterialRef, PackedSphere, Packing, PackingReader};
use wgdem_core::scene::{Scene, SceneConfig, build_scene_with};

/// Reads packings by their extension: `.csv`, `.vtu`, `.data` or `.lmp` (LAMMPS data),
/// `.dump` (LAMMPS dump).
#[derive(Debug, Clone, Copy, Default)]
pub struct PackingFiles;

impl PackingReader for PackingFiles {
    fn read(&self, path: &Path) -> Result<Packing> {
        read_packing(path)
    }
}

/// Loads, validates and builds a scene file, reading the packing files of its `kind = "file"`
/// groups.
pub fn load_scene(path: &Path) -> Result<Scene> {
    let config = SceneConfig::load(path)?;
    build_scene_with(config, &path.display().to_string(), &PackingFiles)
}

/// The spheres of `path`, by its extension.
pub fn read_packing(path: &Path) -> Result<Packing> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let packing = match ext.as_str() {
        "csv" => read_csv(path)?,
        "vtu" => read_vtu(path)?,
        "data" | "lmp" => read_lammps_data(path)?,
        "dump" => read_lammps_dump(path)?,
        _ => {
            return Err(Error::Invalid {
                file: path.display().to_string(),
                field: "path".to_owned(),
                message: "unknown packing format; give a .csv, .vtu, .data (or .lmp: LAMMPS data) or .dump (LAMMPS dump) file".to_owned(),
            });
        }
    };
    if packing.spheres.is_empty() {
        return Err(Error::Invalid {
            file: packing.source,
            field: "path".to_owned(),
            message: "holds no spheres".to_owned(),
        });
    }
    Ok(packing)
}

/// An error at `line` (1-based) and `column` (1-based, with its name) of `file`.
fn at(file: &str, line: usize, column: usize, name: &str, message: impl Into<String>) -> Error {
    Error::Parse {
        file: file.to_owned(),
        line,
        field: format!("column {column} ({name})"),
        message: message.into(),
    }
}

/// A finite number from `text`, or the error naming where it is.
fn number(file: &str, line: usize, column: usize, name: &str, text: &str) -> Result<f64> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(x) => Err(at(
            file,
            line,
            column,
            name,
            format!("{x} is not a finite number"),
        )),
        Err(_) => Err(at(
            file,
            line,
            column,
            name,
            format!("{:?} is not a number", text.trim()),
        )),
    }
}

/// A positive radius, or the error naming where it is.
fn radius(file: &str, line: usize, column: usize, name: &str, r: f64) -> Result<f64> {
    if r > 0.0 {
        Ok(r)
    } else {
        Err(at(
            file,
            line,
            column,
            name,
            format!("radius {r} must be positive (in m)"),
        ))
    }
}

/// The quantities a CSV column can hold, with the names it may carry.
const CSV_COLUMNS: [(&str, &[&str]); 11] = [
    ("x", &["x", "x_m"]),
    ("y", &["y", "y_m"]),
    ("z", &["z", "z_m"]),
    ("radius", &["radius", "radius_m"]),
    ("vx", &["vx", "vx_m_s"]),
    ("vy", &["vy", "vy_m_s"]),
    ("vz", &["vz", "vz_m_s"]),
    ("wx", &["wx", "wx_rad_s"]),
    ("wy", &["wy", "wy_rad_s"]),
    ("wz", &["wz", "wz_rad_s"]),
    ("material", &["material"]),
];

/// CSV: with a header naming the columns (`x,y,z,radius`, optionally `vx,vy,vz,wx,wy,wz`
/// and `material`, with or without unit suffixes; an `id` column is skipped), or without one
/// in the order `x,y,z,radius[,vx,vy,vz,wx,wy,wz,material]`.
fn read_csv(path: &Path) -> Result<Packing> {
    let file = path.display().to_string();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_path(path)
        .map_err(|e| Error::io(path, std::io::Error::other(e.to_string())))?;
    let mut records = reader.records();
    let mut spheres = Vec::new();
    // Column k holds quantity `slots[k]` (an index into CSV_COLUMNS; None: skipped).
    let mut slots: Option<Vec<Option<usize>>> = None;
    let mut first_line = true;
    for record in records.by_ref() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            at(&file, line, 0, "row", e.to_string())
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        if first_line {
            first_line = false;
            let numeric = record.iter().all(|c| c.parse::<f64>().is_ok());
            if !numeric {
                let mut s = Vec::new();
                for (k, name) in record.iter().enumerate() {
                    let key = name.to_ascii_lowercase();
                    if key == "id" {
                        s.push(None);
                        continue;
                    }
                    let slot = CSV_COLUMNS
                        .iter()
                        .position(|(_, names)| names.contains(&key.as_str()))
                        .ok_or_else(|| {
                            at(
                                &file,
                                line,
                                k + 1,
                                name,
                                "unknown column; known: x, y, z, radius, vx, vy, vz, wx, wy, wz, material (with or without unit suffixes such as x_m), id",
                            )
                        })?;
                    s.push(Some(slot));
                }
                for (required, (name, _)) in CSV_COLUMNS.iter().enumerate().take(4) {
                    if !s.contains(&Some(required)) {
                        return Err(at(
                            &file,
                            line,
                            0,
                            "header",
                            format!("has no `{name}` column"),
                        ));
                    }
                }
                slots = Some(s);
                continue;
            }
        }
        let slots = slots.get_or_insert_with(|| {
            // No header: the documented order, as many columns as the first row has.
            (0..record.len().min(CSV_COLUMNS.len())).map(Some).collect()
        });
        if record.len() != slots.len() || slots.len() < 4 {
            return Err(at(
                &file,
                line,
                record.len(),
                "row",
                format!(
                    "has {} columns, not {} (x,y,z,radius[,vx,vy,vz,wx,wy,wz,material])",
                    record.len(),
                    slots.len().max(4)
                ),
            ));
        }
        let mut v = [0.0f64; 10];
        let mut material = MaterialRef::Default;
        for (k, (cell, slot)) in record.iter().zip(slots.iter()).enumerate() {
            let Some(slot) = *slot else { continue };
            let name = CSV_COLUMNS[slot].0;
            if slot == 10 {
                material = match cell.parse::<u64>() {
                    Ok(i) => MaterialRef::Index(i),
                    Err(_) if !cell.is_empty() => MaterialRef::Name(cell.to_owned()),
                    Err(_) => MaterialRef::Default,
                };
            } else {
                v[slot] = number(&file, line, k + 1, name, cell)?;
                if slot == 3 {
                    radius(&file, line, k + 1, name, v[3])?;
                }
            }
        }
        spheres.push(PackedSphere {
            position: DVec3::new(v[0], v[1], v[2]),
            radius: v[3],
            velocity: DVec3::new(v[4], v[5], v[6]),
            angular_velocity: DVec3::new(v[7], v[8], v[9]),
            material,
        });
    }
    Ok(Packing {
        source: file,
        spheres,
        lammps_types: false,
    })
}

/// wgdem's own particle `.vtu` (a snapshot or a specimen): points, `radius_m` (or `radius`),
/// and where present `velocity_m_s`, `angular_velocity_rad_s` and `material`.
fn read_vtu(path: &Path) -> Result<Packing> {
    let file = path.display().to_string();
    let bad = |message: String| Error::Invalid {
        file: file.clone(),
        field: "path".to_owned(),
        message,
    };
    let mut vtk =
        vtkio::Vtk::import(path).map_err(|e| bad(format!("not a readable VTK file ({e})")))?;
    vtk.load_all_pieces()
        .map_err(|e| bad(format!("its pieces cannot be read ({e})")))?;
    let piece = match vtk.data {
        DataSet::UnstructuredGrid { pieces, .. } => match pieces.into_iter().next() {
            Some(Piece::Inline(p)) => *p,
            _ => return Err(bad("holds no inline piece".to_owned())),
        },
        _ => {
            return Err(bad(
                "is not an unstructured grid (wgdem's particles_NNNN.vtu or specimen .vtu)"
                    .to_owned(),
            ));
        }
    };
    let points: Vec<f64> = piece
        .points
        .cast_into()
        .ok_or_else(|| bad("its points are not numbers".to_owned()))?;
    let n = points.len() / 3;
    let array = |names: &[&str], components: usize| -> Result<Option<Vec<f64>>> {
        for a in &piece.data.point {
            if let Attribute::DataArray(d) = a {
                if names.contains(&d.name.as_str()) {
                    let values: Vec<f64> = d
                        .data
                        .clone()
                        .cast_into()
                        .ok_or_else(|| bad(format!("array `{}` is not numeric", d.name)))?;
                    if values.len() != n * components {
                        return Err(bad(format!(
                            "array `{}` has {} values for {n} points; expected {}",
                            d.name,
                            values.len(),
                            n * components
                        )));
                    }
                    return Ok(Some(values));
                }
            }
        }
        Ok(None)
    };
    let radii = array(&["radius_m", "radius"], 1)?
        .ok_or_else(|| bad("has no `radius_m` point array".to_owned()))?;
    let velocity = array(&["velocity_m_s", "velocity"], 3)?;
    let spin = array(&["angular_velocity_rad_s"], 3)?;
    let material = array(&["material"], 1)?;
    let v3 = |a: &[f64], i: usize| DVec3::new(a[3 * i], a[3 * i + 1], a[3 * i + 2]);
    let mut spheres = Vec::with_capacity(n);
    for i in 0..n {
        let position = v3(&points, i);
        if !position.is_finite() || !radii[i].is_finite() {
            return Err(bad(format!(
                "point {i} has a non-finite position or radius"
            )));
        }
        if radii[i] <= 0.0 {
            return Err(bad(format!(
                "point {i} has radius {} (it must be positive, in m)",
                radii[i]
            )));
        }
        spheres.push(PackedSphere {
            position,
            radius: radii[i],
            velocity: velocity.as_deref().map_or(DVec3::ZERO, |v| v3(v, i)),
            angular_velocity: spin.as_deref().map_or(DVec3::ZERO, |v| v3(v, i)),
            material: material
                .as_deref()
                .map_or(MaterialRef::Default, |m| MaterialRef::Index(m[i] as u64)),
        });
    }
    Ok(Packing {
        source: file,
        spheres,
        lammps_types: false,
    })
}

fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::io(path, e))
}

/// A LAMMPS/LIGGGHTS data file of `atom_style sphere`: the `Atoms` section
/// (`id type diameter density x y z [ix iy iz]`; the density is the material's in wgdem) and,
/// where present, `Velocities` (`id vx vy vz wx wy wz`).
fn read_lammps_data(path: &Path) -> Result<Packing> {
    let file = path.display().to_string();
    let text = read_text(path)?;
    let lines: Vec<&str> = text.lines().collect();
    let mut declared = None;
    let mut atoms: Vec<(u64, PackedSphere)> = Vec::new();
    let mut velocities: Vec<(usize, u64, [f64; 6])> = Vec::new();
    let mut k = 1; // the first line is a title
    let body = |l: &str| l.split('#').next().unwrap_or("").trim().to_owned();
    while k < lines.len() {
        let line = body(lines[k]);
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() == 2 && words[1] == "atoms" {
            declared = Some(number(&file, k + 1, 1, "atoms", words[0])? as usize);
        }
        let section = words.first().copied().unwrap_or("");
        if section == "Atoms" || section == "Velocities" {
            if section == "Atoms" {
                if let Some(style) = lines[k].split('#').nth(1).map(str::trim) {
                    if !style.is_empty() && style != "sphere" {
                        return Err(at(
                            &file,
                            k + 1,
                            1,
                            "Atoms",
                            format!(
                                "atom style {style:?}; wgdem reads atom_style sphere (id type diameter density x y z)"
                            ),
                        ));
                    }
                }
            }
            // A blank line, then one line per atom until a blank line or the next section.
            k += 2;
            while k < lines.len() {
                let line = body(lines[k]);
                if line.is_empty() {
                    break;
                }
                let w: Vec<&str> = line.split_whitespace().collect();
                let n = k + 1;
                if section == "Atoms" {
                    if w.len() != 7 && w.len() != 10 {
                        return Err(at(
                            &file,
                            n,
                            w.len(),
                            "Atoms",
                            format!(
                                "has {} columns; atom_style sphere has 7 (id type diameter density x y z) or 10 (with image flags)",
                                w.len()
                            ),
                        ));
                    }
                    let id = number(&file, n, 1, "id", w[0])? as u64;
                    let t = number(&file, n, 2, "type", w[1])? as u64;
                    let d = number(&file, n, 3, "diameter", w[2])?;
                    radius(&file, n, 3, "diameter", d)?;
                    let x = [
                        number(&file, n, 5, "x", w[4])?,
                        number(&file, n, 6, "y", w[5])?,
                        number(&file, n, 7, "z", w[6])?,
                    ];
                    atoms.push((
                        id,
                        PackedSphere {
                            position: DVec3::from_array(x),
                            radius: 0.5 * d,
                            velocity: DVec3::ZERO,
                            angular_velocity: DVec3::ZERO,
                            material: MaterialRef::Index(t),
                        },
                    ));
                } else {
                    if w.len() != 7 {
                        return Err(at(
                            &file,
                            n,
                            w.len(),
                            "Velocities",
                            format!(
                                "has {} columns; atom_style sphere has 7 (id vx vy vz wx wy wz)",
                                w.len()
                            ),
                        ));
                    }
                    let id = number(&file, n, 1, "id", w[0])? as u64;
                    let mut v = [0.0; 6];
                    for (c, x) in v.iter_mut().enumerate() {
                        *x = number(
                            &file,
                            n,
                            c + 2,
                            ["vx", "vy", "vz", "wx", "wy", "wz"][c],
                            w[c + 1],
                        )?;
                    }
                    velocities.push((n, id, v));
                }
                k += 1;
            }
            continue;
        }
        k += 1;
    }
    if let Some(count) = declared {
        if count != atoms.len() {
            return Err(Error::Invalid {
                file: file.clone(),
                field: "Atoms".to_owned(),
                message: format!(
                    "the header declares {count} atoms but the Atoms section lists {}",
                    atoms.len()
                ),
            });
        }
    }
    atoms.sort_by_key(|(id, _)| *id);
    for (line, id, v) in velocities {
        let i = atoms.binary_search_by_key(&id, |(a, _)| *a).map_err(|_| {
            at(
                &file,
                line,
                1,
                "id",
                format!("atom {id} is not in the Atoms section"),
            )
        })?;
        atoms[i].1.velocity = DVec3::new(v[0], v[1], v[2]);
        atoms[i].1.angular_velocity = DVec3::new(v[3], v[4], v[5]);
    }
    Ok(Packing {
        source: file,
        spheres: atoms.into_iter().map(|(_, s)| s).collect(),
        lammps_types: true,
    })
}

/// A LAMMPS/LIGGGHTS dump file (`dump custom`): its last frame, with columns named by the
/// `ITEM: ATOMS` line: `x y z` (unscaled) and `radius` or `diameter`; where present `type`,
/// `vx vy vz` and `omegax omegay omegaz`.
fn read_lammps_dump(path: &Path) -> Result<Packing> {
    let file = path.display().to_string();
    let text = read_text(path)?;
    let lines: Vec<&str> = text.lines().collect();
    let last = lines
        .iter()
        .rposition(|l| l.starts_with("ITEM: ATOMS"))
        .ok_or_else(|| Error::Invalid {
            file: file.clone(),
            field: "ITEM: ATOMS".to_owned(),
            message: "no ITEM: ATOMS section; give a LAMMPS dump custom file".to_owned(),
        })?;
    let columns: Vec<&str> = lines[last]["ITEM: ATOMS".len()..]
        .split_whitespace()
        .collect();
    let col = |names: &[&str]| columns.iter().position(|c| names.contains(c));
    let need = |names: &[&str]| {
        col(names).ok_or_else(|| {
            at(
                &file,
                last + 1,
                0,
                "ITEM: ATOMS",
                format!(
                    "has no `{}` column (columns: {})",
                    names[0],
                    columns.join(" ")
                ),
            )
        })
    };
    if col(&["xs", "xu", "xsu"]).is_some() && col(&["x"]).is_none() {
        return Err(at(
            &file,
            last + 1,
            0,
            "ITEM: ATOMS",
            "holds scaled or unwrapped coordinates only; dump x y z",
        ));
    }
    let (x, y, z) = (need(&["x"])?, need(&["y"])?, need(&["z"])?);
    let (size, diameter) = match (col(&["radius"]), col(&["diameter"])) {
        (Some(c), _) => (c, false),
        (None, Some(c)) => (c, true),
        _ => {
            return Err(at(
                &file,
                last + 1,
                0,
                "ITEM: ATOMS",
                "has neither a `radius` nor a `diameter` column",
            ));
        }
    };
    let ty = col(&["type"]);
    let vel = [col(&["vx"]), col(&["vy"]), col(&["vz"])];
    let spin = [col(&["omegax"]), col(&["omegay"]), col(&["omegaz"])];
    let mut spheres = Vec::new();
    for (k, line) in lines.iter().enumerate().skip(last + 1) {
        if line.starts_with("ITEM:") {
            break;
        }
        if line.trim().is_empty() {
            continue;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        let n = k + 1;
        if w.len() != columns.len() {
            return Err(at(
                &file,
                n,
                w.len(),
                "row",
                format!(
                    "has {} columns; ITEM: ATOMS names {}",
                    w.len(),
                    columns.len()
                ),
            ));
        }
        let get = |c: usize| number(&file, n, c + 1, columns[c], w[c]);
        let opt = |c: [Option<usize>; 3]| -> Result<DVec3> {
            let mut v = [0.0; 3];
            for (x, c) in v.iter_mut().zip(c) {
                if let Some(c) = c {
                    *x = get(c)?;
                }
            }
            Ok(DVec3::from_array(v))
        };
        let s = get(size)?;
        radius(&file, n, size + 1, columns[size], s)?;
        spheres.push(PackedSphere {
            position: DVec3::new(get(x)?, get(y)?, get(z)?),
            radius: if diameter { 0.5 * s } else { s },
            velocity: opt(vel)?,
            angular_velocity: opt(spin)?,
            material: match ty {
                Some(c) => MaterialRef::Index(get(c)? as u64),
                None => MaterialRef::Default,
            },
        });
    }
    Ok(Packing {
        source: file,
        spheres,
        lammps_types: true,
    })
}

/// Header of the specimen CSV (a packing file `kind = "file"` and `--specimen` read back).
const SPECIMEN_HEADER: &str =
    "x_m,y_m,z_m,radius_m,vx_m_s,vy_m_s,vz_m_s,wx_rad_s,wy_rad_s,wz_rad_s,material\n";

/// Writes the particles of `sim` as a packing CSV at `path` (every float printed to read back
/// exactly), atomically.
pub fn write_packing_csv(path: &Path, sim: &Simulation) -> Result<()> {
    let p = &sim.particles;
    let mut text = String::from(SPECIMEN_HEADER);
    for i in 0..p.len() {
        let (x, v, w) = (p.position[i], p.velocity[i], p.angular_velocity[i]);
        let cells = [x.x, x.y, x.z, p.radius[i], v.x, v.y, v.z, w.x, w.y, w.z].map(fmt);
        text.push_str(&cells.join(","));
        text.push_str(&format!(",{}\n", p.material[i]));
    }
    atomic_write(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
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
            (s.simulation.particles.mass[1] / s.simulation.particles.mass[0] - 7800.0 / 2500.0)
                .abs()
                < 1e-12
        );
        let e = load_scene(&scene("ok.dump", "types = [\"a\"]"))
            .expect_err("type 2 unnamed")
            .to_string();
        assert!(
            e.contains("particles[0].types") && e.contains("atom type 2"),
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
            e.contains("2 sphere(s) lie outside")
                && e.contains("sphere 3")
                && e.contains("5.000e-2"),
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
    }
}
