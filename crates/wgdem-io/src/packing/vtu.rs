//! wgdem's own particle `.vtu` files as packings.

use vtkio::model::{Attribute, DataSet, Piece};

use super::*;

/// wgdem's own particle `.vtu` (a snapshot or a specimen): points, `radius_m` (or `radius`),
/// and where present `velocity_m_s`, `angular_velocity_rad_s` and `material`.
pub(super) fn read_vtu(path: &Path) -> Result<Packing> {
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
            if let Attribute::DataArray(d) = a
                && names.contains(&d.name.as_str())
            {
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
        recorded_max_overlap: recorded_overlap(path),
    })
}

/// The largest overlap the file records (wgdem's specimens put the field data right after the
/// `<UnstructuredGrid>` tag, ahead of the points: the first 64 KiB hold it).
fn recorded_overlap(path: &Path) -> Option<f64> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(1 << 16)
        .read_to_end(&mut head)
        .ok()?;
    recorded_in_vtu(&String::from_utf8_lossy(&head))
}
