//! Plots of a direct shear test and of a periodic-cell test (through `plotters`), as PNG and
//! SVG: stress ratio and vertical displacement against shear strain; stress ratio and
//! volumetric strain against loading strain. Every file is written atomically.

use std::path::Path;

use plotters::prelude::*;
use wgdem_core::element::{ProbeRow, Row as CellRow};
use wgdem_core::error::{Error, Result};
use wgdem_core::output::atomic_write;
use wgdem_core::shear::Row;

use crate::vtk::encode_error;

const FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The bundled DejaVu Sans: plots need no system fonts.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Stress ratio and vertical displacement against shear strain, as PNG and SVG.
pub fn write_plots(dir: &Path, rows: &[Row]) -> Result<()> {
    let shear: Vec<&Row> = rows.iter().filter(|r| r.stage == "shear").collect();
    let strain: Vec<f64> = shear.iter().map(|r| 100.0 * r.shear_strain).collect();
    let ratio: Vec<f64> = shear.iter().map(|r| r.stress_ratio).collect();
    let rise: Vec<f64> = shear
        .iter()
        .map(|r| 1000.0 * r.vertical_displacement_m)
        .collect();
    write_curves(
        dir,
        "shear strain d_h / L (%)",
        &strain,
        &[
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
        ],
    )
}

/// A periodic-cell test's stress ratio and volumetric strain against its loading strain, as
/// PNG and SVG.
pub fn write_cell_plots(dir: &Path, rows: &[CellRow]) -> Result<()> {
    let loading: Vec<&CellRow> = rows.iter().filter(|r| r.stage != "compaction").collect();
    let strain: Vec<f64> = loading.iter().map(|r| 100.0 * r.loading_strain).collect();
    let ratio: Vec<f64> = loading.iter().map(|r| r.stress_ratio).collect();
    let volumetric: Vec<f64> = loading
        .iter()
        .map(|r| 100.0 * r.volumetric_strain)
        .collect();
    write_curves(
        dir,
        "loading strain (%: axial, or γ in simple shear)",
        &strain,
        &[
            (
                "stress_ratio",
                "Stress ratio (q/p, or τ/σ in simple shear) against loading strain",
                "stress ratio (–)",
                &ratio,
            ),
            (
                "volumetric_strain",
                "Volumetric strain (+ contraction) against loading strain",
                "volumetric strain (%)",
                &volumetric,
            ),
        ],
    )
}

/// Strain probes in the Rendulic plane (Kuhn, Suzuki & Daouadji, Fig. 5): each probe's point
/// (along its stress increment, at its irreversible strain over its stress increment, in
/// 1/MPa) and the fitted circle through the origin, as `dir/NAME.{png,svg}`.
pub fn write_probe_plot(
    dir: &Path,
    name: &str,
    rows: &[ProbeRow],
    centre: Option<[f64; 2]>,
) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    register_font();
    let points: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (1e6 * r.point_vol, 1e6 * r.point_dev))
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    let circle: Vec<(f64, f64)> = centre
        .map(|[cx, cy]| {
            let (cx, cy) = (1e6 * cx, 1e6 * cy);
            let r = cx.hypot(cy);
            (0..=180)
                .map(|k| {
                    let a = std::f64::consts::TAU * f64::from(k) / 180.0;
                    (cx + r * a.cos(), cy + r * a.sin())
                })
                .collect()
        })
        .unwrap_or_default();
    let draw_into =
        |root: DrawingArea<_, plotters::coord::Shift>| -> std::result::Result<(), String> {
            scatter(root, &points, &circle)
        };
    let png = dir.join(format!("{name}.png"));
    let mut buf = vec![0u8; 700 * 700 * 3];
    draw_into(BitMapBackend::with_buffer(&mut buf, (700, 700)).into_drawing_area())
        .map_err(|e| encode_error(&png, e))?;
    let mut encoded = Vec::new();
    image_png(&mut encoded, &buf, 700, 700).map_err(|e| encode_error(&png, e))?;
    atomic_write(&png, &encoded)?;
    let svg_path = dir.join(format!("{name}.svg"));
    let mut svg = String::new();
    scatter(
        SVGBackend::with_string(&mut svg, (700, 700)).into_drawing_area(),
        &points,
        &circle,
    )
    .map_err(|e| encode_error(&svg_path, e))?;
    atomic_write(&svg_path, svg.as_bytes())
}

/// The probes' points (blue) and their circle (red), on equal axes about the origin.
fn scatter<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    points: &[(f64, f64)],
    circle: &[(f64, f64)],
) -> std::result::Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |err: &dyn std::fmt::Display| err.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let reach = points
        .iter()
        .chain(circle)
        .map(|(x, y)| x.abs().max(y.abs()))
        .fold(1e-12, f64::max)
        * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Strain probes: irreversible strain / stress increment",
            ("sans-serif", 20),
        )
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(-reach..reach, -reach..reach)
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .x_desc("volumetric, along dσ (1/MPa)")
        .y_desc("deviatoric, along dσ (1/MPa)")
        .label_style(("sans-serif", 16))
        .draw()
        .map_err(|x| e(&x))?;
    chart
        .draw_series(LineSeries::new(circle.iter().copied(), RED.stroke_width(2)))
        .map_err(|x| e(&x))?;
    chart
        .draw_series(points.iter().map(|&p| Circle::new(p, 4, BLUE.filled())))
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

/// Each of `curves` (file name, title, y label, y) against `x`, as `dir/NAME.png` and
/// `dir/NAME.svg`.
fn write_curves(
    dir: &Path,
    x_label: &str,
    x: &[f64],
    curves: &[(&str, &str, &str, &[f64])],
) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    register_font();
    for &(name, title, y_label, y) in curves {
        let png = dir.join(format!("{name}.png"));
        let mut buf = vec![0u8; 900 * 600 * 3];
        {
            let root = BitMapBackend::with_buffer(&mut buf, (900, 600)).into_drawing_area();
            draw(root, title, (x_label, y_label), x, y).map_err(|e| encode_error(&png, e))?;
        }
        let mut encoded = Vec::new();
        {
            let encoder = image_png(&mut encoded, &buf, 900, 600);
            encoder.map_err(|e| encode_error(&png, e))?;
        }
        atomic_write(&png, &encoded)?;
        let svg_path = dir.join(format!("{name}.svg"));
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (900, 600)).into_drawing_area();
            draw(root, title, (x_label, y_label), x, y).map_err(|e| encode_error(&svg_path, e))?;
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
    (x_label, y_label): (&str, &str),
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
        .x_desc(x_label)
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
