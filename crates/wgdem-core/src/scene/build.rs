//! From a parsed scene to a [`Simulation`]: materials, pair models, walls, particle groups
//! and the time step, each checked with the field named.

use super::placement::{build_cell, check_overlaps};
use super::*;

/// Validates `config` and builds the simulation; `file` names the source in errors. A scene
/// with packing files needs [`build_scene_with`].
pub fn build_scene(config: SceneConfig, file: &str) -> Result<Scene> {
    build_scene_with(config, file, &crate::packing::NoPackingReader)
}

/// [`build_scene`], with `reader` reading the packing files of `kind = "file"` groups (paths
/// relative to `file`'s directory).
pub fn build_scene_with(
    mut config: SceneConfig,
    file: &str,
    reader: &dyn crate::packing::PackingReader,
) -> Result<Scene> {
    let v = Validator { file };
    pin_packing_files(&v, &mut config)?;
    let s = &config.simulation;
    check_simulation(&v, &config)?;
    let materials = v.materials(&config.materials)?;
    let names: HashMap<&str, usize> = materials
        .iter()
        .enumerate()
        .map(|(i, m)| (m.name.as_str(), i))
        .collect();
    let lookup = |field: String, name: &str| -> Result<usize> {
        names.get(name).copied().ok_or_else(|| {
            v.err(
                &field,
                format!(
                    "no material named \"{name}\"; define it under [[materials]] (known: {})",
                    known(&materials)
                ),
            )
        })
    };
    check_memory_asked(file, &config.particles)?;
    let walls = build_walls(&v, &config.walls, &lookup)?;
    let (particles, group_ranges, source_id) =
        build_particles(&v, &config, reader, &materials, &walls, &lookup)?;
    check_overlaps(&v, &config, &particles, &walls)?;
    let (drives, drive_of) = build_loads(&v, &config.loads, &group_ranges, particles.len())?;
    let wall_schedules = build_wall_schedules(&v, &config.walls)?;
    let pair_params = build_pair_params(&v, &config, &materials, &walls, &particles, &lookup)?;
    let moisture_events = build_moisture_events(&v, &config, &pair_params, &particles)?;
    if !(0.0..1.0).contains(&s.local_damping) {
        return Err(v.err(
            "simulation.local_damping",
            format!(
                "{} is outside [0, 1); use 0 (none) or e.g. 0.7 for quasi-static problems",
                s.local_damping
            ),
        ));
    }
    let step = time_step(
        &v,
        &config,
        &particles,
        &walls,
        &pair_params,
        materials.len(),
    )?;
    let model = ContactModel {
        law: config.contact.law,
        history: config.contact.history,
    };
    let gravity = DVec3::from_array(s.gravity);
    let mut simulation = Simulation::new(particles, walls, model, pair_params, gravity, step.dt);
    simulation.local_damping = s.local_damping;
    simulation.set_moisture_events(moisture_events);
    simulation.drives = drives;
    simulation.drive_of = drive_of;
    simulation.wall_schedules = wall_schedules;
    simulation.source_id = source_id;
    check_scales(&v, &config, &simulation, &group_ranges)?;
    if let Some(cell) = &config.cell {
        build_cell(&v, &config, cell, &mut simulation)?;
    }
    simulation.max_speed = match s.max_speed {
        Some(bound) => {
            v.positive("simulation.max_speed", bound, "m/s")?;
            bound
        }
        None => crate::guard::default_max_speed(&simulation),
    };
    Ok(Scene {
        simulation,
        duration: s.duration,
        output_interval: s.output_interval,
        critical_dt: step.critical_dt,
        max_dt: step.max_dt,
        materials,
        config,
        source: file.to_owned(),
    })
}

