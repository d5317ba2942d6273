//! `Simulation.servo`: a wall held at a normal stress through the steps by the shear test's
//! servo (`wgdem_core::shear::Servo`), its gains from the shear test's stiffness estimate.

use glam::DVec3;
use pyo3::prelude::*;

use crate::errors::bad_argument;
use crate::session::Session;

/// A wall held at a normal stress by the shear test's servo (`wgdem_core::shear::Servo`):
/// the compressive force on it is `−F·n` (`n` its normal, towards the spheres), and it moves
/// along `−n` at the servo's speed (backing off when pushed too hard).
pub(crate) struct WallServo {
    pub(crate) wall: usize,
    normal: DVec3,
    gains: wgdem_core::shear::ServoGains,
    state: wgdem_core::shear::Servo,
}

impl WallServo {
    /// One control interval: the wall's new velocity from the force on it, if the servo acts.
    pub(crate) fn update(&mut self, force: DVec3) -> Option<(usize, DVec3)> {
        let pushed = -force.dot(self.normal);
        let v = self.state.update(&self.gains, pushed)?;
        Some((self.wall, -self.normal * v))
    }
}

/// The servo of wall `w` at `stress` over `area` (see `Simulation.servo`), its gains from the
/// shear test's stiffness estimate (`wgdem_core::shear::plate_stiffness`) for the spheres' most
/// common material, their mean radius and that material's density.
pub(crate) fn wall_servo(
    session: &Session,
    w: usize,
    stress: f64,
    area: Option<f64>,
    gain: f64,
    interval: u64,
) -> PyResult<WallServo> {
    use wgdem_core::wall::WallShape;
    let what = "Simulation.servo";
    let sim = &session.sim;
    let wall = &sim.walls[w];
    let (normal, own) = match wall.shape {
        WallShape::Plane { normal, .. } => (normal, None),
        WallShape::Plate {
            normal,
            half_extents,
            ..
        } => (normal, Some(4.0 * half_extents[0] * half_extents[1])),
    };
    let area = match (area, own) {
        (Some(a), _) => a,
        (None, Some(a)) => a,
        (None, None) => {
            return Err(bad_argument(
                what,
                "area",
                format!(
                    "wall \"{}\" is an infinite plane: give the area (m²) the stress acts on",
                    wall.name
                ),
            ));
        }
    };
    if !(area.is_finite() && area > 0.0) {
        return Err(bad_argument(
            what,
            "area",
            format!("{area} must be a positive area (m²)"),
        ));
    }
    if !(stress.is_finite() && stress > 0.0) {
        return Err(bad_argument(
            what,
            "stress",
            format!("{stress} must be a positive normal stress (Pa, compression positive)"),
        ));
    }
    if !(gain.is_finite() && gain > 0.0 && gain <= 1.0) {
        return Err(bad_argument(
            what,
            "gain",
            format!("{gain} is outside (0, 1]; 0.5 is the shear test's"),
        ));
    }
    let p = &sim.particles;
    if p.is_empty() {
        return Err(bad_argument(
            what,
            "wall",
            "the scene has no spheres to push on",
        ));
    }
    let mut counts = vec![0usize; sim.n_materials()];
    for &m in &p.material {
        counts[m] += 1;
    }
    let material = (0..counts.len()).max_by_key(|&m| counts[m]).unwrap_or(0);
    let (mut mass, mut volume) = (0.0, 0.0);
    for i in (0..p.len()).filter(|&i| p.material[i] == material) {
        mass += p.mass[i];
        volume += 4.0 / 3.0 * std::f64::consts::PI * p.radius[i].powi(3);
    }
    let radius = p.radius.iter().sum::<f64>() / p.len() as f64;
    let stiffness = wgdem_core::shear::plate_stiffness(
        sim.model.law,
        sim.pair(wall.material, material),
        radius,
        mass / volume,
        area,
        stress,
    );
    let period = interval as f64 * sim.dt;
    Ok(WallServo {
        wall: w,
        normal,
        gains: wgdem_core::shear::ServoGains {
            gain: gain / (stiffness * period),
            integral: 0.05,
            target: stress * area,
            v_max: 0.01 * 2.0 * radius / period,
        },
        state: wgdem_core::shear::Servo {
            active: true,
            ..Default::default()
        },
    })
}
