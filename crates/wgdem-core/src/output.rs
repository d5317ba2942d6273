//! Run outputs: `timeseries.csv`, particle snapshots and `summary.json`.
//!
//! Snapshots and the summary are written atomically (a temporary file in the same directory,
//! then a rename); `timeseries.csv` grows by whole rows, each written with a single `write`
//! call, so a killed run leaves complete files and complete rows from its last output. A
//! directory that already holds a run is refused unless the caller asks to overwrite it.
//!
//! One run writes to a directory at a time: [`OutputLock`] holds an advisory lock on
//! `.wgdem.lock` for the run's life (the operating system releases it when the process ends,
//! killed or not), taken before anything is written. Each run lists the entries it writes in
//! `manifest.json`; overwriting removes those of the run before (all of them) after taking the
//! lock and before writing anything new.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::cpu::Simulation;
use crate::error::{Error, Result};

/// What `wgdem run` writes in its output directory (besides the lock).
pub const RUN_ENTRIES: [&str; 8] = [
    "timeseries.csv",
    "summary.json",
    "particles",
    "vtk",
    "input.toml",
    "checkpoint.bin",
    BLOWUP,
    MANIFEST,
];

/// The list of entries a run wrote, for overwriting.
pub const MANIFEST: &str = "manifest.json";
/// The lock file; it stays after the run (an unlocked file is no lock).
pub const LOCK: &str = ".wgdem.lock";

/// `manifest.json`: the entries (files and directories directly in the output directory) that
/// a run writes, so that overwriting it removes them all.
#[derive(Serialize, serde::Deserialize)]
struct Manifest {
    command_line: String,
    entries: Vec<String>,
}

/// The exclusive right to write an output directory, held until dropped (or the process ends).
#[derive(Debug)]
pub struct OutputLock {
    _file: File,
}

impl OutputLock {
    /// Takes the lock of `dir` (created if missing). Another process holding it is refused
    /// with its pid and command line.
    pub fn take(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join(LOCK);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                return Err(Error::OutputBusy {
                    dir: dir.to_path_buf(),
                    holder: holder.trim().to_owned(),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        let holder = format!(
            "pid {}: {}",
            std::process::id(),
            std::env::args().collect::<Vec<_>>().join(" ")
        );
        file.set_len(0).map_err(|e| Error::io(&path, e))?;
        file.write_all(holder.as_bytes())
            .map_err(|e| Error::io(&path, e))?;
        Ok(Self { _file: file })
    }

    /// Takes the lock of `dir` for a new run that writes `entries` there (the manifest among
    /// them). A directory holding a run's results is refused unless `overwrite`; then every
    /// entry of the earlier run's manifest (and each of `entries`) is removed first. The new
    /// manifest is written before the run writes anything else.
    pub fn claim(dir: &Path, entries: &[&str], overwrite: bool) -> Result<Self> {
        let lock = Self::take(dir)?;
        let manifest = dir.join(MANIFEST);
        let mut old: Vec<String> = entries.iter().map(|e| (*e).to_owned()).collect();
        if let Ok(text) = std::fs::read_to_string(&manifest)
            && let Ok(m) = serde_json::from_str::<Manifest>(&text)
        {
            old.extend(m.entries);
        }
        // Only names directly in the directory: a manifest cannot send the removal elsewhere.
        old.retain(|e| {
            let p = Path::new(e);
            p.components().count() == 1
                && matches!(p.components().next(), Some(std::path::Component::Normal(_)))
                && e != LOCK
        });
        if !overwrite && let Some(found) = old.iter().find(|m| dir.join(m).exists()) {
            return Err(Error::OutputExists {
                dir: dir.to_path_buf(),
                found: found.clone(),
            });
        }
        for entry in &old {
            let path = dir.join(entry);
            let removed = match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
                Ok(_) => std::fs::remove_file(&path),
                Err(_) => Ok(()),
            };
            removed.map_err(|e| Error::io(&path, e))?;
        }
        write_json(
            &manifest,
            &Manifest {
                command_line: std::env::args().collect::<Vec<_>>().join(" "),
                entries: entries.iter().map(|e| (*e).to_owned()).collect(),
            },
        )?;
        Ok(lock)
    }
}

/// Writes `bytes` to `path` atomically. The file gets the mode a plain create gives (0666
/// less the user's umask), not the owner-only mode of a temporary file, so that colleagues
/// sharing the results can read them.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The mode passed to open(2): the umask still applies.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir).map_err(|e| Error::io(dir, e))?;
    tmp.write_all(bytes).map_err(|e| Error::io(path, e))?;
    tmp.as_file().sync_all().map_err(|e| Error::io(path, e))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// The column groups of `timeseries.csv` that depend on the scene.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SeriesColumns {
    /// The contact-work columns (scenes with linear or hill pairs).
    pub work: bool,
    /// The periodic cell's columns: its volume and Love–Weber stress ([`CELL_COLUMNS`]).
    pub cell: bool,
}