/// The `[simulation]` and `[output]` values that need no materials: durations, intervals, the
/// safety factor, gravity, and the characteristic velocity of `[contact]`.
fn check_simulation(v: &Validator, config: &SceneConfig) -> Result<()> {
    let s = &config.simulation;
    v.positive("simulation.duration", s.duration, "s")?;
    v.positive("simulation.output_interval", s.output_interval, "s")?;
    v.checkpoint_seconds(config.output.checkpoint_seconds)?;
    if let Some(t) = config.output.vtk_interval
        && !(t.is_finite() && t >= 0.0)
    {
        return Err(v.err(
            "output.vtk_interval",
            format!("{t} must be ≥ 0 (in s; 0 writes no ParaView snapshots)"),
        ));
    }
    if !(s.safety_factor > 0.0 && s.safety_factor <= 1.0) {
        return Err(v.err(
            "simulation.safety_factor",
            format!(
                "{} is outside (0, 1]; use e.g. 0.2 (the default)",
                s.safety_factor
            ),
        ));
    }
    v.finite3("simulation.gravity", s.gravity)?;
    v.positive(
        "contact.characteristic_velocity",
        config.contact.characteristic_velocity,
        "m/s",
    )
}

/// Pins each `kind = "file"` group to the bytes it runs: its path made absolute (relative to
/// the scene file's directory, as given) and the BLAKE3 of the file recorded, so that the
/// input as run (`input.toml`) runs again from anywhere and a checkpoint's input hash covers
/// the packing's contents. A group that already records a hash (an `input.toml` run again)
/// refuses a file whose bytes differ; a path that is not a readable file is refused naming it.
fn pin_packing_files(v: &Validator, config: &mut SceneConfig) -> Result<()> {
    let base = Path::new(v.file)
        .parent()
        .unwrap_or(Path::new("."))
        .to_owned();
    for (g, group) in config.particles.iter_mut().enumerate() {
        let ParticleGroup::File { path, blake3, .. } = group else {
            continue;
        };
        let field = format!("particles[{g}].path");
        let full = base.join(&*path);
        let full = std::path::absolute(&full).unwrap_or(full);
        if full.is_dir() {
            return Err(v.err(
                &field,
                format!(
                    "{} is a directory; give a packing file (.csv, .vtu, .data, .lmp or .dump)",
                    full.display()
                ),
            ));
        }
        let bytes = std::fs::read(&full).map_err(|e| Error::io(&full, e))?;
        let hash = ::blake3::hash(&bytes).to_hex().to_string();
        if let Some(recorded) = blake3.as_deref()
            && recorded != hash
        {
            return Err(v.err(
                &format!("particles[{g}].blake3"),
                format!(
                    "{} has changed since this input was run (BLAKE3 {hash}, recorded {recorded}): restore the file, or remove the blake3 key to run the file as it is now",
                    full.display()
                ),
            ));
        }
        *path = full.display().to_string();
        *blake3 = Some(hash);
    }
    Ok(())
}

