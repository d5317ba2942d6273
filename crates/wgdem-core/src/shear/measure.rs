//! What a shear test measures on its specimen: each row of `shear.csv` (stresses, dilation,
//! void ratio, fabric, inertial number) and the summary of a finished test (He, Zheng & Li
//! 2020, Eq. 22–34).

use super::*;

impl ShearRun {
    pub(super) fn top_z(&self) -> f64 {
        match self.sim.walls[walls::TOP].shape {
            WallShape::Plate { center, .. } | WallShape::Plane { point: center, .. } => center.z,
        }
    }

    pub(super) fn lower_x(&self) -> f64 {
        match self.sim.walls[walls::BOTTOM].shape {
            WallShape::Plate { center, .. } | WallShape::Plane { point: center, .. } => center.x,
        }
    }

    /// Height of the highest sphere top (m).
    pub(super) fn fill_height(&self) -> f64 {
        if let Some(s) = &self.sums {
            return s.top;
        }
        let p = &self.sim.particles;
        (0..p.len())
            .map(|i| p.position[i].z + p.radius[i])
            .fold(0.0, f64::max)
    }

    /// Mean sphere speed `√(2 E_k / Σm)` (m/s), rotation included
    /// ([`crate::analysis::mean_speed`]).
    pub(super) fn mean_speed(&self) -> f64 {
        let p = &self.sim.particles;
        match &self.sums {
            Some(s) => crate::analysis::mean_speed_of(s.kinetic_energy, p),
            None => crate::analysis::mean_speed(p),
        }
    }

    pub(super) fn measure(&self) -> Row {
        let s = &self.setup;
        let sim = &self.sim;
        let stage = self.state.stage;
        let plate_on = stage != Stage::Preparation || s.expansion_height.is_some();
        let height = if plate_on {
            self.top_z()
        } else {
            self.fill_height()
        };
        let vs = solid_volume(&sim.particles);
        let void_ratio = (s.area * height / vs - 1.0).max(0.0);
        let normal = sim.walls[walls::TOP].force.z;
        let shear: f64 = walls::UPPER
            .iter()
            .chain(std::iter::once(&walls::TOP))
            .map(|&w| sim.walls[w].force.x)
            .sum();
        let (dh, dv) = match self.state.shear_origin {
            Some((x0, z0)) => (self.lower_x() - x0, self.top_z() - z0),
            None => (0.0, 0.0),
        };
        // The backend's sums where it made them (the GPU engine's, in f32), else the host's
        // from the particles.
        let (pairs, phi, kinetic) = match &self.sums {
            Some(s) => (s.pairs as usize, s.fabric(), s.kinetic_energy),
            None => {
                let contacts = touching(&sim.particles);
                let kinetic = sim.particles.kinetic_energy();
                (contacts.len(), fabric_tensor(&contacts), kinetic)
            }
        };
        let sigma = normal / s.area;
        let inertial = if stage == Stage::Shear {
            crate::analysis::inertial_number(
                s.shear_rate(height),
                s.mean_diameter,
                s.density,
                sigma.max(0.0),
            )
        } else {
            0.0
        };
        // Dilation angle over the last few shear rows.
        let dilation = if stage == Stage::Shear {
            let back: Vec<&Row> = self
                .state
                .rows
                .iter()
                .rev()
                .take_while(|r| r.stage == "shear")
                .take(4)
                .collect();
            back.last()
                .filter(|r| dh > r.shear_displacement_m)
                .map(|r| {
                    ((dv - r.vertical_displacement_m) / (dh - r.shear_displacement_m))
                        .atan()
                        .to_degrees()
                })
                .unwrap_or(0.0)
        } else {
            0.0
        };
        Row {
            step: sim.steps,
            time_s: crate::output::step_time(sim.steps, sim.dt),
            stage: stage.name().to_owned(),
            shear_displacement_m: dh,
            shear_strain: dh / s.config.shear_box.length,
            shear_force_n: shear,
            normal_force_n: normal,
            shear_stress_pa: shear / s.area,
            normal_stress_pa: sigma,
            stress_ratio: if normal > 0.0 { shear / normal } else { 0.0 },
            vertical_displacement_m: dv,
            dilation_angle_deg: dilation,
            void_ratio,
            coordination_number: coordination_number(pairs, sim.particles.len()),
            fabric_anisotropy: fabric_anisotropy(&phi),
            inertial_number: inertial,
            kinetic_energy_j: kinetic,
        }
    }

