//! Loads and constraints on particles, and wall velocity schedules: a force and a torque
//! applied to a particle, its velocity or angular velocity prescribed (driven kinematically),
//! components of its motion locked, each constant or piecewise linear in time. GPU twin:
//! `Drive` and `schedule_at` in `shaders/integrate.wgsl`.

use glam::DVec3;
use serde::{Deserialize, Serialize};

/// A vector that is piecewise linear in time: `values[k]` at `times[k]`, linear in between,
/// held before the first time and after the last. One point is a constant.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// Times, strictly increasing (s).
    pub times: Vec<f64>,
    /// Values at those times.
    pub values: Vec<DVec3>,
}

impl Schedule {
    /// A constant.
    pub fn constant(v: DVec3) -> Self {
        Self {
            times: vec![0.0],
            values: vec![v],
        }
    }

    /// The value at time `t`.
    pub fn at(&self, t: f64) -> DVec3 {
        let k = self.times.partition_point(|&x| x <= t);
        if k == 0 {
            return self.values[0];
        }
        if k == self.times.len() {
            return self.values[k - 1];
        }
        let (t0, t1) = (self.times[k - 1], self.times[k]);
        let s = (t - t0) / (t1 - t0);
        self.values[k - 1] + (self.values[k] - self.values[k - 1]) * s
    }
}

/// A component of a particle's motion that a load can lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dof {
    /// Translation along x.
    X,
    /// Translation along y.
    Y,
    /// Translation along z.
    Z,
    /// Rotation about x.
    Rx,
    /// Rotation about y.
    Ry,
    /// Rotation about z.
    Rz,
}

/// What acts on a driven particle besides its contacts and gravity.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Drive {
    /// Applied force (N).
    pub force: Option<Schedule>,
    /// Applied torque about the centre (N·m).
    pub torque: Option<Schedule>,
    /// Prescribed velocity (m/s): the particle moves so whatever the forces.
    pub velocity: Option<Schedule>,
    /// Prescribed angular velocity (rad/s).
    pub angular_velocity: Option<Schedule>,
    /// Locked components, in [`Dof`] order (x, y, z, rx, ry, rz): held at zero velocity.
    pub lock: [bool; 6],
}

impl Drive {
    /// The step's translational velocity from `v_old` and the total force `force` (applied
    /// force included) over `dt` for a particle of mass `mass`, at time `t`.
    pub fn velocity(&self, t: f64, v_old: DVec3, force: DVec3, mass: f64, dt: f64) -> DVec3 {
        let v = match &self.velocity {
            Some(s) => s.at(t),
            None => v_old + force / mass * dt,
        };
        lock(v, &self.lock[0..3])
    }

    /// Like [`Drive::velocity`] for the angular velocity; `inertia` infinite for a particle
    /// whose spin is fixed.
    pub fn angular_velocity(
        &self,
        t: f64,
        w_old: DVec3,
        torque: DVec3,
        inertia: f64,
        dt: f64,
    ) -> DVec3 {
        let w = match &self.angular_velocity {
            Some(s) => s.at(t),
            None => w_old + torque / inertia * dt,
        };
        lock(w, &self.lock[3..6])
    }

    /// What the dashpots' predictor (`v + a Δt/2`, `Simulation::compute_forces`) adds of the
    /// acceleration `a`: nothing along a component whose velocity the drive sets (prescribed
    /// or locked), which is then the velocity at t_n too. GPU twin: `integrate.wgsl`, which
    /// zeroes `accel` for the same components.
    pub fn predicted_acceleration(&self, a: DVec3) -> DVec3 {
        if self.velocity.is_some() {
            return DVec3::ZERO;
        }
        lock(a, &self.lock[0..3])
    }

    /// Like [`Drive::predicted_acceleration`] for the angular acceleration.
    pub fn predicted_angular_acceleration(&self, alpha: DVec3) -> DVec3 {
        if self.angular_velocity.is_some() {
            return DVec3::ZERO;
        }
        lock(alpha, &self.lock[3..6])
    }
}

fn lock(mut v: DVec3, locked: &[bool]) -> DVec3 {
    for (k, &l) in locked.iter().enumerate() {
        if l {
            v[k] = 0.0;
        }
    }
    v
}

