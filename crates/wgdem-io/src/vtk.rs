//! ParaView files (VTK XML through `vtkio`): per snapshot the particles (one vertex each), the
//! contact network (one line per contact) and the walls (one quadrilateral per wall), each an
//! unstructured grid (`.vtu`), and the collection (`.pvd`) that indexes them as a time series.
//! Every file is written atomically. Array names carry their SI unit as a suffix, as the CSV
//! columns do; the list is in `docs/outputs.md`.
//!
//! Only numeric arrays: VTK, ParaView, pyvista and meshio read every file (meshio reads no
//! `.vtp` and stops at a `String` array). Material and wall names are given in an XML comment
//! at the head of the file, the index of each name (they are `input.toml`'s order).

use std::path::Path;

use glam::{DMat3, DVec3};
use vtkio::model::{
    Attribute, Attributes, ByteOrder, CellType, Cells, DataSet, UnstructuredGridPiece, Version,
    VertexNumbers, Vtk,
};
use wgdem_core::error::{Error, Result};
use wgdem_core::output::atomic_write;
use wgdem_core::snapshot::{
    BodyA, Frame, ParticleField, Snapshot, contact_counts, particle_stress,
};
use wgdem_core::wall::WallShape;

pub(crate) fn encode_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Encode {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// The XML of `data`, headed by a comment naming the indices of `names` (what, names):
/// `<!-- material 0: "glass", 1: "steel" -->`.
fn xml(path: &Path, data: DataSet, kind: &str, names: (&str, &[String])) -> Result<Vec<u8>> {
    xml_with(path, data, kind, names, &[])
}

/// [`xml`] with one-value `Float64` field-data arrays `numbers` (`vtkio` writes no field data).
fn xml_with(
    path: &Path,
    data: DataSet,
    kind: &str,
    names: (&str, &[String]),
    numbers: &[(&str, f64)],
) -> Result<Vec<u8>> {
    let vtk = Vtk {
        version: Version::new((1, 0)),
        title: String::from("wgdem"),
        byte_order: ByteOrder::LittleEndian,
        data,
        file_path: None,
    };
    let mut bytes = Vec::new();
    vtk.write_xml(&mut bytes)
        .map_err(|e| encode_error(path, e))?;
    let mut text = String::from_utf8(bytes).map_err(|e| encode_error(path, e))?;
    let (what, names) = names;
    if !names.is_empty() {
        // A name is the user's text: `--` may not appear in an XML comment.
        let listed: Vec<String> = names
            .iter()
            .enumerate()
            .map(|(k, n)| format!("{k}: {:?}", n.replace("--", "- -")))
            .collect();
        let comment = format!("<!-- {what} {} -->\n", listed.join(", "));
        let at = text.find("<VTKFile").unwrap_or(0);
        text.insert_str(at, &comment);
    }
    if numbers.is_empty() {
        return Ok(text.into_bytes());
    }
    let mut field = String::from("<FieldData>");
    for (name, value) in numbers {
        // `{:e}` prints the shortest digits that read back to the same f64.
        field.push_str(&format!(
            "<Array type=\"Float64\" Name=\"{name}\" NumberOfTuples=\"1\" format=\"ascii\">{value:e}</Array>"
        ));
    }
    field.push_str("</FieldData>");
    let open = format!("<{kind}>");
    let at = text
        .find(&open)
        .ok_or_else(|| encode_error(path, format!("no <{kind}> element in vtkio's output")))?;
    text.insert_str(at + open.len(), &field);
    Ok(text.into_bytes())
}

fn flat(v: impl Iterator<Item = DVec3>) -> Vec<f64> {
    v.flat_map(|x| [x.x, x.y, x.z]).collect()
}

/// Row-major components of each tensor, as VTK reads a 9-component tensor.
fn tensors(m: &[DMat3]) -> Vec<f64> {
    m.iter()
        .flat_map(|t| {
            let r = t.transpose().to_cols_array();
            r.into_iter()
        })
        .collect()
}

/// `particles_NNNN.vtu`: the particles as vertices with the arrays of `frame.content`.
pub fn write_particles(path: &Path, frame: &Frame<'_>) -> Result<()> {
    write_particles_with(path, frame, &[])
}

/// [`write_particles`] with one-value field-data arrays `numbers` (a specimen's recorded
/// largest overlap, `wgdem_core::packing::RECORDED_OVERLAP_KEY`).
pub fn write_particles_with(path: &Path, frame: &Frame<'_>, numbers: &[(&str, f64)]) -> Result<()> {
    let sim = frame.sim;
    let p = &sim.particles;
    let n = p.len();
    let mut point = Vec::new();
    for field in &frame.content.particle_fields {
        point.push(match field {
            ParticleField::Id => {
                Attribute::scalars("id", 1).with_data((0..n as u32).collect::<Vec<u32>>())
            }
            ParticleField::Radius => Attribute::scalars("radius_m", 1).with_data(p.radius.clone()),
            ParticleField::Material => Attribute::scalars("material", 1)
                .with_data(p.material.iter().map(|&m| m as u32).collect::<Vec<u32>>()),
            ParticleField::Velocity => {
                Attribute::vectors("velocity_m_s").with_data(flat(p.velocity.iter().copied()))
            }
            ParticleField::AngularVelocity => Attribute::vectors("angular_velocity_rad_s")
                .with_data(flat(p.angular_velocity.iter().copied())),
            ParticleField::Force => {
                Attribute::vectors("force_N").with_data(flat(p.force.iter().copied()))
            }
            ParticleField::Torque => {
                Attribute::vectors("torque_N_m").with_data(flat(p.torque.iter().copied()))
            }
            ParticleField::Displacement => Attribute::vectors("displacement_m")
                // Unwrapped in a periodic cell: across the faces a sphere crossed.
                .with_data(flat(
                    (0..n).map(|i| frame.sim.unwrapped_position(i) - frame.reference.0[i]),
                )),
            ParticleField::Rotation => Attribute::scalars("rotation_angle_rad", 1).with_data(
                (0..n)
                    .map(|i| {
                        let q = p.orientation[i] * frame.reference.1[i].inverse();
                        2.0 * q.w.abs().min(1.0).acos()
                    })
                    .collect::<Vec<f64>>(),
            ),
            ParticleField::ContactCount => {
                Attribute::scalars("contact_count", 1).with_data(contact_counts(n, frame.contacts))
            }
            ParticleField::Stress => Attribute::tensors("stress_Pa")
                .with_data(tensors(&particle_stress(sim, frame.contacts))),
            ParticleField::SourceId => Attribute::scalars("source_id", 1)
                .with_data((0..n).map(|i| sim.source_id_of(i)).collect::<Vec<i64>>()),
        });
    }
    let piece = UnstructuredGridPiece {
        points: flat(p.position.iter().copied()).into(),
        cells: Cells {
            cell_verts: VertexNumbers::XML {
                connectivity: (0..n as u64).collect(),
                offsets: (1..=n as u64).collect(),
            },
            types: vec![CellType::Vertex; n],
        },
        data: Attributes {
            point,
            cell: Vec::new(),
        },
    };
    let bytes = xml_with(
        path,
        DataSet::inline(piece),
        "UnstructuredGrid",
        ("material", frame.material_names),
        numbers,
    )?;
    atomic_write(path, &bytes)
}

/// `contacts_NNNN.vtu`: one line per touching contact along its branch (centre to centre;
/// contact point to centre against a wall), with the forces on body B as cell data.
pub fn write_contacts(path: &Path, frame: &Frame<'_>) -> Result<()> {
    let contacts = frame.contacts;
    let m = contacts.len();
    let mut points = Vec::with_capacity(6 * m);
    for c in contacts {
        points.extend([c.branch.0.x, c.branch.0.y, c.branch.0.z]);
        points.extend([c.branch.1.x, c.branch.1.y, c.branch.1.z]);
    }
    let (particle_a, wall): (Vec<i64>, Vec<i64>) = contacts
        .iter()
        .map(|c| match c.a {
            BodyA::Particle(a) => (i64::from(a), -1),
            BodyA::Wall(w) => (-1, i64::from(w)),
        })
        .unzip();
    let cell = vec![
        Attribute::vectors("normal_force_N")
            .with_data(flat(contacts.iter().map(|c| c.normal_force))),
        Attribute::vectors("tangential_force_N")
            .with_data(flat(contacts.iter().map(|c| c.tangential_force))),
        Attribute::scalars("normal_force_magnitude_N", 1).with_data(
            contacts
                .iter()
                .map(|c| c.normal_force.length())
                .collect::<Vec<f64>>(),
        ),
        Attribute::vectors("normal").with_data(flat(contacts.iter().map(|c| c.normal))),
        Attribute::vectors("contact_point_m").with_data(flat(contacts.iter().map(|c| c.point))),
        Attribute::scalars("overlap_m", 1)
            .with_data(contacts.iter().map(|c| c.overlap).collect::<Vec<f64>>()),
        Attribute::scalars("sliding", 1).with_data(
            contacts
                .iter()
                .map(|c| u8::from(c.sliding))
                .collect::<Vec<u8>>(),
        ),
        Attribute::scalars("particle_a", 1).with_data(particle_a),
        Attribute::scalars("wall", 1).with_data(wall),
        Attribute::scalars("particle_b", 1).with_data(
            contacts
                .iter()
                .map(|c| i64::from(c.b))
                .collect::<Vec<i64>>(),
        ),
    ];
    let piece = UnstructuredGridPiece {
        points: points.into(),
        cells: Cells {
            cell_verts: VertexNumbers::XML {
                connectivity: (0..2 * m as u64).collect(),
                offsets: (1..=m as u64).map(|k| 2 * k).collect(),
            },
            types: vec![CellType::Line; m],
        },
        data: Attributes {
            point: Vec::new(),
            cell,
        },
    };
    let bytes = xml(path, DataSet::inline(piece), "UnstructuredGrid", ("", &[]))?;
    atomic_write(path, &bytes)
}

/// `walls_NNNN.vtu`: each wall as a quadrilateral at its current position. A plate is its
/// rectangle; an infinite plane is drawn as a square around the particles' projection on it,
/// as wide as their bounding box's diagonal (at least 1 mm).
pub fn write_walls(path: &Path, frame: &Frame<'_>) -> Result<()> {
    let sim = frame.sim;
    let p = &sim.particles;
    let (lo, hi) = p.position.iter().zip(&p.radius).fold(
        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
        |(lo, hi), (x, r)| (lo.min(*x - *r), hi.max(*x + *r)),
    );
    let (centre, span) = if p.is_empty() {
        (DVec3::ZERO, 1e-3)
    } else {
        (0.5 * (lo + hi), (hi - lo).length().max(1e-3))
    };
    let mut points = Vec::new();
    for wall in &sim.walls {
        let (c, n, u, half) = match wall.shape {
            WallShape::Plane { point, normal } => {
                let c = centre - normal * (centre - point).dot(normal);
                (c, normal, normal.any_orthonormal_vector(), [0.5 * span; 2])
            }
            WallShape::Plate {
                center,
                normal,
                u_axis,
                half_extents,
            } => (center, normal, u_axis, half_extents),
        };
        let v = n.cross(u);
        for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
            let x = c + u * (a * half[0]) + v * (b * half[1]);
            points.extend([x.x, x.y, x.z]);
        }
    }
    let k = sim.walls.len() as u64;
    let names: Vec<String> = sim.walls.iter().map(|w| w.name.clone()).collect();
    let piece = UnstructuredGridPiece {
        points: points.into(),
        cells: Cells {
            cell_verts: VertexNumbers::XML {
                connectivity: (0..4 * k).collect(),
                offsets: (1..=k).map(|w| 4 * w).collect(),
            },
            types: vec![CellType::Quad; k as usize],
        },
        data: Attributes {
            point: Vec::new(),
            cell: vec![
                Attribute::scalars("wall", 1).with_data((0..k as u32).collect::<Vec<u32>>()),
                Attribute::vectors("force_N").with_data(flat(sim.walls.iter().map(|w| w.force))),
                Attribute::vectors("velocity_m_s")
                    .with_data(flat(sim.walls.iter().map(|w| w.velocity))),
            ],
        },
    };
    let bytes = xml(
        path,
        DataSet::inline(piece),
        "UnstructuredGrid",
        ("wall", &names),
    )?;
    atomic_write(path, &bytes)
}

