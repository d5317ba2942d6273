//! What a ParaView snapshot shows of a state: every contact (pair and wall) with its forces,
//! and the per-particle stress, computed the same way whichever backend took the steps.
//!
//! A contact's forces are its model evaluated at the state with the stored history and no
//! relative motion: the springs' force (normal and tangential, Coulomb-limited), without the
//! dashpots, which depend on the step's relative velocity. For the linear and hill models the
//! stored tangential force is returned as it is. The backend hands over the histories
//! ([`crate::backend::Backend::contact_histories`]): the CPU reference from its neighbour
//! list, the GPU engine from its slots (in f32).

use std::path::Path;

use glam::{DMat3, DQuat, DVec3};
use serde::{Deserialize, Serialize};

use crate::analysis::touching_in;
use crate::backend::Backend;
use crate::contact::RelativeMotion;
use crate::contact::model::{ContactKind, Kinematics, SlotHistory, evaluate};
use crate::cpu::Simulation;
use crate::error::Result;

pub use crate::cpu::ContactHistories;

/// Body A of a contact: another particle or a wall. Body B is always a particle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BodyA {
    /// A particle (stable id), the smaller id of the pair.
    Particle(u32),
    /// A wall (index in the scene).
    Wall(u32),
}

/// One touching contact of a snapshot (SI units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactRecord {
    /// Body A.
    pub a: BodyA,
    /// Body B (particle stable id).
    pub b: u32,
    /// Contact point: the middle of the overlap (m).
    pub point: DVec3,
    /// Unit normal from A to B.
    pub normal: DVec3,
    /// Overlap δ (m).
    pub overlap: f64,
    /// Normal force on B (N).
    pub normal_force: DVec3,
    /// Tangential force on B (N); NaN where the history could not be read.
    pub tangential_force: DVec3,
    /// At the Coulomb limit, `|F_t| ≥ μ |F_n| (1 − 10⁻⁶)`.
    pub sliding: bool,
    /// The branch: A's centre (the contact point for a wall) to B's centre (m).
    pub branch: (DVec3, DVec3),
}

impl ContactRecord {
    /// Total force on B (N).
    pub fn force(&self) -> DVec3 {
        self.normal_force + self.tangential_force
    }
}

/// Every touching contact of `sim` (pairs by stable ids, then walls in scene order), with the
/// forces its model gives at this state from `histories`.
pub fn contacts(sim: &Simulation, histories: &ContactHistories) -> Vec<ContactRecord> {
    let p = &sim.particles;
    let at_rest = |overlap: f64, normal: DVec3| Kinematics {
        overlap,
        normal,
        motion: RelativeMotion {
            velocity: DVec3::ZERO,
            displacement: DVec3::ZERO,
        },
        twirl: 0.0,
        spin: DVec3::ZERO,
        rotation: DVec3::ZERO,
    };
    let record = |a: BodyA,
                  b: usize,
                  kind: &ContactKind,
                  history: Option<&SlotHistory>,
                  overlap: f64,
                  normal: DVec3,
                  a_end: DVec3| {
        let point = p.position[b] - normal * (p.radius[b] - 0.5 * overlap);
        let mut h = history.cloned().unwrap_or_else(|| SlotHistory::fresh(kind));
        let e = evaluate(sim.model, kind, &mut h, &at_rest(overlap, normal));
        let force = e.map_or(DVec3::ZERO, |e| e.force);
        let normal_force = normal * force.dot(normal);
        let tangential_force = force - normal_force;
        let mu = friction(kind);
        ContactRecord {
            a,
            b: b as u32,
            point,
            normal,
            overlap,
            normal_force,
            tangential_force,
            sliding: e.is_some_and(|e| e.sliding)
                || tangential_force.length() >= mu * normal_force.length() * (1.0 - 1e-6),
            branch: (a_end, p.position[b]),
        }
    };
    let mut out = Vec::new();
    for c in touching_in(p, sim.cell()) {
        let (i, j) = (c.i as usize, c.j as usize);
        // In a periodic cell the branch runs from `i`'s image next to `j`.
        let a_end = match sim.cell() {
            Some(cell) => p.position[j] - cell.nearest_image(p.position[j] - p.position[i]),
            None => p.position[i],
        };
        let kind = sim.pair_kind(i, j);
        let history = histories.pairs.get(&(c.i, c.j));
        let unreadable = history.is_none() && histories.unreadable > 0;
        let mut r = record(
            BodyA::Particle(c.i),
            j,
            &kind,
            history,
            c.overlap,
            c.normal,
            a_end,
        );
        if unreadable && matches!(kind, ContactKind::Jager(_)) {
            r.tangential_force = DVec3::NAN;
            r.sliding = false;
        }
        out.push(r);
    }
    for (w, wall) in sim.walls.iter().enumerate() {
        for i in 0..p.len() {
            let Some(c) = wall.contact(p.position[i], p.radius[i]) else {
                continue;
            };
            let kind = sim.wall_kind(w, i);
            let point = p.position[i] - c.normal * (p.radius[i] - 0.5 * c.overlap);
            out.push(record(
                BodyA::Wall(w as u32),
                i,
                &kind,
                histories.walls.get(&(w as u32, i as u32)),
                c.overlap,
                c.normal,
                point,
            ));
        }
    }
    out
}