    /// The summary of the rows so far, with what `backend` says of itself.
    pub fn summary(&self, backend: &dyn Backend) -> ShearSummary {
        let s = &self.setup;
        let shear: Vec<&Row> = self
            .state
            .rows
            .iter()
            .filter(|r| r.stage == "shear")
            .collect();
        let target = s.config.consolidation.normal_stress;
        let ratio: Vec<f64> = shear.iter().map(|r| r.stress_ratio).collect();
        let peak = running_mean(&ratio, 5).into_iter().fold(f64::NAN, f64::max);
        let end = shear.last().map_or(0.0, |r| r.shear_displacement_m);
        let tail: Vec<f64> = shear
            .iter()
            .filter(|r| r.shear_displacement_m >= 0.8 * end)
            .map(|r| r.stress_ratio)
            .collect();
        let residual = tail.iter().sum::<f64>() / tail.len().max(1) as f64;
        let dh: Vec<f64> = shear.iter().map(|r| r.shear_displacement_m).collect();
        let dv: Vec<f64> = shear.iter().map(|r| r.vertical_displacement_m).collect();
        let window = (shear.len() / 10).max(5);
        let dilation = windowed_slope(&dh, &dv, window)
            .into_iter()
            .flatten()
            .map(|m| m.atan().to_degrees())
            .fold(f64::NAN, f64::max);
        let steps = self.sim.steps;
        let n = self.sim.particles.len();
        // Each stage ends on a row of its own name (`advance_stage`).
        let rows = &self.state.rows;
        let last_row = |stage: &str| rows.iter().rev().find(|r| r.stage == stage);
        let prepared = last_row("preparation");
        let preparation_end = prepared.map_or(0, |r| r.step);
        let consolidated = last_row("consolidation");
        let consolidation_end = consolidated.map_or(preparation_end, |r| r.step);
        let shear_steps = if shear.is_empty() {
            0
        } else {
            steps.saturating_sub(consolidation_end)
        };
        let mass: f64 = self.sim.particles.mass.iter().sum();
        let preparation_speed = prepared.map(|r| (2.0 * r.kinetic_energy_j / mass).sqrt());
        ShearSummary {
            provenance: s.provenance.clone(),
            n_particles: n,
            backend: backend.name().to_owned(),
            adapter: backend.adapter(),
            gpu_bytes_per_particle: self.gpu_bytes_per_particle(backend),
            contact_law: format!("{:?}", self.sim.model.law).to_lowercase(),
            history: format!("{:?}", self.sim.model.history).to_lowercase(),
            preparation_void_ratio: self.state.preparation_void_ratio.unwrap_or(f64::NAN),
            // The packing the shear starts from: the last consolidation row (the stage ends
            // on a row). With `friction_change = "at_shear"` a loose specimen collapses in
            // the first shear row, so the first shear row's would not be it.
            initial_void_ratio: consolidated
                .or(shear.first().copied())
                .map_or(f64::NAN, |r| r.void_ratio),
            normal_stress_target_pa: target,
            normal_stress_error_max_fraction: shear
                .iter()
                .map(|r| ((r.normal_stress_pa - target) / target).abs())
                .fold(0.0, f64::max),
            peak_stress_ratio: peak,
            peak_friction_angle_deg: peak.atan().to_degrees(),
            residual_stress_ratio: residual,
            residual_friction_angle_deg: residual.atan().to_degrees(),
            max_dilation_angle_deg: dilation,
            final_vertical_displacement_m: shear.last().map_or(0.0, |r| r.vertical_displacement_m),
            max_inertial_number: shear.iter().map(|r| r.inertial_number).fold(0.0, f64::max),
            consolidation_timed_out: self.state.consolidation_timed_out,
            preparation_steps: preparation_end,
            consolidation_steps: consolidation_end.saturating_sub(preparation_end),
            shear_steps,
            preparation_mean_speed_m_per_s: preparation_speed,
            preparation_settled: preparation_speed.map(|v| v < s.config.specimen.settle_speed),
            steps,
            dt_s: self.sim.dt,
            wall_clock_s: self.state.wall_seconds,
            particle_steps_per_s: if self.state.wall_seconds > 0.0 {
                n as f64 * steps as f64 / self.state.wall_seconds
            } else {
                0.0
            },
        }
    }
}