/// `cell_NNNN.vtu`: the periodic cell as one hexahedron (its origin and the ends of its
/// edges), with its volume, velocity gradient and Love–Weber stress as cell data; nothing if
/// the scene has no cell.
pub fn write_cell(path: &Path, frame: &Frame<'_>) -> Result<()> {
    let sim = frame.sim;
    let Some(cell) = sim.cell() else {
        return Ok(());
    };
    let o = cell.origin();
    let [a, b, c] = cell.edges();
    // VTK's hexahedron: the bottom face counter-clockwise, then the top face above it.
    let corners = [
        o,
        o + a,
        o + a + b,
        o + b,
        o + c,
        o + a + c,
        o + a + b + c,
        o + b + c,
    ];
    let tensor = |m: DMat3| tensors(&[m]);
    let piece = UnstructuredGridPiece {
        points: flat(corners.into_iter()).into(),
        cells: Cells {
            cell_verts: VertexNumbers::XML {
                connectivity: (0..8).collect(),
                offsets: vec![8],
            },
            types: vec![CellType::Hexahedron],
        },
        data: Attributes {
            point: Vec::new(),
            cell: vec![
                Attribute::scalars("volume_m3", 1).with_data(vec![cell.volume()]),
                Attribute::tensors("velocity_gradient_1_s")
                    .with_data(tensor(cell.velocity_gradient())),
                Attribute::tensors("stress_Pa")
                    .with_data(tensor(sim.stress().unwrap_or(DMat3::NAN))),
            ],
        },
    };
    let bytes = xml(path, DataSet::inline(piece), "UnstructuredGrid", ("", &[]))?;
    atomic_write(path, &bytes)
}