/// Refuses gravity and prescribed or initial speeds that no granular scene means (beyond
/// [`crate::guard::MAX_GRAVITY`] and [`crate::guard::MAX_INPUT_SPEED`]; near f64's range
/// they would overflow the blow-up guard's bound and the integration), and a wall or a
/// prescribed particle that moves more than [`crate::guard::MAX_TRAVEL_PER_STEP`] of the
/// smallest radius in a step (it would drive into spheres in one step, or through them).
fn check_scales(
    v: &Validator,
    config: &SceneConfig,
    sim: &Simulation,
    groups: &[std::ops::Range<usize>],
) -> Result<()> {
    use crate::guard::{MAX_GRAVITY, MAX_INPUT_SPEED, MAX_TRAVEL_PER_STEP};
    // Lengths that do not overflow near f64's range.
    let size = crate::cpu::norm;
    let g = size(sim.gravity);
    if g.is_nan() || g > MAX_GRAVITY {
        return Err(v.err(
            "simulation.gravity",
            format!(
                "|g| = {g:.3e} m/s² is beyond any granular scene (at most {MAX_GRAVITY:.0e} m/s², 10⁵ g); give it in m/s² (e.g. [0, 0, -9.81])"
            ),
        ));
    }
    let p = &sim.particles;
    if let Some(i) = (0..p.len()).find(|&i| {
        let v = size(p.velocity[i]);
        v.is_nan() || v > MAX_INPUT_SPEED
    }) {
        let g = groups.iter().position(|r| r.contains(&i)).unwrap_or(0);
        return Err(v.err(
            &format!("particles[{g}].velocity"),
            format!(
                "sphere {i} starts at {:.3e} m/s, beyond any granular scene (at most {MAX_INPUT_SPEED:.0e} m/s); give velocities in m/s",
                size(p.velocity[i])
            ),
        ));
    }
    let smallest = p.radius.iter().copied().fold(f64::INFINITY, f64::min);
    // Each moving body's fastest prescribed speed and the field that sets it.
    let mut moving: Vec<(String, f64)> = Vec::new();
    for (k, w) in sim.walls.iter().enumerate() {
        let name = match config.walls.get(k) {
            Some(WallConfig::Plane { name, .. } | WallConfig::Plate { name, .. }) => name.as_str(),
            None => "",
        };
        let schedule = sim.wall_schedules.get(k).and_then(Option::as_ref);
        let (field, fastest) = match schedule {
            Some(s) => (
                "velocity_schedule",
                s.values.iter().map(|&x| size(x)).fold(0.0, f64::max),
            ),
            None => ("velocity", size(w.velocity)),
        };
        moving.push((format!("walls[{k}].{field} ({name})"), fastest));
    }
    for (k, d) in sim.drives.iter().enumerate() {
        if let Some(s) = &d.velocity {
            let fastest = s.values.iter().map(|&x| size(x)).fold(0.0, f64::max);
            moving.push((format!("loads[{k}].velocity"), fastest));
        }
    }
    for (field, speed) in moving {
        if speed.is_nan() || speed > MAX_INPUT_SPEED {
            return Err(v.err(
                &field,
                format!(
                    "{speed:.3e} m/s is beyond any granular scene (at most {MAX_INPUT_SPEED:.0e} m/s); give velocities in m/s"
                ),
            ));
        }
        let travel = speed * sim.dt;
        if smallest.is_finite() && (travel.is_nan() || travel > MAX_TRAVEL_PER_STEP * smallest) {
            return Err(v.err(
                &field,
                format!(
                    "{speed:.3e} m/s moves {travel:.3e} m in a time step of {:.3e} s, more than {MAX_TRAVEL_PER_STEP} of the smallest radius ({smallest:.3e} m): it would drive into the spheres in one step; lower the speed or the time step (simulation.dt, simulation.safety_factor) to at most {:.3e} s",
                    sim.dt,
                    MAX_TRAVEL_PER_STEP * smallest / speed
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses more spheres than the machine's memory holds, before any is made (a file group's
/// are read first): each group's count and the key that sets it, the largest group named.
fn check_memory_asked(file: &str, groups: &[ParticleGroup]) -> Result<()> {
    let asked: Vec<(f64, String)> = groups
        .iter()
        .enumerate()
        .map(|(g, group)| match group {
            ParticleGroup::Explicit { spheres, .. } => {
                (spheres.len() as f64, format!("particles[{g}].spheres"))
            }
            ParticleGroup::Lattice { counts, count, .. } => (
                {
                    let sites: f64 = counts.iter().map(|&c| c as f64).product();
                    count.map_or(sites, |c| sites.min(f64::from(c)))
                },
                format!("particles[{g}].counts"),
            ),
            ParticleGroup::Random { count, .. } => (*count as f64, format!("particles[{g}].count")),
            ParticleGroup::File { .. } => (0.0, format!("particles[{g}]")),
        })
        .collect();
    let total: f64 = asked.iter().map(|(n, _)| n).sum();
    if let Some((_, field)) = asked.iter().max_by(|a, b| a.0.total_cmp(&b.0)) {
        crate::guard::check_memory(
            file,
            field,
            total * crate::guard::BYTES_PER_SPHERE as f64,
            &format!("{total:.3e} spheres in all"),
        )?;
    }
    Ok(())
}

/// Every particle group's spheres, in order, each group's range of stable ids, and each
/// sphere's id in its packing file (`Simulation::source_id`: −1 where generated, empty where no
/// group reads a file).
#[allow(clippy::type_complexity)]
fn build_particles(
    v: &Validator,
    config: &SceneConfig,
    reader: &dyn crate::packing::PackingReader,
    materials: &[Material],
    walls: &[Wall],
    lookup: &dyn Fn(String, &str) -> Result<usize>,
) -> Result<(Particles, Vec<std::ops::Range<usize>>, Vec<i64>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(config.simulation.seed);
    let mut particles = Particles::default();
    let mut source_id = Vec::new();
    let mut group_ranges = Vec::with_capacity(config.particles.len());
    // Density of material `m`, which a group of `field` uses.
    let density_of = |m: usize, field: &str| {
        materials[m].density.ok_or_else(|| {
            v.err(
                &format!("materials[{m}].density"),
                format!(
                    "material \"{}\" is used by {field} but has no density; add `density = ...` in kg/m³",
                    materials[m].name
                ),
            )
        })
    };
    for (g, group) in config.particles.iter().enumerate() {
        let field = format!("particles[{g}]");
        let start = particles.len();
        match group {
            ParticleGroup::File { .. } => {
                // Absolute since `pin_packing_files`.
                add_file_group(
                    v,
                    &field,
                    group,
                    &reader.read(Path::new(group_path(group)), group_format(group))?,
                    walls,
                    &materials.iter().map(|m| m.name.clone()).collect::<Vec<_>>(),
                    lookup,
                    &density_of,
                    &mut particles,
                    &mut source_id,
                )?;
            }
            ParticleGroup::Explicit { material, .. }
            | ParticleGroup::Lattice { material, .. }
            | ParticleGroup::Random { material, .. } => {
                let m = lookup(format!("{field}.material"), material)?;
                add_group(
                    v,
                    &field,
                    group,
                    m,
                    density_of(m, &field)?,
                    walls,
                    &mut rng,
                    &mut particles,
                )?;
            }
        }
        group_ranges.push(start..particles.len());
    }
    if !source_id.is_empty() {
        source_id.resize(particles.len(), -1);
    }
    Ok((particles, group_ranges, source_id))
}

/// Each wall's velocity schedule, where it has one.
fn build_wall_schedules(
    v: &Validator,
    configs: &[WallConfig],
) -> Result<Vec<Option<crate::loads::Schedule>>> {
    configs
        .iter()
        .enumerate()
        .map(|(k, w)| {
            let (schedule, velocity) = match w {
                WallConfig::Plane {
                    velocity_schedule,
                    velocity,
                    ..
                }
                | WallConfig::Plate {
                    velocity_schedule,
                    velocity,
                    ..
                } => (velocity_schedule, velocity),
            };
            if schedule.is_some() && *velocity != [0.0; 3] {
                return Err(v.err(
                    &format!("walls[{k}].velocity"),
                    format!(
                        "{velocity:?} is given with walls[{k}].velocity_schedule, which sets the velocity at every time; give one of them"
                    ),
                ));
            }
            schedule
                .as_ref()
                .map(|s| {
                    s.schedule()
                        .map_err(|m| v.err(&format!("walls[{k}].velocity_schedule"), m))
                })
                .transpose()
        })
        .collect()
}

/// The material-pair table (`n_mat × n_mat`, row-major): the scene's spring–dashpot for every
/// pair, then the models and rolling resistance of `[[contact.pairs]]`.
fn build_pair_params(
    v: &Validator,
    config: &SceneConfig,
    materials: &[Material],
    walls: &[Wall],
    particles: &Particles,
    lookup: &dyn Fn(String, &str) -> Result<usize>,
) -> Result<Vec<PairParams>> {
    let law = config.contact.law;
    if config.contact.damping == Damping::Tsuji {
        if law == ContactLaw::Hooke {
            return Err(v.err(
                "contact.damping",
                "\"tsuji\" is a dashpot for the hertz law; the hooke law's dashpot already gives one restitution at every impact speed: remove damping or use law = \"hertz\"".to_owned(),
            ));
        }
        if let Some(m) = materials
            .iter()
            .find(|m| matches!(m.stiffness, Stiffness::Direct { .. }))
        {
            return Err(v.err(
                "contact.damping",
                format!(
                    "\"tsuji\" derives the dashpot from a restitution coefficient, but material \"{}\" gives gamma_n and gamma_t directly: give it young_modulus, poisson_ratio and restitution, or remove damping",
                    m.name
                ),
            ));
        }
    }
    let v_char = config.contact.characteristic_velocity;
    let mut pair_params = Vec::with_capacity(materials.len() * materials.len());
    for a in materials {
        for b in materials {
            // Mixed kinds were refused by `Validator::materials`.
            let p = PairParams::new(law, config.contact.damping, a, b, v_char)
                .ok_or_else(|| v.err("materials", "mixed stiffness kinds".to_owned()))?;
            pair_params.push(p);
        }
    }
    let wall_material_set: HashSet<usize> = walls.iter().map(|w| w.material).collect();
    let particle_material_set: HashSet<usize> = particles.material.iter().copied().collect();
    v.pair_models(
        &config.contact.pairs,
        materials,
        lookup,
        &wall_material_set,
        &particle_material_set,
        &mut pair_params,
    )?;
    Ok(pair_params)
}

/// The moisture events of `[[contact.moisture]]`, for scenes with hill pairs.
fn build_moisture_events(
    v: &Validator,
    config: &SceneConfig,
    pair_params: &[PairParams],
    particles: &Particles,
) -> Result<Vec<MoistureEvent>> {
    let any_hill = pair_params
        .iter()
        .any(|p| matches!(p.model(), PairModel::Hill { .. }));
    let r_max = particles.radius.iter().copied().fold(0.0, f64::max);
    let mut moisture_events = Vec::new();
    for (k, e) in config.contact.moisture.iter().enumerate() {
        let f = |name: &str| format!("contact.moisture[{k}].{name}");
        if !any_hill {
            return Err(v.err(
                &f("action"),
                "moisture acts on hill contacts only; give some pair model = \"hill\" under [[contact.pairs]]".to_owned(),
            ));
        }
        if !(e.time.is_finite() && e.time >= 0.0) {
            return Err(v.err(&f("time"), format!("{} must be ≥ 0 (in s)", e.time)));
        }
        if !(e.gap.is_finite() && e.gap >= 0.0 && e.gap <= 2.0 * r_max) {
            return Err(v.err(
                &f("gap"),
                format!(
                    "{} must lie in [0, {:.3e}] m: a liquid bridge ruptures beyond 2 s_cr ≤ 2 R_max (memo Eq. 12)",
                    e.gap,
                    2.0 * r_max
                ),
            ));
        }
        moisture_events.push(MoistureEvent {
            time: e.time,
            wet: e.action == MoistureAction::Wet,
            gap: e.gap,
        });
    }
    Ok(moisture_events)
}

/// The time step of a scene and where it came from (s).
struct TimeStep {
    dt: f64,
    critical_dt: f64,
    max_dt: f64,
}

/// The time step: `simulation.dt` checked against `safety_factor × Δt_crit`, or that limit;
/// then the step count against the ceiling. `pair_params` is `n_mat × n_mat`, row-major.
fn time_step(
    v: &Validator,
    config: &SceneConfig,
    particles: &Particles,
    walls: &[Wall],
    pair_params: &[PairParams],
    n_mat: usize,
) -> Result<TimeStep> {
    let s = &config.simulation;
    let mut smallest: Vec<(usize, f64, f64)> = Vec::new();
    for i in 0..particles.len() {
        let (m, r, mass) = (
            particles.material[i],
            particles.radius[i],
            particles.mass[i],
        );
        match smallest.iter_mut().find(|e| e.0 == m) {
            Some(e) if r < e.1 => *e = (m, r, mass),
            Some(_) => {}
            None => smallest.push((m, r, mass)),
        }
    }
    let wall_materials: Vec<usize> = walls
        .iter()
        .map(|w| w.material)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let critical_dt = critical_time_step(config.contact.law, &smallest, &wall_materials, |a, b| {
        pair_params[a * n_mat + b]
    });
    let max_dt = s.safety_factor * critical_dt;
    let dt = match s.dt {
        Some(dt) => {
            v.positive("simulation.dt", dt, "s")?;
            if dt > max_dt {
                return Err(v.err(
                    "simulation.dt",
                    format!(
                        "{dt:e} s is above the stable limit {max_dt:.3e} s (safety_factor {} × critical time step {critical_dt:.3e} s); set dt ≤ {max_dt:.3e} or remove it to use that limit",
                        s.safety_factor
                    ),
                ));
            }
            if !divides(dt, s.output_interval) {
                log::warn!(
                    "simulation.dt {dt:e} s does not divide simulation.output_interval {} s: rows fall every {} steps ({} s); remove dt (a step that divides the interval is then chosen) or give one that divides it",
                    s.output_interval,
                    steps_per_output(s.output_interval, dt),
                    steps_per_output(s.output_interval, dt) as f64 * dt
                );
            }
            dt
        }
        None if critical_dt.is_finite() => {
            let dt = dividing_step(s.output_interval, max_dt);
            if s.output_interval < max_dt {
                log::warn!(
                    "simulation.output_interval {} s is below the stable time step {max_dt:.3e} s: steps of {dt:e} s are taken so that a row falls at each interval ({:.3} times as many steps); raise output_interval unless that is meant",
                    s.output_interval,
                    max_dt / dt
                );
            }
            dt
        }
        None => {
            return Err(v.err(
                "simulation.dt",
                "no contact can form in this scene, so no time step can be estimated; give dt in seconds".to_owned(),
            ));
        }
    };
    crate::guard::check_steps(
        v.file,
        "simulation.dt",
        s.duration,
        dt,
        &format!(
            "the critical time step {critical_dt:.3e} s comes from the smallest sphere's mass and the stiffest contact: check the materials' density and young_modulus (or dt, or duration)"
        ),
    )?;
    Ok(TimeStep {
        dt,
        critical_dt,
        max_dt,
    })
}

/// The largest step at or below `max_dt` that divides `interval` a whole number of times, so
/// that output rows fall on whole multiples of the output interval (`interval / k` with
/// `k = ⌈interval / max_dt⌉`; at most `max_dt`, and within a factor `k / (k − 1)` of it).
/// Where `k` would exceed the step ceiling (`guard::MAX_STEPS`), `max_dt` is kept and the
/// ceiling's check refuses the scene.
pub(crate) fn dividing_step(interval: f64, max_dt: f64) -> f64 {
    let k = (interval / max_dt).ceil().max(1.0);
    if k.is_nan() || k > crate::guard::MAX_STEPS {
        return max_dt;
    }
    let dt = interval / k;
    // `interval / k` may round a hair above `max_dt` when `k = interval / max_dt` exactly.
    if dt > max_dt { max_dt } else { dt }
}

/// Steps between two outputs `interval` apart.
pub fn steps_per_output(interval: f64, dt: f64) -> u64 {
    ((interval / dt).round() as u64).max(1)
}

/// Whether `interval` is a whole number of steps `dt` (to 10⁻⁹ of a step).
fn divides(dt: f64, interval: f64) -> bool {
    let k = interval / dt;
    (k - k.round()).abs() <= 1e-9 * k.max(1.0)
}

pub(super) fn known(materials: &[Material]) -> String {
    materials
        .iter()
        .map(|m| format!("\"{}\"", m.name))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn build_walls(
    v: &Validator,
    configs: &[WallConfig],
    lookup: &dyn Fn(String, &str) -> Result<usize>,
) -> Result<Vec<Wall>> {
    let mut walls = Vec::with_capacity(configs.len());
    let mut seen = HashSet::new();
    for (k, w) in configs.iter().enumerate() {
        let field = format!("walls[{k}]");
        let (name, material, velocity, shape) = match w {
            WallConfig::Plane {
                name,
                material,
                point,
                normal,
                velocity,
                ..
            } => {
                v.finite3(&format!("{field}.point"), *point)?;
                let normal = v.unit(&format!("{field}.normal"), *normal)?;
                let shape = WallShape::Plane {
                    point: DVec3::from_array(*point),
                    normal,
                };
                (name, material, velocity, shape)
            }
            WallConfig::Plate {
                name,
                material,
                center,
                normal,
                u_axis,
                half_extents,
                velocity,
                ..
            } => {
                v.finite3(&format!("{field}.center"), *center)?;
                let normal = v.unit(&format!("{field}.normal"), *normal)?;
                let u = v.unit(&format!("{field}.u_axis"), *u_axis)?;
                if normal.dot(u).abs() > 1e-9 {
                    return Err(v.err(
                        &format!("{field}.u_axis"),
                        "is not orthogonal to `normal`; give an in-plane direction".to_owned(),
                    ));
                }
                v.positive(&format!("{field}.half_extents[0]"), half_extents[0], "m")?;
                v.positive(&format!("{field}.half_extents[1]"), half_extents[1], "m")?;
                let shape = WallShape::Plate {
                    center: DVec3::from_array(*center),
                    normal,
                    u_axis: u,
                    half_extents: *half_extents,
                };
                (name, material, velocity, shape)
            }
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(v.err(
                &format!("{field}.name"),
                format!(
                    "\"{name}\" must be non-empty letters, digits or '_' (it names CSV columns)"
                ),
            ));
        }
        if !seen.insert(name.clone()) {
            return Err(v.err(
                &format!("{field}.name"),
                format!("\"{name}\" is used by another wall; wall names must be unique"),
            ));
        }
        v.finite3(&format!("{field}.velocity"), *velocity)?;
        let material = lookup(format!("{field}.material"), material)?;
        walls.push(Wall {
            name: name.clone(),
            shape,
            velocity: DVec3::from_array(*velocity),
            material,
            force: DVec3::ZERO,
            torque: DVec3::ZERO,
        });
    }
    Ok(walls)
}

/// `[[loads]]` as drives and, per particle, the index of its drive.
#[allow(clippy::type_complexity)]
fn build_loads(
    v: &Validator,
    configs: &[crate::loads::LoadConfig],
    groups: &[std::ops::Range<usize>],
    n: usize,
) -> Result<(Vec<crate::loads::Drive>, Vec<Option<u32>>)> {
    use crate::loads::{Dof, Drive};
    let mut drives = Vec::with_capacity(configs.len());
    let mut drive_of: Vec<Option<u32>> = if configs.is_empty() {
        Vec::new()
    } else {
        vec![None; n]
    };
    for (k, c) in configs.iter().enumerate() {
        let f = |name: &str| format!("loads[{k}].{name}");
        let ids: Vec<usize> = match (&c.group, c.particles.is_empty()) {
            (Some(g), true) => groups
                .get(*g)
                .ok_or_else(|| {
                    v.err(
                        &f("group"),
                        format!(
                            "{g} is not a [[particles]] group; the scene has {} (indices from 0)",
                            groups.len()
                        ),
                    )
                })?
                .clone()
                .collect(),
            (None, false) => c.particles.iter().map(|&i| i as usize).collect(),
            _ => {
                return Err(v.err(
                    &f("particles"),
                    "give either `particles` (stable ids) or `group`, not both or neither"
                        .to_owned(),
                ));
            }
        };
        let schedule = |name: &str, c: &Option<crate::loads::VectorConfig>| {
            c.as_ref()
                .map(|c| c.schedule().map_err(|m| v.err(&f(name), m)))
                .transpose()
        };
        let mut lock = [false; 6];
        for dof in &c.lock {
            lock[match dof {
                Dof::X => 0,
                Dof::Y => 1,
                Dof::Z => 2,
                Dof::Rx => 3,
                Dof::Ry => 4,
                Dof::Rz => 5,
            }] = true;
        }
        let drive = Drive {
            force: schedule("force", &c.force)?,
            torque: schedule("torque", &c.torque)?,
            velocity: schedule("velocity", &c.velocity)?,
            angular_velocity: schedule("angular_velocity", &c.angular_velocity)?,
            lock,
        };
        // A prescribed velocity sets every component it has: a lock on one of them would
        // silently win over it.
        for (prescribed, name, dofs) in [
            (
                drive.velocity.is_some(),
                "velocity",
                [("x", 0), ("y", 1), ("z", 2)],
            ),
            (
                drive.angular_velocity.is_some(),
                "angular_velocity",
                [("rx", 3), ("ry", 4), ("rz", 5)],
            ),
        ] {
            let locked: Vec<&str> = dofs
                .iter()
                .filter(|&&(_, d)| prescribed && lock[d])
                .map(|&(n, _)| n)
                .collect();
            if !locked.is_empty() {
                return Err(v.err(
                    &f("lock"),
                    format!(
                        "locks {} of the prescribed {name} (loads[{k}].{name}), which sets those components; give the zero component in {name} instead of a lock",
                        locked.join(", ")
                    ),
                ));
            }
        }
        if drive == Drive::default() {
            return Err(v.err(
                &f("force"),
                "the load does nothing; give force, torque, velocity, angular_velocity or lock"
                    .to_owned(),
            ));
        }
        for &i in &ids {
            let slot = drive_of.get_mut(i).ok_or_else(|| {
                v.err(
                    &f("particles"),
                    format!("particle {i} does not exist; the scene has {n} (ids from 0)"),
                )
            })?;
            if let Some(other) = slot {
                return Err(v.err(
                    &f("particles"),
                    format!(
                        "particle {i} is already driven by loads[{other}]; one load per particle"
                    ),
                ));
            }
            *slot = Some(k as u32);
        }
        drives.push(drive);
    }
    Ok((drives, drive_of))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chosen step divides the interval, stays at or below the stable one and within a
    /// factor k/(k−1) of it; at f64's extremes (k beyond the step ceiling, or infinite) the
    /// stable step is kept for the ceiling's check to refuse, never 0 or NaN.
    #[test]
    fn the_step_divides_the_output_interval() {
        for (interval, max_dt) in [
            (0.05, 3.3e-6),
            (0.01, 1e-5),
            (1e-3, 7.77e-7),
            (0.3, 0.1),
            (1e-7, 1e-5),
        ] {
            let dt = dividing_step(interval, max_dt);
            let k = steps_per_output(interval, dt);
            assert!(dt <= max_dt, "{dt} above {max_dt}");
            assert!(divides(dt, interval), "{interval} / {dt}");
            assert!(
                k == 1 || dt >= max_dt * (k - 1) as f64 / k as f64,
                "{dt} needlessly small beside {max_dt} (k {k})"
            );
        }
        assert_eq!(dividing_step(1e300, 1e-300), 1e-300);
        assert_eq!(
            dividing_step(f64::MAX, f64::MIN_POSITIVE),
            f64::MIN_POSITIVE
        );
        assert_eq!(dividing_step(1e12, 0.5), 0.5);
        assert!(!divides(1e-5 * 1.000001, 0.01));
        assert!(divides(0.01 / 3.0, 0.01));
    }

    /// Times print as the decimals of whole multiples of the interval (3 × 0.1 is
    /// 0.30000000000000004 in f64), and consecutive steps stay apart to 10¹¹ steps.
    #[test]
    fn step_times_print_round() {
        let dt = dividing_step(0.1, 3e-3);
        let k = steps_per_output(0.1, dt);
        for j in 0..50u64 {
            let t = crate::cpu::step_time(j * k, dt);
            assert_eq!(t, j as f64 / 10.0);
        }
        let dt = 1e-6;
        let n = 99_999_999_999u64;
        assert!(crate::cpu::step_time(n + 1, dt) > crate::cpu::step_time(n, dt));
        assert_eq!(crate::cpu::step_time(0, dt), 0.0);
        assert_eq!(crate::cpu::step_time(u64::MAX, f64::MAX), f64::INFINITY);
    }
}
