//! Packings in and out: spheres read from CSV, wgdem's own `.vtu`, and LAMMPS/LIGGGHTS data
//! (`atom_style sphere`) and dump files; the specimen of a shear test written as CSV and
//! `.vtu`. A bad file is refused in one line naming the file, the line and the column.

use std::path::Path;

use glam::DVec3;
use wgdem_core::cpu::Simulation;
use wgdem_core::error::{Error, Result};
use wgdem_core::output::{atomic_write, fmt};
use wgdem_core::packing::{MaterialRef, PackedSphere, Packing, PackingFormat, PackingReader};
use wgdem_core::scene::Scene;

mod lammps;
mod table;
mod vtu;

pub use lammps::write_lammps_dump;
use lammps::{read_lammps_data, read_lammps_dump};
use table::read_csv;
use vtu::read_vtu;

/// Reads packings in the format given, or else by their extension (`.csv`, `.vtu`, `.data` or
/// `.lmp`: LAMMPS data, `.dump`: LAMMPS dump), or else by their content.
#[derive(Debug, Clone, Copy, Default)]
pub struct PackingFiles;

impl PackingReader for PackingFiles {
    fn read(&self, path: &Path, format: Option<PackingFormat>) -> Result<Packing> {
        read_packing_as(path, format)
    }
}

/// Loads, validates and builds a scene file, reading the packing files of its `kind = "file"`
/// groups.
pub fn load_scene(path: &Path) -> Result<Scene> {
    wgdem_core::scene::load_scene_with(path, &PackingFiles)
}

/// The spheres of `path`, by its extension or else its content.
pub fn read_packing(path: &Path) -> Result<Packing> {
    read_packing_as(path, None)
}

/// The format of `path`: by its extension (`.csv`, `.vtu`, `.data` and `.lmp`, `.dump`), or
/// else by its first kilobytes (LIGGGHTS's `dump.particles`, `data.granular`): a dump opens
/// with `ITEM:`, a VTK file holds `<VTKFile`, a LAMMPS data file declares `N atoms` in its
/// header, a table has commas on its first line; `None` where none of these holds.
pub fn detect_format(path: &Path) -> Result<Option<PackingFormat>> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "csv" => return Ok(Some(PackingFormat::Csv)),
        "vtu" => return Ok(Some(PackingFormat::Vtu)),
        "data" | "lmp" => return Ok(Some(PackingFormat::LammpsData)),
        "dump" => return Ok(Some(PackingFormat::LammpsDump)),
        _ => {}
    }
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(4096).read_to_end(&mut head))
        .map_err(|e| Error::io(path, e))?;
    let head = String::from_utf8_lossy(&head);
    let lines: Vec<&str> = head.lines().collect();
    let first = lines.iter().map(|l| l.trim()).find(|l| !l.is_empty());
    Ok(if first.is_some_and(|l| l.starts_with("ITEM:")) {
        Some(PackingFormat::LammpsDump)
    } else if head.contains("<VTKFile") {
        Some(PackingFormat::Vtu)
    } else if lines.iter().skip(1).any(|l| {
        let w: Vec<&str> = l
            .split('#')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        w.len() == 2 && w[1] == "atoms" && w[0].parse::<u64>().is_ok()
    }) {
        Some(PackingFormat::LammpsData)
    } else if first.is_some_and(|l| l.contains(',')) {
        Some(PackingFormat::Csv)
    } else {
        None
    })
}

