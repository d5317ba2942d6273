//! Packings brought in from files: spheres read by a [`PackingReader`] (`wgdem-io` reads CSV,
//! wgdem's own `.vtu`, and LAMMPS/LIGGGHTS data and dump files), and the checks a packing
//! must pass before it is simulated: inside the walls, overlaps within a stated limit.

use std::path::Path;

use glam::DVec3;
use serde::{Deserialize, Serialize};

use crate::broadphase::pairs_within;
use crate::error::{Error, Result};
use crate::wall::Wall;

/// Which material a sphere of a file has, as the file says it.
#[derive(Debug, Clone, PartialEq)]
pub enum MaterialRef {
    /// Not given: the group's material.
    Default,
    /// An index into the scene's materials (wgdem's own files) or a LAMMPS atom type.
    Index(u64),
    /// A material name.
    Name(String),
}

/// Pairs overlapping by more than a limit: how many, and the worst.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overlaps {
    /// Pairs beyond the limit.
    pub count: usize,
    /// The worst pair (indices).
    pub pair: (usize, usize),
    /// Its overlap as a fraction of the smaller radius.
    pub fraction: f64,
}

/// The pairs of spheres (`position`, `radius`) overlapping by more than `max_overlap` of the
/// smaller radius; `None` when there are none.
pub fn worst_overlap(position: &[DVec3], radius: &[f64], max_overlap: f64) -> Option<Overlaps> {
    worst_overlap_in(position, radius, max_overlap, None)
}

/// [`worst_overlap`], through the nearest images of a periodic `cell` where one is given (the
/// spheres inside it).
pub fn worst_overlap_in(
    position: &[DVec3],
    radius: &[f64],
    max_overlap: f64,
    cell: Option<&crate::cell::PeriodicCell>,
) -> Option<Overlaps> {
    let pairs = match cell {
        Some(c) => crate::broadphase::periodic_pairs_within(position, radius, 0.0, c),
        None => pairs_within(position, radius, 0.0),
    };
    let mut found: Option<Overlaps> = None;
    for (i, j) in pairs {
        let (a, b) = (i as usize, j as usize);
        let mut d = position[b] - position[a];
        if let Some(c) = cell {
            d = c.nearest_image(d);
        }
        let overlap = radius[a] + radius[b] - d.length();
        let fraction = overlap / radius[a].min(radius[b]);
        if fraction > max_overlap {
            let count = found.map_or(0, |f| f.count) + 1;
            found = Some(match found {
                Some(f) if fraction <= f.fraction => Overlaps { count, ..f },
                _ => Overlaps {
                    count,
                    pair: (a, b),
                    fraction,
                },
            });
        }
    }
    found
}

/// One sphere of a packing (SI units).
#[derive(Debug, Clone, PartialEq)]
pub struct PackedSphere {
    /// Centre (m).
    pub position: DVec3,
    /// Radius (m).
    pub radius: f64,
    /// Velocity (m/s).
    pub velocity: DVec3,
    /// Angular velocity (rad/s).
    pub angular_velocity: DVec3,
    /// Material, as the file gives it.
    pub material: MaterialRef,
    /// The sphere's id in the file (a LAMMPS atom id), kept as `source_id` in the outputs.
    pub id: Option<u64>,
    /// Density the file gives (kg/m³; a LAMMPS data file's `Atoms` column, a dump's
    /// `density` column): checked against the material's, which wgdem uses.
    pub density: Option<f64>,
}

/// Spheres read from a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Packing {
    /// The file, for messages.
    pub source: String,
    /// The spheres, in file order.
    pub spheres: Vec<PackedSphere>,
    /// Whether material indices are LAMMPS atom types (1-based) rather than wgdem's indices.
    pub lammps_types: bool,
    /// The largest overlap the file records it holds (a fraction of the smaller radius):
    /// wgdem's specimen files record theirs ([`RECORDED_OVERLAP_KEY`]), so that a specimen
    /// saved under load is read back by the test that wrote it (see [`Packing::overlap_limit`]).
    pub recorded_max_overlap: Option<f64>,
    /// The periodic cell the file records the spheres were in (wgdem's specimen CSV of a
    /// periodic scene, [`RECORDED_CELL_KEY`]): its edges `a`, `b`, `c` and its origin (m).
    pub recorded_cell: Option<[DVec3; 4]>,
}

/// The key under which wgdem's specimen CSV of a periodic scene records its cell: a comment line
/// `# cell = ax ay az bx by bz cx cy cz ox oy oz` (edges, then origin; m) before the header.
pub const RECORDED_CELL_KEY: &str = "cell";

/// The key under which wgdem's specimen files record their largest overlap: a CSV comment
/// line `# max_overlap = X` before the header, a `.vtu` field-data array of that name.
pub const RECORDED_OVERLAP_KEY: &str = "max_overlap";

/// The most a recorded overlap raises a packing's limit to: a specimen overlapping by half a
/// radius is not one a test left, whatever the file says.
pub const MAX_RECORDED_OVERLAP: f64 = 0.5;

/// The largest overlap among the spheres (`position`, `radius`), as a fraction of the smaller
/// radius of the pair; 0 where none touch.
pub fn largest_overlap(position: &[DVec3], radius: &[f64]) -> f64 {
    worst_overlap(position, radius, 0.0).map_or(0.0, |w| w.fraction)
}

