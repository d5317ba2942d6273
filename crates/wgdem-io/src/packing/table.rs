//! Packing CSV files (tables of spheres), with or without a header.

use super::*;

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

/// Columns a CSV may carry that a packing does not use: skipped (the id, and the force and
/// torque columns of wgdem's own particle CSVs).
const SKIPPED_COLUMNS: [&str; 14] = [
    "id",
    "fx",
    "fy",
    "fz",
    "tx",
    "ty",
    "tz",
    "fx_n",
    "fy_n",
    "fz_n",
    "tx_n_m",
    "ty_n_m",
    "tz_n_m",
    "source_id",
];

/// CSV: with a header naming the columns (`x,y,z,radius`, optionally `vx,vy,vz,wx,wy,wz`
/// and `material`, with or without unit suffixes; `id`, force and torque columns are
/// skipped), or without one
/// in the order `x,y,z,radius[,vx,vy,vz,wx,wy,wz,material]`.
pub(super) fn read_csv(path: &Path) -> Result<Packing> {
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
                    if SKIPPED_COLUMNS.contains(&key.as_str()) {
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
                                "unknown column; known: x, y, z, radius, vx, vy, vz, wx, wy, wz, material (with or without unit suffixes such as x_m); skipped: id, fx, fy, fz, tx, ty, tz (and fx_N … tz_N_m), source_id",
                            )
                        })?;
                    if s.contains(&Some(slot)) {
                        return Err(at(
                            &file,
                            line,
                            k + 1,
                            name,
                            format!(
                                "names the column `{}` twice; give each column once",
                                CSV_COLUMNS[slot].0
                            ),
                        ));
                    }
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
            id: None,
            density: None,
        });
    }
    Ok(Packing {
        source: file,
        spheres,
        lammps_types: false,
        recorded_max_overlap: recorded_in_csv(path),
        recorded_cell: recorded_cell_in_csv(path),
    })
}