impl SeriesColumns {
    /// The columns `sim`'s scene has.
    pub fn of(sim: &Simulation) -> Self {
        Self {
            work: sim.accounts_work(),
            cell: sim.cell().is_some(),
        }
    }
}

/// The columns a periodic cell adds to `timeseries.csv`: its volume, the nine components of
/// its stress tensor (row by row; compression positive, `Simulation::stress`), and the mean
/// stress `p = tr σ / 3` and deviator `q = √(3/2 s : s)` of its symmetric part.
pub const CELL_COLUMNS: [&str; 12] = [
    "cell_volume_m3",
    "stress_xx_Pa",
    "stress_xy_Pa",
    "stress_xz_Pa",
    "stress_yx_Pa",
    "stress_yy_Pa",
    "stress_yz_Pa",
    "stress_zx_Pa",
    "stress_zy_Pa",
    "stress_zz_Pa",
    "mean_stress_p_Pa",
    "deviator_stress_q_Pa",
];

/// An output directory being filled by a run.
#[derive(Debug)]
pub struct OutputDir {
    _lock: OutputLock,
    dir: PathBuf,
    series: File,
    snapshots: usize,
    columns: SeriesColumns,
}

impl OutputDir {
    /// Creates (or reuses, if `overwrite`) `dir` for a run with the given wall names and the
    /// scene's optional `columns`.
    pub fn create(
        dir: &Path,
        wall_names: &[String],
        columns: SeriesColumns,
        overwrite: bool,
    ) -> Result<Self> {
        let lock = OutputLock::claim(dir, &RUN_ENTRIES, overwrite)?;
        std::fs::create_dir_all(dir.join("particles")).map_err(|e| Error::io(dir, e))?;
        let mut header: Vec<String> = [
            "step",
            "time_s",
            "kinetic_energy_J",
            "contacts",
            "wall_contacts",
            "sliding_contacts",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        for name in wall_names {
            for axis in ["x", "y", "z"] {
                header.push(format!("wall_{name}_f{axis}_N"));
            }
        }
        if columns.work {
            header.push("contact_elastic_energy_J".to_owned());
            header.push("contact_dissipated_work_J".to_owned());
        }
        if columns.cell {
            header.extend(CELL_COLUMNS.iter().map(|c| (*c).to_owned()));
        }
        let path = dir.join("timeseries.csv");
        let mut series = File::create(&path).map_err(|e| Error::io(&path, e))?;
        series
            .write_all(&csv_bytes(&path, &header, &[])?)
            .map_err(|e| Error::io(&path, e))?;
        Ok(Self {
            _lock: lock,
            dir: dir.to_path_buf(),
            series,
            snapshots: 0,
            columns,
        })
    }

    /// Reopens `dir` to continue a run from a checkpoint taken after `snapshots` particle
    /// snapshots and `series_bytes` bytes of `timeseries.csv`: rows written after the
    /// checkpoint are cut off, so that the resumed run writes them again.
    /// `lock` is the directory's, taken before the checkpoint was read.
    pub fn resume(
        lock: OutputLock,
        dir: &Path,
        columns: SeriesColumns,
        snapshots: usize,
        series_bytes: u64,
    ) -> Result<Self> {
        let path = dir.join("timeseries.csv");
        let series = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        let len = series.metadata().map_err(|e| Error::io(&path, e))?.len();
        if len < series_bytes {
            return Err(Error::Invalid {
                file: path.display().to_string(),
                field: "resume".to_owned(),
                message: format!(
                    "holds {len} bytes, fewer than the {series_bytes} the checkpoint saw; the directory was changed since"
                ),
            });
        }
        series
            .set_len(series_bytes)
            .map_err(|e| Error::io(&path, e))?;
        let mut series = series;
        use std::io::Seek;
        series
            .seek(std::io::SeekFrom::End(0))
            .map_err(|e| Error::io(&path, e))?;
        Ok(Self {
            _lock: lock,
            dir: dir.to_path_buf(),
            series,
            snapshots,
            columns,
        })
    }

    /// Particle snapshots written and bytes of `timeseries.csv`, for a checkpoint.
    pub fn position(&self) -> Result<(usize, u64)> {
        let path = self.dir.join("timeseries.csv");
        let len = self
            .series
            .metadata()
            .map_err(|e| Error::io(&path, e))?
            .len();
        Ok((self.snapshots, len))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends a time-series row and writes a particle snapshot for the current state.
    ///
    /// Wall forces, contact counts and the particles' forces and torques are those of
    /// `forces`, the simulation whose last force evaluation belongs to this row (see `runner`).
    pub fn record(&mut self, sim: &Simulation, forces: &Simulation) -> Result<()> {
        let mut row = vec![
            sim.steps.to_string(),
            fmt(step_time(sim.steps, sim.dt)),
            fmt(sim.particles.kinetic_energy()),
            forces.stats.contacts.to_string(),
            forces.stats.wall_contacts.to_string(),
            forces.stats.sliding.to_string(),
        ];
        for w in &forces.walls {
            row.extend([fmt(w.force.x), fmt(w.force.y), fmt(w.force.z)]);
        }
        if self.columns.work {
            row.extend([fmt(forces.work.elastic), fmt(forces.work.dissipated)]);
        }
        if self.columns.cell {
            let volume = sim.cell().map_or(f64::NAN, |c| c.volume());
            let stress = forces.stress().unwrap_or(glam::DMat3::NAN);
            let (p, q) = crate::analysis::invariants(stress);
            row.push(fmt(volume));
            // Row by row: σ_ij is column j's component i.
            for i in 0..3 {
                for j in 0..3 {
                    row.push(fmt(stress.col(j)[i]));
                }
            }
            row.extend([fmt(p), fmt(q)]);
        }
        let path = self.dir.join("timeseries.csv");
        let line = csv_bytes(&path, &row, &[])?;
        self.series
            .write_all(&line)
            .map_err(|e| Error::io(&path, e))?;
        let path = self
            .dir
            .join("particles")
            .join(format!("particles_{:06}.csv", self.snapshots));
        write_particles_with(&path, sim, forces)?;
        self.snapshots += 1;
        Ok(())
    }

    /// Writes `summary.json`.
    pub fn write_summary(&self, summary: &impl Serialize) -> Result<()> {
        write_json(&self.dir.join("summary.json"), summary)
    }
}

/// The file a blown-up run leaves its last state in, for diagnosis (not a result).
pub const BLOWUP: &str = "blowup.csv";

/// Checks the outcome of a backend's `advance` (`advanced`) and the state it left in `sim`
/// for a blow-up ([`crate::guard`]; the GPU engine also counts them as it steps): on one,
/// writes `sim`'s state to [`BLOWUP`] in `dir` and returns the error that says so.
pub fn guarded(dir: &Path, sim: &Simulation, advanced: Result<()>) -> Result<()> {
    let engine_saw = matches!(advanced, Err(Error::BlowUp(_)));
    let host_sees = crate::guard::blew_up(sim);
    if !(engine_saw || host_sees) {
        return advanced;
    }
    let path = dir.join(BLOWUP);
    write_particles(&path, sim)?;
    if host_sees {
        crate::guard::check(sim, &path.display().to_string())
    } else {
        // Seen in f32 on the GPU only, at the bound's edge: the engine's own message.
        advanced.map_err(|e| Error::BlowUp(format!("{e} (state in {})", path.display())))
    }
}

/// The columns of a particle CSV (`particles/particles_NNNNNN.csv`, `blowup.csv`,
/// `Simulation.write_particles`).
pub const PARTICLE_CSV_COLUMNS: [&str; 19] = [
    "id",
    "x_m",
    "y_m",
    "z_m",
    "vx_m_s",
    "vy_m_s",
    "vz_m_s",
    "wx_rad_s",
    "wy_rad_s",
    "wz_rad_s",
    "radius_m",
    "material",
    "fx_N",
    "fy_N",
    "fz_N",
    "tx_N_m",
    "ty_N_m",
    "tz_N_m",
    "source_id",
];

/// Writes the particles of `sim` as a particle CSV ([`PARTICLE_CSV_COLUMNS`]: id, position,
/// velocity, angular velocity, radius, material, the force and torque of its last step, and
/// its id in the packing file it came from, −1 for none), atomically.
pub fn write_particles(path: &Path, sim: &Simulation) -> Result<()> {
    write_particles_with(path, sim, sim)
}

/// [`write_particles`] with the forces and torques of `forces` (the same spheres).
fn write_particles_with(path: &Path, sim: &Simulation, forces: &Simulation) -> Result<()> {
    let p = &sim.particles;
    let (force, torque) = (&forces.particles.force, &forces.particles.torque);
    let header: Vec<String> = PARTICLE_CSV_COLUMNS
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let rows: Vec<Vec<String>> = (0..p.len())
        .map(|i| {
            let (x, v, w) = (p.position[i], p.velocity[i], p.angular_velocity[i]);
            let (f, t) = (force[i], torque[i]);
            vec![
                i.to_string(),
                fmt(x.x),
                fmt(x.y),
                fmt(x.z),
                fmt(v.x),
                fmt(v.y),
                fmt(v.z),
                fmt(w.x),
                fmt(w.y),
                fmt(w.z),
                fmt(p.radius[i]),
                p.material[i].to_string(),
                fmt(f.x),
                fmt(f.y),
                fmt(f.z),
                fmt(t.x),
                fmt(t.y),
                fmt(t.z),
                sim.source_id_of(i).to_string(),
            ]
        })
        .collect();
    atomic_write(path, &csv_bytes(path, &header, &rows)?)
}

/// The bytes of the checkpoint at `path`; a missing one is explained (the run stopped before
/// its first checkpoint, or the directory holds no run) with `again`, how to start over.
pub fn read_checkpoint(path: &Path, again: &str) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::Invalid {
                file: path.display().to_string(),
                field: "resume".to_owned(),
                message: format!(
                    "there is no checkpoint: the run stopped before its first one (they are written every `checkpoint_rows` rows, at least `checkpoint_seconds` apart, and at the end of each stage) or this directory holds no run; {again}, overwriting the directory"
                ),
            }
        } else {
            Error::io(path, e)
        }
    })
}

