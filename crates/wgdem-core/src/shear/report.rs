//! Files for ParaView (VTK XML through `vtkio`) and the plots of a direct shear test (through
//! `plotters`). Every file is written atomically.

use std::path::Path;

use glam::{DQuat, DVec3};
use plotters::prelude::*;
use vtkio::model::{
    Attribute, Attributes, ByteOrder, CellType, Cells, DataSet, PolyDataPiece,
    UnstructuredGridPiece, Version, VertexNumbers, Vtk,
};

use super::{Row, Snapshot};
use crate::analysis::touching;
use crate::contact::{RelativeMotion, contact_force};
use crate::cpu::Simulation;
use crate::error::{Error, Result};
use crate::material::effective;
use crate::output::atomic_write;

fn vtk_error(path: &Path, e: impl std::fmt::Display) -> Error {
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
    vtk.write_xml(&mut bytes).map_err(|e| vtk_error(path, e))?;
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

const FONT: &[u8] = include_bytes!("../../../../assets/fonts/DejaVuSans.ttf");

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The bundled DejaVu Sans: plots need no system fonts.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Stress ratio and vertical displacement against shear strain, as PNG and SVG.
pub fn write_plots(dir: &Path, rows: &[Row]) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    register_font();
    let shear: Vec<&Row> = rows.iter().filter(|r| r.stage == "shear").collect();
    let strain: Vec<f64> = shear.iter().map(|r| 100.0 * r.shear_strain).collect();
    let ratio: Vec<f64> = shear.iter().map(|r| r.stress_ratio).collect();
    let rise: Vec<f64> = shear
        .iter()
        .map(|r| 1000.0 * r.vertical_displacement_m)
        .collect();
    let plots = [
        (
            "stress_ratio",
            "Stress ratio τ/σ against shear strain",
            "stress ratio τ/σ (–)",
            &ratio,
        ),
        (
            "vertical_displacement",
            "Vertical displacement of the top plate (+ dilation)",
            "vertical displacement (mm)",
            &rise,
        ),
    ];
    for (name, title, y_label, y) in plots {
        let png = dir.join(format!("{name}.png"));
        let mut buf = vec![0u8; 900 * 600 * 3];
        {
            let root = BitMapBackend::with_buffer(&mut buf, (900, 600)).into_drawing_area();
            draw(root, title, y_label, &strain, y).map_err(|e| vtk_error(&png, e))?;
        }
        let mut encoded = Vec::new();
        {
            let encoder = image_png(&mut encoded, &buf, 900, 600);
            encoder.map_err(|e| vtk_error(&png, e))?;
        }
        atomic_write(&png, &encoded)?;
        let svg_path = dir.join(format!("{name}.svg"));
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (900, 600)).into_drawing_area();
            draw(root, title, y_label, &strain, y).map_err(|e| vtk_error(&svg_path, e))?;
        }
        atomic_write(&svg_path, svg.as_bytes())?;
    }
    Ok(())
}

fn image_png(out: &mut Vec<u8>, rgb: &[u8], w: u32, h: u32) -> std::result::Result<(), String> {
    let mut enc = png::Encoder::new(out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(rgb).map_err(|e| e.to_string())
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    y_label: &str,
    x: &[f64],
    y: &[f64],
) -> std::result::Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |err: &dyn std::fmt::Display| err.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let (x0, x1) = range(x, 0.0);
    let (y0, y1) = range(y, 0.0);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .x_desc("shear strain d_h / L (%)")
        .y_desc(y_label)
        .label_style(("sans-serif", 16))
        .draw()
        .map_err(|x| e(&x))?;
    chart
        .draw_series(LineSeries::new(
            x.iter().copied().zip(y.iter().copied()),
            BLUE.stroke_width(2),
        ))
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

/// Axis range holding the data and `include`, with a margin.
fn range(v: &[f64], include: f64) -> (f64, f64) {
    let lo = v.iter().copied().fold(include, f64::min);
    let hi = v.iter().copied().fold(include, f64::max);
    let pad = ((hi - lo) * 0.05).max(1e-9);
    (lo - pad, hi + pad)
}