/// A vector in a scene file: constant `[x, y, z]` or `{ times = [..], values = [[..], ..] }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum VectorConfig {
    /// The same at all times (three components; read as a list so that another count is
    /// refused by name rather than as no variant of this enum).
    Constant(Vec<f64>),
    /// Piecewise linear in time.
    Table {
        /// Times (s), strictly increasing.
        times: Vec<f64>,
        /// The vector at each time (three components each).
        values: Vec<Vec<f64>>,
    },
}

/// `v` as a vector, or what is wrong with its length (`what` names it).
fn three(v: &[f64], what: &str) -> Result<DVec3, String> {
    match v {
        &[x, y, z] => Ok(DVec3::new(x, y, z)),
        _ => Err(format!(
            "{what} has {} components; give three, [x, y, z]",
            v.len()
        )),
    }
}

impl VectorConfig {
    /// The schedule, or what is wrong with it.
    pub fn schedule(&self) -> Result<Schedule, String> {
        match self {
            VectorConfig::Constant(v) => {
                let v = three(v, "the vector")?;
                if v.is_finite() {
                    Ok(Schedule::constant(v))
                } else {
                    Err("has a non-finite component".to_owned())
                }
            }
            VectorConfig::Table { times, values } => {
                if times.is_empty() || times.len() != values.len() {
                    return Err(format!(
                        "needs as many `values` as `times`, at least one (it has {} times and {} values)",
                        times.len(),
                        values.len()
                    ));
                }
                let values = values
                    .iter()
                    .enumerate()
                    .map(|(k, v)| three(v, &format!("values[{k}]")))
                    .collect::<Result<Vec<DVec3>, String>>()?;
                if times.iter().any(|t| !t.is_finite()) || values.iter().any(|x| !x.is_finite()) {
                    return Err("has a non-finite time or value".to_owned());
                }
                if let Some(k) = times.windows(2).position(|w| w[1] <= w[0]) {
                    return Err(format!(
                        "times must increase strictly; times[{}] = {} follows {}",
                        k + 1,
                        times[k + 1],
                        times[k]
                    ));
                }
                Ok(Schedule {
                    times: times.clone(),
                    values,
                })
            }
        }
    }
}

/// `[[loads]]`: what acts on some particles besides their contacts and gravity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadConfig {
    /// The particles, by stable id (their order in the scene, from 0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub particles: Vec<u32>,
    /// Or every particle of the `[[particles]]` group of this index (from 0).
    pub group: Option<usize>,
    /// Applied force (N).
    pub force: Option<VectorConfig>,
    /// Applied torque about the centre (N·m).
    pub torque: Option<VectorConfig>,
    /// Prescribed velocity (m/s).
    pub velocity: Option<VectorConfig>,
    /// Prescribed angular velocity (rad/s).
    pub angular_velocity: Option<VectorConfig>,
    /// Components held at zero velocity: "x", "y", "z", "rx", "ry", "rz".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lock: Vec<Dof>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drive() -> Drive {
        Drive {
            force: None,
            torque: None,
            velocity: None,
            angular_velocity: None,
            lock: [false; 6],
        }
    }

    /// The predictor keeps the acceleration of a free component and drops it where the
    /// drive sets the velocity: every component of a prescribed velocity, a locked one alone.
    #[test]
    fn the_predictor_leaves_prescribed_and_locked_components_alone() {
        let a = DVec3::new(1.0, -2.0, 3.0);
        assert_eq!(drive().predicted_acceleration(a), a);
        assert_eq!(drive().predicted_angular_acceleration(a), a);
        let prescribed = Drive {
            velocity: Some(Schedule::constant(DVec3::X)),
            ..drive()
        };
        assert_eq!(prescribed.predicted_acceleration(a), DVec3::ZERO);
        assert_eq!(prescribed.predicted_angular_acceleration(a), a);
        let spun = Drive {
            angular_velocity: Some(Schedule::constant(DVec3::Z)),
            ..drive()
        };
        assert_eq!(spun.predicted_acceleration(a), a);
        assert_eq!(spun.predicted_angular_acceleration(a), DVec3::ZERO);
        let locked = Drive {
            lock: [false, false, true, true, false, false],
            ..drive()
        };
        assert_eq!(locked.predicted_acceleration(a), DVec3::new(1.0, -2.0, 0.0));
        assert_eq!(
            locked.predicted_angular_acceleration(a),
            DVec3::new(0.0, -2.0, 3.0)
        );
    }
}