/// Coulomb friction coefficient of a contact model.
fn friction(kind: &ContactKind) -> f64 {
    match kind {
        ContactKind::Spring(p) => p.friction,
        ContactKind::Linear(p) => p.friction,
        ContactKind::Hill(p) => p.friction,
        ContactKind::Jager(p) => p.friction,
    }
}

/// The average stress in each particle, `σ = (1/V) Σ_c f_c ⊗ r_c` over its contacts, with
/// `f_c` the force on the particle and `r_c` the vector from its centre to the contact point
/// (Pa; tension positive, so a compressed grain has negative normal stresses). The tensor is
/// symmetric when the particle's contact moments balance.
pub fn particle_stress(sim: &Simulation, contacts: &[ContactRecord]) -> Vec<DMat3> {
    let p = &sim.particles;
    let mut sum = vec![DMat3::ZERO; p.len()];
    let outer = |f: DVec3, r: DVec3| DMat3::from_cols(f * r.x, f * r.y, f * r.z);
    for c in contacts {
        let b = c.b as usize;
        let f = c.force();
        sum[b] += outer(f, c.point - p.position[b]);
        if let BodyA::Particle(a) = c.a {
            // A's centre, or its image next to B in a periodic cell.
            sum[a as usize] += outer(-f, c.point - c.branch.0);
        }
    }
    sum.iter()
        .zip(&p.radius)
        .map(|(s, r)| *s * (1.0 / (4.0 / 3.0 * std::f64::consts::PI * r.powi(3))))
        .collect()
}

/// The mean stress in the axis-aligned box `lo`–`hi` (Pa), Love–Weber over the spheres whose
/// centres lie inside: `σ = −(1/V) Σ_p Σ_c f_c ⊗ r_c` with `V` the box's volume and `f_c`,
/// `r_c` as in [`particle_stress`]; compression positive (the soil-mechanics sign of
/// `shear.csv`, opposite to [`particle_stress`]'s).
pub fn box_stress(sim: &Simulation, contacts: &[ContactRecord], lo: DVec3, hi: DVec3) -> DMat3 {
    let p = &sim.particles;
    let inside = |i: usize| p.position[i].cmpge(lo).all() && p.position[i].cmplt(hi).all();
    let stress = particle_stress(sim, contacts);
    let mut sum = DMat3::ZERO;
    for (i, s) in stress.iter().enumerate().filter(|&(i, _)| inside(i)) {
        sum += *s * (4.0 / 3.0 * std::f64::consts::PI * p.radius[i].powi(3));
    }
    let v = (hi - lo).x * (hi - lo).y * (hi - lo).z;
    sum * (-1.0 / v)
}

/// Touching contacts per particle (pairs and walls).
pub fn contact_counts(n: usize, contacts: &[ContactRecord]) -> Vec<u32> {
    let mut counts = vec![0u32; n];
    for c in contacts {
        counts[c.b as usize] += 1;
        if let BodyA::Particle(a) = c.a {
            counts[a as usize] += 1;
        }
    }
    counts
}

/// A particle array a snapshot can carry (`[output] particle_fields`; all by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParticleField {
    /// `id`: stable id (the scene's index).
    Id,
    /// `radius_m`.
    Radius,
    /// `material`: material index (the names head the file in a comment).
    Material,
    /// `velocity_m_s`.
    Velocity,
    /// `angular_velocity_rad_s`.
    AngularVelocity,
    /// `force_N`: total force of the last step (contacts, gravity).
    Force,
    /// `torque_N_m`: total torque of the last step about the centre.
    Torque,
    /// `displacement_m`: from the reference positions.
    Displacement,
    /// `rotation_angle_rad`: angle of the rotation from the reference orientations.
    Rotation,
    /// `contact_count`: touching contacts, pairs and walls.
    ContactCount,
    /// `stress_Pa`: the particle's average stress tensor, [`particle_stress`].
    Stress,
    /// `source_id`: the sphere's id in the packing file it came from (a LAMMPS atom id), −1
    /// for a sphere the scene generated.
    SourceId,
}

