//! LAMMPS/LIGGGHTS data (`atom_style sphere`) and dump files as packings.

use super::*;

fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::io(path, e))
}

/// A LAMMPS/LIGGGHTS data file of `atom_style sphere` (LIGGGHTS also calls it `granular`):
/// the `Atoms` section (`id type diameter density x y z [ix iy iz]`; the density is checked
/// against the material's, which wgdem uses) and, where present, `Velocities` (`id vx vy vz
/// wx wy wz`).
pub(super) fn read_lammps_data(path: &Path) -> Result<Packing> {
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
            if section == "Atoms"
                && let Some(style) = lines[k].split('#').nth(1).map(str::trim)
                && !style.is_empty()
                && style != "sphere"
                && style != "granular"
            {
                return Err(at(
                    &file,
                    k + 1,
                    1,
                    "Atoms",
                    format!(
                        "atom style {style:?}; wgdem reads atom_style sphere or granular (id type diameter density x y z)"
                    ),
                ));
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
                    let density = number(&file, n, 4, "density", w[3])?;
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
                            id: Some(id),
                            density: Some(density),
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
    if let Some(count) = declared
        && count != atoms.len()
    {
        return Err(Error::Invalid {
            file: file.clone(),
            field: "Atoms".to_owned(),
            message: format!(
                "the header declares {count} atoms but the Atoms section lists {}",
                atoms.len()
            ),
        });
    }
    atoms.sort_by_key(|(id, _)| *id);
    // Two atoms of one id: a file concatenated or edited by hand, whose spheres would sit on
    // each other (and whose velocities could not be told apart).
    if let Some(pair) = atoms.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(Error::Invalid {
            file: file.clone(),
            field: "Atoms".to_owned(),
            message: format!(
                "atom id {} is listed twice; give each atom its own id",
                pair[0].0
            ),
        });
    }
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
        recorded_max_overlap: None,
        recorded_cell: None,
    })
}

/// A LAMMPS/LIGGGHTS dump file (`dump custom`): its last frame, with columns named by the
/// `ITEM: ATOMS` line: `x y z` (unscaled) and `radius` or `diameter`; where present `type`,
/// `vx vy vz` and `omegax omegay omegaz`.
pub(super) fn read_lammps_dump(path: &Path) -> Result<Packing> {
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
    if let Some((k, c)) = columns
        .iter()
        .enumerate()
        .find(|(k, c)| columns[..*k].contains(c))
    {
        return Err(at(
            &file,
            last + 1,
            k + 1,
            "ITEM: ATOMS",
            format!("names column `{c}` twice; give each column once"),
        ));
    }
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
    let density = col(&["density"]);
    let id_col = col(&["id"]);
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
            id: id_col.map(|c| get(c).map(|x| x as u64)).transpose()?,
            density: density.map(get).transpose()?,
        });
    }
    // The frame's declared count (`ITEM: NUMBER OF ATOMS` before its `ITEM: ATOMS`): a dump
    // cut while being written holds fewer.
    let declared = lines[..last]
        .iter()
        .rposition(|l| l.starts_with("ITEM: NUMBER OF ATOMS"))
        .and_then(|k| Some((k + 2, lines.get(k + 1)?.trim())));
    if let Some((n, count)) = declared {
        let count = number(&file, n, 1, "NUMBER OF ATOMS", count)?;
        if count != spheres.len() as f64 {
            return Err(at(
                &file,
                n,
                1,
                "NUMBER OF ATOMS",
                format!(
                    "the last frame declares {count} atoms but holds {}: the dump was cut while being written; give a complete frame (delete the last one)",
                    spheres.len()
                ),
            ));
        }
    }
    if let Some(c) = col(&["id"]) {
        let mut ids: Vec<&str> = lines[last + 1..]
            .iter()
            .take_while(|l| !l.starts_with("ITEM:"))
            .filter_map(|l| l.split_whitespace().nth(c))
            .collect();
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(at(
                &file,
                last + 1,
                c + 1,
                "id",
                format!(
                    "atom id {} is listed twice in the last frame; give each atom its own id",
                    w[0]
                ),
            ));
        }
    }
    Ok(Packing {
        source: file,
        spheres,
        lammps_types: true,
        recorded_max_overlap: None,
        recorded_cell: None,
    })
}

/// Writes the particles of `sim` as one frame of a LAMMPS/LIGGGHTS dump (`dump custom` with
/// `id type x y z vx vy vz fx fy fz omegax omegay omegaz radius source_id`; ids 1…N in
/// stable-id order, types the material index plus one, as LAMMPS numbers them, `source_id` the
/// sphere's id in the packing file it was read from, −1 for none; box bounds the spheres' extent,
/// `ff` on each axis), atomically. [`read_lammps_dump`] reads it back (OVITO, LIGGGHTS's
/// `read_dump` and Pizza.py read the same columns). The forces and torques are those `sim`'s
/// particles hold (the last step's).
pub fn write_lammps_dump(path: &Path, sim: &Simulation) -> Result<()> {
    use std::fmt::Write as _;
    let p = &sim.particles;
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for i in 0..p.len() {
        lo = lo.min(p.position[i] - DVec3::splat(p.radius[i]));
        hi = hi.max(p.position[i] + DVec3::splat(p.radius[i]));
    }
    if p.is_empty() {
        (lo, hi) = (DVec3::ZERO, DVec3::ZERO);
    }
    let mut text = format!(
        "ITEM: TIMESTEP\n{}\nITEM: NUMBER OF ATOMS\n{}\nITEM: BOX BOUNDS ff ff ff\n",
        sim.steps,
        p.len()
    );
    for k in 0..3 {
        let _ = writeln!(text, "{} {}", fmt(lo[k]), fmt(hi[k]));
    }
    text.push_str(
        "ITEM: ATOMS id type x y z vx vy vz fx fy fz omegax omegay omegaz radius source_id\n",
    );
    for i in 0..p.len() {
        let (x, v, f, w) = (
            p.position[i],
            p.velocity[i],
            p.force[i],
            p.angular_velocity[i],
        );
        let cells = [
            x.x,
            x.y,
            x.z,
            v.x,
            v.y,
            v.z,
            f.x,
            f.y,
            f.z,
            w.x,
            w.y,
            w.z,
            p.radius[i],
        ]
        .map(fmt);
        let _ = writeln!(
            text,
            "{} {} {} {}",
            i + 1,
            p.material[i] + 1,
            cells.join(" "),
            sim.source_id_of(i)
        );
    }
    atomic_write(path, text.as_bytes())
}