/// The spheres of `path` in `format`, or in the format [`detect_format`] finds.
pub fn read_packing_as(path: &Path, format: Option<PackingFormat>) -> Result<Packing> {
    let format = match format {
        Some(f) => f,
        None => detect_format(path)?.ok_or_else(|| Error::Invalid {
            file: path.display().to_string(),
            field: "path".to_owned(),
            message: "unknown packing format (by its extension and its content); give a .csv, .vtu, .data (or .lmp: LAMMPS data) or .dump (LAMMPS dump) file, or say which with format = \"csv\", \"vtu\", \"lammps-data\" or \"lammps-dump\"".to_owned(),
        })?,
    };
    let packing = match format {
        PackingFormat::Csv => read_csv(path)?,
        PackingFormat::Vtu => read_vtu(path)?,
        PackingFormat::LammpsData => read_lammps_data(path)?,
        PackingFormat::LammpsDump => read_lammps_dump(path)?,
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

/// The largest overlap a CSV records in its leading comment lines (`# max_overlap = X ...`,
/// as [`write_specimen_csv`] writes it); `None` where it records none or the file cannot be
/// read (the reader reports that).
fn recorded_in_csv(path: &Path) -> Option<f64> {
    recorded_values(path, wgdem_core::packing::RECORDED_OVERLAP_KEY, 1)?
        .first()
        .copied()
}

/// The periodic cell a CSV records in its leading comment lines (`# cell = ax … oz`, as
/// [`write_specimen_csv`] writes it for a periodic scene): edges, then origin.
fn recorded_cell_in_csv(path: &Path) -> Option<[DVec3; 4]> {
    let v = recorded_values(path, wgdem_core::packing::RECORDED_CELL_KEY, 12)?;
    let at = |k: usize| DVec3::new(v[3 * k], v[3 * k + 1], v[3 * k + 2]);
    Some([at(0), at(1), at(2), at(3)])
}

/// The first `count` numbers after `# KEY =` in a CSV's leading comment lines; `None` where
/// there is no such line or it holds fewer numbers.
fn recorded_values(path: &Path, key: &str, count: usize) -> Option<Vec<f64>> {
    use std::io::BufRead;
    let file = std::io::BufReader::new(std::fs::File::open(path).ok()?);
    for line in file.lines() {
        let line = line.ok()?;
        let Some(comment) = line.trim_start().strip_prefix('#') else {
            // The comments before the first row only.
            return None;
        };
        let Some(rest) = comment.trim_start().strip_prefix(key) else {
            continue;
        };
        let Some(values) = rest.trim_start().strip_prefix('=') else {
            continue;
        };
        let numbers: Vec<f64> = values
            .split_whitespace()
            .take(count)
            .map_while(|v| v.parse().ok())
            .collect();
        return (numbers.len() == count).then_some(numbers);
    }
    None
}

/// The largest overlap a `.vtu` records as the one-value field-data array
/// `Name="max_overlap"` ([`crate::vtk::write_particles_with`]); `None` where it has none.
fn recorded_in_vtu(text: &str) -> Option<f64> {
    let name = format!("Name=\"{}\"", wgdem_core::packing::RECORDED_OVERLAP_KEY);
    let field = &text[text.find("<FieldData>")?..];
    let field = &field[..field.find("</FieldData>")?];
    let array = &field[field.find(&name)?..];
    let value = &array[array.find('>')? + 1..];
    value[..value.find('<')?].trim().parse().ok()
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

/// Header of the specimen CSV (a packing file `kind = "file"` and `--specimen` read back).
const SPECIMEN_HEADER: &str =
    "x_m,y_m,z_m,radius_m,vx_m_s,vy_m_s,vz_m_s,wx_rad_s,wy_rad_s,wz_rad_s,material\n";

/// Writes the particles of `sim` as a packing CSV at `path` (every float printed to read back
/// exactly), atomically.
pub fn write_packing_csv(path: &Path, sim: &Simulation) -> Result<()> {
    write_csv(path, sim, String::new())
}

/// [`write_packing_csv`] headed by a comment line recording the packing's largest overlap
/// `overlap` (a fraction of the smaller radius; `# max_overlap = X`), which the reader gives as
/// `Packing::recorded_max_overlap`.
///
/// A periodic scene's specimen also records its cell (`# cell = ax ay az bx by bz cx cy cz ox oy
/// oz`, `Packing::recorded_cell`), which `wgdem cell --specimen` takes back.
pub fn write_specimen_csv(path: &Path, sim: &Simulation, overlap: f64) -> Result<()> {
    let mut comment = format!(
        "# {} = {overlap:e} (the largest overlap of two spheres here, as a fraction of the smaller radius)\n",
        wgdem_core::packing::RECORDED_OVERLAP_KEY
    );
    if let Some(cell) = sim.cell() {
        let [a, b, c] = cell.edges();
        let numbers: Vec<String> = [a, b, c, cell.origin()]
            .iter()
            .flat_map(|v| [v.x, v.y, v.z])
            .map(fmt)
            .collect();
        comment.push_str(&format!(
            "# {} = {} (the periodic cell: edges a, b, c, then origin; m)\n",
            wgdem_core::packing::RECORDED_CELL_KEY,
            numbers.join(" ")
        ));
    }
    write_csv(path, sim, comment)
}

fn write_csv(path: &Path, sim: &Simulation, comment: String) -> Result<()> {
    let p = &sim.particles;
    let mut text = comment;
    text.push_str(SPECIMEN_HEADER);
    for i in 0..p.len() {
        let (x, v, w) = (p.position[i], p.velocity[i], p.angular_velocity[i]);
        let cells = [x.x, x.y, x.z, p.radius[i], v.x, v.y, v.z, w.x, w.y, w.z].map(fmt);
        text.push_str(&cells.join(","));
        text.push_str(&format!(",{}\n", p.material[i]));
    }
    atomic_write(path, text.as_bytes())
}

#[cfg(test)]
mod tests;