impl ParticleField {
    /// Every field, in the order the files carry them.
    pub const ALL: [ParticleField; 12] = [
        ParticleField::Id,
        ParticleField::Radius,
        ParticleField::Material,
        ParticleField::Velocity,
        ParticleField::AngularVelocity,
        ParticleField::Force,
        ParticleField::Torque,
        ParticleField::Displacement,
        ParticleField::Rotation,
        ParticleField::ContactCount,
        ParticleField::Stress,
        ParticleField::SourceId,
    ];
}

fn all_fields() -> Vec<ParticleField> {
    ParticleField::ALL.to_vec()
}
fn yes() -> bool {
    true
}

/// What the ParaView snapshots carry (`[output]` of a scene or a shear file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VtkContent {
    /// Particle arrays to write (default: all of [`ParticleField::ALL`]).
    #[serde(default = "all_fields")]
    pub particle_fields: Vec<ParticleField>,
    /// Write the contact network (`contacts_NNNN.vtu`; default true).
    #[serde(default = "yes")]
    pub contacts: bool,
    /// Write the walls and the periodic cell as geometry (`walls_NNNN.vtu`, `cell_NNNN.vtu`;
    /// default true).
    #[serde(default = "yes")]
    pub walls: bool,
}

impl Default for VtkContent {
    fn default() -> Self {
        Self {
            particle_fields: all_fields(),
            contacts: true,
            walls: true,
        }
    }
}

/// The files of one snapshot, relative to the output directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Steps taken.
    pub step: u64,
    /// Simulated time, `step × dt` (s).
    pub time: f64,
    /// Particles (`.vtu`).
    pub particles: String,
    /// Contacts (`.vtu`), if written.
    pub contacts: Option<String>,
    /// Walls (`.vtu`), if written.
    pub walls: Option<String>,
    /// The periodic cell (`.vtu`), if written.
    pub cell: Option<String>,
}

/// A state to write as a snapshot.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// The state (particles' forces and torques of the last step included).
    pub sim: &'a Simulation,
    /// Positions and orientations displacement and rotation are measured from.
    pub reference: (&'a [DVec3], &'a [DQuat]),
    /// The touching contacts ([`contacts`]).
    pub contacts: &'a [ContactRecord],
    /// Material names, by index.
    pub material_names: &'a [String],
    /// What to write.
    pub content: &'a VtkContent,
}

/// Writes snapshots (VTK in `wgdem-io`; core declares the interface and depends on no file
/// format crate).
pub trait SnapshotWriter {
    /// Writes the files `files` names (under `out`) for `frame`, each atomically.
    fn snapshot(&self, out: &Path, files: &Snapshot, frame: &Frame<'_>) -> Result<()>;
    /// Writes the collection `path` (a `.pvd`) indexing `snapshots` (paths relative to `out`,
    /// the directory of `path`'s parent being `out/vtk`).
    fn collection(&self, path: &Path, snapshots: &[Snapshot]) -> Result<()>;
}

/// A series of snapshots in `out/vtk/`, indexed by `out/vtk/<name>.pvd`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Collection name (`run`, `shear`).
    pub name: String,
    /// Snapshots written so far.
    pub snapshots: Vec<Snapshot>,
}