/// The formats of packing files (`format =` of a `kind = "file"` group).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PackingFormat {
    /// A table of spheres (`x,y,z,radius,...`).
    Csv,
    /// wgdem's particle snapshot or specimen, or another writer's vertices.
    Vtu,
    /// A LAMMPS/LIGGGHTS data file (`atom_style sphere` or `granular`).
    LammpsData,
    /// A LAMMPS/LIGGGHTS `dump custom` file (its last frame).
    LammpsDump,
}

/// Reads packings from files.
pub trait PackingReader {
    /// The spheres of `path`, in `format` (`None`: from its extension or its content).
    fn read(&self, path: &Path, format: Option<PackingFormat>) -> Result<Packing>;
}

/// A reader for builds that have none (the physics crate alone): refuses every file.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPackingReader;

impl PackingReader for NoPackingReader {
    fn read(&self, path: &Path, _format: Option<PackingFormat>) -> Result<Packing> {
        Err(Error::Invalid {
            file: path.display().to_string(),
            field: "particles.path".to_owned(),
            message: "this build reads no packing files; load the scene with wgdem_io::load_scene"
                .to_owned(),
        })
    }
}

/// Default largest overlap a packing may hold, as a fraction of the smaller radius of the pair:
/// above the few percent of a packing consolidated under load with soft grains (a bundled
/// quick preset's reaches 6 %), short of the interpenetration of a packing made for other
/// radii or units, which would blow up in the first steps.
pub const DEFAULT_MAX_OVERLAP: f64 = 0.1;

impl Packing {
    /// The overlap limit for this packing under a configured `max_overlap`: raised to the
    /// overlap the file records it holds (at most [`MAX_RECORDED_OVERLAP`]), so that wgdem's
    /// own specimen consolidated under load is accepted back as it was written.
    pub fn overlap_limit(&self, max_overlap: f64) -> f64 {
        match self.recorded_max_overlap {
            Some(r) if r.is_finite() && r > max_overlap => r.min(MAX_RECORDED_OVERLAP),
            _ => max_overlap,
        }
    }

    /// Refuses a packing with spheres reaching out of the box `[min, max]` by more than
    /// `max_overlap` of their radius (the count and the worst, in line order).
    pub fn check_box(&self, min: DVec3, max: DVec3, max_overlap: f64, field: &str) -> Result<()> {
        let mut out = 0;
        let mut worst: Option<(f64, usize)> = None;
        for (k, s) in self.spheres.iter().enumerate() {
            let allowed = s.radius * (1.0 - max_overlap);
            let below = (min - (s.position - allowed)).max_element();
            let above = ((s.position + allowed) - max).max_element();
            let beyond = below.max(above);
            if beyond > 0.0 {
                out += 1;
                if worst.is_none_or(|(x, _)| beyond > x) {
                    worst = Some((beyond, k));
                }
            }
        }
        match worst {
            Some((d, k)) => Err(Error::Invalid {
                file: self.source.clone(),
                field: field.to_owned(),
                message: format!(
                    "{out} sphere(s) reach out of the box ({:.4}..{:.4}, {:.4}..{:.4}, {:.4}..{:.4} m); the farthest, sphere {}, by {d:.3e} m: the packing must have been made for another box",
                    min.x,
                    max.x,
                    min.y,
                    max.y,
                    min.z,
                    max.z,
                    k + 1
                ),
            }),
            None => Ok(()),
        }
    }

    /// Refuses a packing with spheres behind a wall (the count and the farthest) or pairs
    /// overlapping by more than `max_overlap` of the smaller radius (the count and the worst):
    /// a packing from elsewhere that does not fit this box or these radii would explode on the
    /// first step. `field` names the setting in messages.
    pub fn check(&self, walls: &[Wall], max_overlap: f64, field: &str) -> Result<()> {
        let err = |message: String| Error::Invalid {
            file: self.source.clone(),
            field: field.to_owned(),
            message,
        };
        let mut outside = 0;
        let mut worst: Option<(f64, usize, &str)> = None;
        for (k, s) in self.spheres.iter().enumerate() {
            for w in walls {
                if let Some(d) = w.signed_distance(s.position)
                    && d < 0.0
                {
                    outside += 1;
                    if worst.is_none_or(|(x, ..)| -d > x) {
                        worst = Some((-d, k, &w.name));
                    }
                    break;
                }
            }
        }
        if let Some((d, k, wall)) = worst {
            return Err(err(format!(
                "{outside} sphere(s) lie outside the walls; the farthest, sphere {} (line order), is {d:.3e} m behind wall \"{wall}\": move the packing or the walls",
                k + 1
            )));
        }
        let position: Vec<DVec3> = self.spheres.iter().map(|s| s.position).collect();
        let radius: Vec<f64> = self.spheres.iter().map(|s| s.radius).collect();
        if let Some(w) = worst_overlap(&position, &radius, max_overlap) {
            return Err(err(format!(
                "{} pair(s) overlap by more than {max_overlap} of the smaller radius; the worst, spheres {} and {}, by {:.3} of it: relax the packing, or raise max_overlap if that is intended",
                w.count,
                w.pair.0 + 1,
                w.pair.1 + 1,
                w.fraction
            )));
        }
        Ok(())
    }
}
