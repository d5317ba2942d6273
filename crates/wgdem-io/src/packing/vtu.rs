//! wgdem's own particle `.vtu` files as packings.

use vtkio::model::{Attribute, DataSet, Piece};

use super::*;

/// A particle `.vtu` (wgdem's snapshots and specimens, or another writer's points): points,
/// `radius_m` (or `radius`, or a `diameter`), and where present `velocity_m_s`,
/// `angular_velocity_rad_s` and `material`.
pub(super) fn read_vtu(path: &Path) -> Result<Packing> {
    let file = path.display().to_string();
    let bad = |message: String| Error::Invalid {
        file: file.clone(),
        field: "path".to_owned(),
        message,
    };
    let vtk = import(path).map_err(bad)?;
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
    // Other writers' names too: a radius, or a diameter (LIGGGHTS' dumps converted to VTK).
    let radii = match array(&["radius_m", "radius", "Radius", "RADIUS"], 1)? {
        Some(r) => r,
        None => array(&["diameter_m", "diameter", "Diameter", "DIAMETER"], 1)?
            .map(|d| d.into_iter().map(|d| 0.5 * d).collect())
            .ok_or_else(|| {
                bad("has no radius point array (`radius_m`, `radius` or `diameter`)".to_owned())
            })?,
    };
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
            id: None,
            density: None,
        });
    }
    Ok(Packing {
        source: file,
        spheres,
        lammps_types: false,
        recorded_max_overlap: recorded_overlap(path),
        // Only the specimen CSV records a periodic cell.
        recorded_cell: None,
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

/// The file read by vtkio with its pieces loaded, or why not. vtkio 0.6 panics on some valid
/// files (an empty data array, as a points-only file's `<Cells>` has): the panic is caught and
/// reported as the file's error, without the panic message (this thread's panics are quiet
/// while it reads; other threads' are reported as before).
fn import(path: &Path) -> std::result::Result<vtkio::Vtk, String> {
    use std::cell::Cell;
    use std::sync::Once;
    thread_local!(static QUIET: Cell<bool> = const { Cell::new(false) });
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    let read = std::panic::catch_unwind(|| {
        let mut vtk =
            vtkio::Vtk::import(path).map_err(|e| format!("not a readable VTK file ({e})"))?;
        vtk.load_all_pieces()
            .map_err(|e| format!("its pieces cannot be read ({e})"))?;
        Ok(vtk)
    });
    QUIET.with(|q| q.set(false));
    read.unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(format!(
            "the VTK reader failed on it ({why}); wgdem reads unstructured grids whose data arrays are not empty (a points-only file: give it one vertex cell per point, or save the spheres as CSV: x,y,z,radius)"
        ))
    })
}
