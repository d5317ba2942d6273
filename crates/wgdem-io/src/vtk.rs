//! ParaView files (VTK XML through `vtkio`): particles, force chains and the collection that
//! indexes them. Every file is written atomically.

use std::path::Path;

use glam::{DQuat, DVec3};
use vtkio::model::{
    Attribute, Attributes, ByteOrder, CellType, Cells, DataSet, PolyDataPiece,
    UnstructuredGridPiece, Version, VertexNumbers, Vtk,
};
use wgdem_core::analysis::touching;
use wgdem_core::contact::{RelativeMotion, contact_force};
use wgdem_core::cpu::Simulation;
use wgdem_core::error::{Error, Result};
use wgdem_core::material::effective;
use wgdem_core::output::atomic_write;
use wgdem_core::shear::Snapshot;

pub(crate) fn encode_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Encode {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

fn write_vtk(path: &Path, data: DataSet) -> Result<()> {
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
    atomic_write(path, &bytes)
}

fn flat(v: impl Iterator<Item = DVec3>) -> Vec<f64> {
    v.flat_map(|x| [x.x, x.y, x.z]).collect()
}

/// Particles as VTK vertices with `radius` (m), `velocity` (m/s), `displacement` (m) and
/// `rotation_angle` (rad) from `reference`, and `contact_count`.
pub fn write_particles(
    path: &Path,
    sim: &Simulation,
    reference: &(Vec<DVec3>, Vec<DQuat>),
) -> Result<()> {
    let p = &sim.particles;
    let n = p.len();
    let mut counts = vec![0u32; n];
    for c in touching(p) {
        counts[c.i as usize] += 1;
        counts[c.j as usize] += 1;
    }
    let angle: Vec<f64> = (0..n)
        .map(|i| {
            let q = p.orientation[i] * reference.1[i].inverse();
            2.0 * q.w.abs().min(1.0).acos()
        })
        .collect();
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
            point: vec![
                Attribute::scalars("radius", 1).with_data(p.radius.clone()),
                Attribute::vectors("velocity").with_data(flat(p.velocity.iter().copied())),
                Attribute::vectors("displacement")
                    .with_data(flat((0..n).map(|i| p.position[i] - reference.0[i]))),
                Attribute::scalars("rotation_angle", 1).with_data(angle),
                Attribute::scalars("contact_count", 1).with_data(counts),
                Attribute::scalars("id", 1).with_data((0..n as u32).collect::<Vec<u32>>()),
            ],
            cell: Vec::new(),
        },
    };
    write_vtk(path, DataSet::inline(piece))
}

/// Force chains: a line between the centres of every touching pair, carrying the elastic
/// normal force of the contact law at that overlap, `normal_force_N` (the dashpot and the
/// tangential force are not included).
pub fn write_force_chains(path: &Path, sim: &Simulation) -> Result<()> {
    let p = &sim.particles;
    let contacts = touching(p);
    let still = RelativeMotion {
        velocity: DVec3::ZERO,
        displacement: DVec3::ZERO,
    };
    let mut force = Vec::with_capacity(contacts.len());
    let mut connectivity = Vec::with_capacity(2 * contacts.len());
    for c in &contacts {
        let (a, b) = (c.i as usize, c.j as usize);
        let params = sim.pair(p.material[a], p.material[b]).contact_params(
            effective(p.mass[a], p.mass[b]),
            effective(p.radius[a], p.radius[b]),
        );
        let out = contact_force(sim.model, c.overlap, c.normal, still, DVec3::ZERO, &params);
        force.push(out.normal_force);
        connectivity.push(c.i as u64);
        connectivity.push(c.j as u64);
    }
    let piece = PolyDataPiece {
        points: flat(p.position.iter().copied()).into(),
        lines: Some(VertexNumbers::XML {
            connectivity,
            offsets: (1..=contacts.len() as u64).map(|k| 2 * k).collect(),
        }),
        data: Attributes {
            point: Vec::new(),
            cell: vec![Attribute::scalars("normal_force_N", 1).with_data(force)],
        },
        ..Default::default()
    };
    write_vtk(path, DataSet::inline(piece))
}

/// `vtk/shear.pvd`: the snapshots as a time series, particles as part 0 and force chains as
/// part 1.
pub fn write_pvd(out: &Path, snapshots: &[Snapshot]) -> Result<()> {
    let mut xml = String::from(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n",
    );
    for s in snapshots {
        for (part, file) in [(0, &s.particles), (1, &s.contacts)] {
            // Paths relative to the .pvd in vtk/.
            let name = file.strip_prefix("vtk/").unwrap_or(file);
            xml.push_str(&format!(
                "    <DataSet timestep=\"{:e}\" group=\"\" part=\"{part}\" file=\"{name}\"/>\n",
                s.time
            ));
        }
    }
    xml.push_str("  </Collection>\n</VTKFile>\n");
    atomic_write(&out.join("vtk").join("shear.pvd"), xml.as_bytes())
}