impl Series {
    /// An empty series named `name`.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            snapshots: Vec::new(),
        }
    }

    /// Writes snapshot number `len()` of `sim`: asks `backend` for the particles' forces and
    /// the contact histories, evaluates the contacts, writes the files and rewrites the
    /// collection.
    #[allow(clippy::too_many_arguments)]
    pub fn take(
        &mut self,
        writer: &dyn SnapshotWriter,
        out: &Path,
        sim: &mut Simulation,
        backend: &mut dyn Backend,
        reference: (&[DVec3], &[DQuat]),
        material_names: &[String],
        content: &VtkContent,
    ) -> Result<()> {
        let histories = backend.contact_histories(sim)?;
        if histories.unreadable > 0 {
            log::debug!(
                "{} contacts' histories are not read back from the engine; their tangential force is NaN in the snapshot",
                histories.unreadable
            );
        }
        let contacts = contacts(sim, &histories);
        let files = self.next_files(sim, content);
        let frame = Frame {
            sim,
            reference,
            contacts: &contacts,
            material_names,
            content,
        };
        writer.snapshot(out, &files, &frame)?;
        self.snapshots.push(files);
        self.write_collection(writer, out)
    }

    /// The files of the next snapshot (number `len()`) of `sim`, under `vtk/`.
    pub fn next_files(&self, sim: &Simulation, content: &VtkContent) -> Snapshot {
        let k = self.snapshots.len();
        Snapshot {
            step: sim.steps,
            time: crate::cpu::step_time(sim.steps, sim.dt),
            particles: format!("vtk/particles_{k:04}.vtu"),
            contacts: content.contacts.then(|| format!("vtk/contacts_{k:04}.vtu")),
            walls: (content.walls && !sim.walls.is_empty())
                .then(|| format!("vtk/walls_{k:04}.vtu")),
            cell: (content.walls && sim.cell().is_some()).then(|| format!("vtk/cell_{k:04}.vtu")),
        }
    }

    /// Rewrites `out/vtk/<name>.pvd`.
    pub fn write_collection(&self, writer: &dyn SnapshotWriter, out: &Path) -> Result<()> {
        writer.collection(
            &out.join("vtk").join(format!("{}.pvd", self.name)),
            &self.snapshots,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{SceneConfig, build_scene};

    /// Two spheres of radius R overlapping by δ along z with Hooke's law (f = 1), undamped and
    /// weightless, plus the lower one on a floor by the same δ: the snapshot holds the pair
    /// with F_n = k_n δ along +z on the upper sphere (Fleischmann Eq. 1) and the wall contact,
    /// and the upper sphere's stress is σ = (1/V) f ⊗ r with f = −F_n e_z and r = −(R − δ/2) e_z:
    /// σ_zz = −F_n (R − δ/2) / V, every other component zero (tension positive).
    #[test]
    fn two_spheres_stress_and_contacts() {
        let (r, delta, kn) = (0.001, 1e-6, 1e6);
        let text = format!(
            r#"
            [simulation]
            duration = 1e-3
            output_interval = 1e-3
            dt = 1e-7
            gravity = [0.0, 0.0, 0.0]
            [contact]
            law = "hooke"
            history = "true"
            [[materials]]
            name = "m"
            density = 2500.0
            friction = 0.5
            kn = {kn}
            kt = {kn}
            gamma_n = 0.0
            gamma_t = 0.0
            [[particles]]
            kind = "explicit"
            material = "m"
            spheres = [
                {{ position = [0.0, 0.0, {z0}], radius = {r} }},
                {{ position = [0.0, 0.0, {z1}], radius = {r} }},
            ]
            [[walls]]
            kind = "plane"
            name = "floor"
            material = "m"
            point = [0.0, 0.0, 0.0]
            normal = [0.0, 0.0, 1.0]
            "#,
            z0 = r - delta,
            z1 = 2.0 * r - delta + r - delta,
        );
        let config = SceneConfig::parse(&text, "two.toml").expect("scene");
        let sim = build_scene(config, "two.toml").expect("build").simulation;
        let list = contacts(&sim, &sim.contact_histories());
        assert_eq!(list.len(), 2, "{list:?}");
        let pair = list
            .iter()
            .find(|c| c.a == BodyA::Particle(0))
            .expect("the pair");
        let f = kn * delta;
        assert!(
            (pair.normal_force - DVec3::Z * f).length() < 1e-9 * f,
            "{pair:?}"
        );
        assert_eq!(pair.tangential_force, DVec3::ZERO);
        assert!((pair.overlap - delta).abs() < 1e-15);
        assert!(!pair.sliding);
        let wall = list.iter().find(|c| c.a == BodyA::Wall(0)).expect("floor");
        assert_eq!(wall.b, 0);
        assert!((wall.normal_force.z - f).abs() < 1e-9 * f);
        let stress = particle_stress(&sim, &list);
        let volume = 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
        let want = -f * (r - 0.5 * delta) / volume;
        let s = stress[1];
        assert!(
            (s.z_axis.z - want).abs() < 1e-9 * want.abs(),
            "{s:?} vs {want}"
        );
        for (row, col) in [(0, 0), (1, 1), (0, 2), (2, 0), (1, 2)] {
            assert!(s.col(col)[row].abs() < 1e-9 * want.abs(), "{s:?}");
        }
        assert_eq!(contact_counts(2, &list), vec![2, 1]);
        // A box around the upper sphere: its stress moment over the box's volume, compression
        // positive; a box holding neither centre, nothing.
        let (lo, hi) = (DVec3::new(-r, -r, 2.0 * r), DVec3::new(r, r, 4.0 * r));
        let b = box_stress(&sim, &list, lo, hi);
        let box_want = f * (r - 0.5 * delta) / (8.0 * r.powi(3));
        assert!(
            (b.z_axis.z - box_want).abs() < 1e-9 * box_want,
            "{b:?} vs {box_want}"
        );
        let empty = box_stress(&sim, &list, hi, hi + DVec3::ONE);
        assert_eq!(empty, DMat3::ZERO);
    }
}
