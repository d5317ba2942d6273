//! Particle state of the CPU reference, structure-of-arrays in f64.
//!
//! A particle's index is its stable id: the CPU reference never reorders particles, so the id
//! keys contact history and output rows.

use glam::{DQuat, DVec3};
use serde::{Deserialize, Serialize};

/// All spheres of a scene.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Particles {
    /// Centre positions (m).
    pub position: Vec<DVec3>,
    /// Translational velocities (m/s).
    pub velocity: Vec<DVec3>,
    /// Angular velocities (rad/s).
    pub angular_velocity: Vec<DVec3>,
    /// Orientations (unit quaternions, body to world).
    pub orientation: Vec<DQuat>,
    /// Radii (m).
    pub radius: Vec<f64>,
    /// Masses (kg).
    pub mass: Vec<f64>,
    /// Moments of inertia about the centre, `2/5 m R²` for a solid sphere (kg·m²).
    pub inertia: Vec<f64>,
    /// Material indices.
    pub material: Vec<usize>,
    /// Spin fixed (angular velocity held at its initial value), PFC's `ball fix spin`.
    pub spin_fixed: Vec<bool>,
    /// Force accumulated during the current step (N).
    pub force: Vec<DVec3>,
    /// Torque accumulated during the current step (N·m).
    pub torque: Vec<DVec3>,
}

impl Particles {
    /// Number of particles.
    pub fn len(&self) -> usize {
        self.position.len()
    }

    /// True when there are no particles.
    pub fn is_empty(&self) -> bool {
        self.position.is_empty()
    }

    /// Adds a solid sphere at rest and returns its id.
    pub fn push(&mut self, position: DVec3, radius: f64, density: f64, material: usize) -> usize {
        let mass = density * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3);
        self.position.push(position);
        self.velocity.push(DVec3::ZERO);
        self.angular_velocity.push(DVec3::ZERO);
        self.orientation.push(DQuat::IDENTITY);
        self.radius.push(radius);
        self.mass.push(mass);
        self.inertia.push(0.4 * mass * radius * radius);
        self.material.push(material);
        self.spin_fixed.push(false);
        self.force.push(DVec3::ZERO);
        self.torque.push(DVec3::ZERO);
        self.len() - 1
    }

    /// Sets sphere `i`'s radius, scaling its mass and moment of inertia at its density.
    pub fn set_radius(&mut self, i: usize, radius: f64) {
        let scale = (radius / self.radius[i]).powi(3);
        self.mass[i] *= scale;
        self.inertia[i] = 0.4 * self.mass[i] * radius * radius;
        self.radius[i] = radius;
    }

    /// Total kinetic energy, translational plus rotational (J).
    pub fn kinetic_energy(&self) -> f64 {
        (0..self.len())
            .map(|i| {
                0.5 * self.mass[i] * self.velocity[i].length_squared()
                    + 0.5 * self.inertia[i] * self.angular_velocity[i].length_squared()
            })
            .sum()
    }

    /// Total linear momentum (kg·m/s).
    pub fn momentum(&self) -> DVec3 {
        (0..self.len())
            .map(|i| self.velocity[i] * self.mass[i])
            .sum()
    }

    /// Largest radius (m), 0 when empty.
    pub fn max_radius(&self) -> f64 {
        self.radius.iter().copied().fold(0.0, f64::max)
    }
}