/// Writes `value` as pretty JSON to `path`, atomically.
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let json = serde_json::to_vec_pretty(value).map_err(|e| Error::Encode {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    atomic_write(path, &json)
}

/// Shortest decimal form that reads back to the same f64 (as `csv` writes floats, so that
/// every CSV of wgdem prints numbers alike).
pub fn fmt(x: f64) -> String {
    ryu::Buffer::new().format(x).to_owned()
}

/// The time of a step, as every output's `time_s` column prints it (defined with the stepper).
pub use crate::cpu::step_time;

fn csv_bytes(path: &Path, header: &[String], rows: &[Vec<String>]) -> Result<Vec<u8>> {
    let encode = |e: csv::Error| Error::Encode {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header).map_err(encode)?;
    for row in rows {
        w.write_record(row).map_err(encode)?;
    }
    w.into_inner().map_err(|e| Error::Encode {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An atomically written file gets the mode of a plainly created one (the umask's), not a
    /// temporary file's owner-only 0600.
    #[cfg(unix)]
    #[test]
    fn atomic_files_get_the_umask_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let plain = dir.path().join("plain");
        File::create(&plain).expect("create");
        let atomic = dir.path().join("atomic");
        atomic_write(&atomic, b"x").expect("write");
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(&atomic), mode(&plain));
        assert_ne!(
            mode(&atomic),
            0o600,
            "a umask of 0177 is not the default anywhere"
        );
    }
}