/// Writes the files `files` names under `out`.
pub fn write_snapshot(out: &Path, files: &Snapshot, frame: &Frame<'_>) -> Result<()> {
    write_particles(&out.join(&files.particles), frame)?;
    if let Some(contacts) = &files.contacts {
        write_contacts(&out.join(contacts), frame)?;
    }
    if let Some(walls) = &files.walls {
        write_walls(&out.join(walls), frame)?;
    }
    if let Some(cell) = &files.cell {
        write_cell(&out.join(cell), frame)?;
    }
    Ok(())
}

/// A `.pvd` collection at `path` (in `out/vtk/`): the snapshots as a time series, particles
/// as part 0, contacts as part 1, walls as part 2 and the periodic cell as part 3.
pub fn write_pvd(path: &Path, snapshots: &[Snapshot]) -> Result<()> {
    let mut xml = String::from(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n",
    );
    for s in snapshots {
        let parts = [
            Some(&s.particles),
            s.contacts.as_ref(),
            s.walls.as_ref(),
            s.cell.as_ref(),
        ];
        for (part, file) in parts.iter().enumerate() {
            let Some(file) = file else { continue };
            // Paths relative to the .pvd in vtk/.
            let name = file.strip_prefix("vtk/").unwrap_or(file);
            xml.push_str(&format!(
                "    <DataSet timestep=\"{}\" group=\"\" part=\"{part}\" file=\"{name}\"/>\n",
                wgdem_core::output::fmt(s.time)
            ));
        }
    }
    xml.push_str("  </Collection>\n</VTKFile>\n");
    atomic_write(path, xml.as_bytes())
}
