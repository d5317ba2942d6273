//! What a periodic-cell test measures: each row of `cell.csv` and the summary.

use glam::DMat3;

use super::{CellRun, CellSummary, HistorySummary, Row, Stage};
use crate::analysis::{
    coordination_number, fabric_anisotropy, fabric_tensor, running_mean, touching_in,
    unbalanced_force_ratio, windowed_slope,
};
use crate::runner::Backend;

impl CellRun {
    /// The mean translational sphere speed (m/s) the compaction's settling criterion bounds.
    pub(super) fn mean_speed(&self) -> f64 {
        crate::analysis::translational_mean_speed(&self.sim.particles)
    }

    pub(super) fn measure(&self) -> Row {
        let sim = &self.sim;
        let s = &self.state;
        let path = self.setup.config.loading.path;
        let stress = sim.stress().unwrap_or(DMat3::NAN);
        let sym = (stress + stress.transpose()) * 0.5;
        let (p, q) = crate::analysis::invariants(sym);
        let volume = sim.cell().map_or(f64::NAN, |c| c.volume());
        let touches = touching_in(&sim.particles, sim.cell());
        let n = sim.particles.len();
        let e = &s.strain;
        let histories = sim.history_lengths();
        let loading = matches!(s.stage, Stage::Loading | Stage::Done);
        Row {
            step: sim.steps,
            time_s: crate::cpu::step_time(sim.steps, sim.dt),
            stage: s.stage.name().to_owned(),
            strain_xx: e.x_axis.x,
            strain_yy: e.y_axis.y,
            strain_zz: e.z_axis.z,
            strain_yz: e.z_axis.y,
            strain_xz: e.z_axis.x,
            strain_xy: e.y_axis.x,
            volumetric_strain: -(volume / s.stage_volume).ln(),
            loading_strain: if loading {
                path.loading_strain(s.strain, s.shear_strain)
            } else {
                0.0
            },
            stress_xx_pa: sym.x_axis.x,
            stress_yy_pa: sym.y_axis.y,
            stress_zz_pa: sym.z_axis.z,
            stress_yz_pa: sym.z_axis.y,
            stress_xz_pa: sym.z_axis.x,
            stress_xy_pa: sym.y_axis.x,
            p_pa: p,
            q_pa: q,
            stress_ratio: path.stress_ratio(sym),
            friction_angle_deg: path.friction_angle_deg(sym),
            void_ratio: volume / self.setup.solid_volume - 1.0,
            coordination_number: coordination_number(touches.len(), n),
            contacts: touches.len() as u64,
            sliding_fraction: if sim.stats.contacts == 0 {
                0.0
            } else {
                sim.stats.sliding as f64 / sim.stats.contacts as f64
            },
            fabric_anisotropy: fabric_anisotropy(&fabric_tensor(&touches)),
            contact_dissipated_work_j: if sim.accounts_work() {
                sim.work.dissipated
            } else {
                f64::NAN
            },
            history_points_mean: if histories.is_empty() {
                f64::NAN
            } else {
                histories.iter().sum::<usize>() as f64 / histories.len() as f64
            },
            history_points_max: histories.iter().copied().max().unwrap_or(0) as u64,
            kinetic_energy_j: sim.particles.kinetic_energy(),
            cell_volume_m3: volume,
            unbalanced_force_ratio: unbalanced_force_ratio(&sim.particles, &touches, p, volume),
        }
    }

    /// The summary of the rows so far.
    pub fn summary(&self, backend: &dyn Backend) -> CellSummary {
        let s = &self.setup;
        let c = &s.config;
        let rows = &self.state.rows;
        let loading: Vec<&Row> = rows.iter().filter(|r| r.stage != "compaction").collect();
        let ratio: Vec<f64> = loading.iter().map(|r| r.stress_ratio).collect();
        let angle: Vec<f64> = loading.iter().map(|r| r.friction_angle_deg).collect();
        let (ratio_mean, angle_mean) = (running_mean(&ratio, 3), running_mean(&angle, 3));
        let peak = (0..ratio_mean.len())
            .filter(|&k| ratio_mean[k].is_finite())
            .max_by(|&a, &b| ratio_mean[a].total_cmp(&ratio_mean[b]));
        let strain: Vec<f64> = loading.iter().map(|r| r.loading_strain).collect();
        let dilation: Vec<f64> = loading.iter().map(|r| -r.volumetric_strain).collect();
        let window = (loading.len() / 10).max(3);
        // NaN, not −inf, where the loading has too few rows for a slope.
        let dilatancy = windowed_slope(&strain, &dilation, window)
            .into_iter()
            .flatten()
            .fold(f64::NAN, f64::max);
        let p0 = c.compaction.mean_stress;
        // After the first tenth of the strain the loading reached (probes may stop it early).
        let reached = strain.last().copied().unwrap_or(0.0);
        let sigmas: Vec<DMat3> = (loading.iter())
            .filter(|r| r.loading_strain > 0.1 * reached)
            .map(|r| {
                DMat3::from_cols_array(&[
                    r.stress_xx_pa,
                    r.stress_xy_pa,
                    r.stress_xz_pa,
                    r.stress_xy_pa,
                    r.stress_yy_pa,
                    r.stress_yz_pa,
                    r.stress_xz_pa,
                    r.stress_yz_pa,
                    r.stress_zz_pa,
                ])
            })
            .collect();
        let held = c.loading.path.held_errors(p0, c.servo.band * p0, &sigmas);
        let compacted = rows.iter().rev().find(|r| r.stage == "compaction");
        let compaction_end = compacted.map_or(0, |r| r.step);
        let steps = self.sim.steps;
        let n = self.sim.particles.len();
        CellSummary {
            provenance: s.provenance.clone(),
            n_particles: n,
            backend: backend.name().to_owned(),
            contact_law: format!("{:?}", self.sim.model.law).to_lowercase(),
            history: format!("{:?}", self.sim.model.history).to_lowercase(),
            path: c.loading.path.name().to_owned(),
            mean_stress_target_pa: p0,
            initial_void_ratio: compacted.map_or(f64::NAN, |r| r.void_ratio),
            initial_coordination_number: compacted.map_or(f64::NAN, |r| r.coordination_number),
            peak_stress_ratio: peak.map_or(f64::NAN, |k| ratio_mean[k]),
            peak_friction_angle_deg: peak.map_or(f64::NAN, |k| angle_mean[k]),
            strain_at_peak: peak.map_or(f64::NAN, |k| strain[k]),
            final_stress_ratio: ratio.last().copied().unwrap_or(f64::NAN),
            final_volumetric_strain: loading.last().map_or(f64::NAN, |r| r.volumetric_strain),
            max_dilatancy_rate: dilatancy,
            // NaN, not 0, where no row was measured.
            held_stress_error_mean_fraction: held.mean_fraction,
            held_stress_error_max_fraction: held.max_fraction,
            servo_at_rate_bound_fraction: held.at_rate_bound_fraction,
            probes: self.state.probes.clone(),
            probes_conventional: self.state.probes_conventional.clone(),
            rotation: self.state.rotation.clone(),
            rotation_without_twirl: self.state.rotation_without_twirl.clone(),
            compaction_timed_out: self.state.compaction_timed_out,
            compaction_steps: compaction_end,
            loading_steps: if loading.is_empty() {
                0
            } else {
                steps.saturating_sub(compaction_end)
            },
            steps,
            dt_s: self.sim.dt,
            wall_clock_s: self.state.wall_seconds,
            particle_steps_per_s: (steps as f64 * n as f64)
                / self.state.wall_seconds.max(f64::MIN_POSITIVE),
            loading_wall_clock_s: self.state.loading_wall_seconds,
            loading_force_wall_clock_s: self.state.loading_force_seconds,
            jager_histories: histories(&loading),
        }
    }
}

/// The Jäger histories of the loading rows, `None` where no row has one.
fn histories(loading: &[&Row]) -> Option<HistorySummary> {
    let with: Vec<&&Row> = loading
        .iter()
        .filter(|r| r.history_points_mean.is_finite())
        .collect();
    let total = |r: &Row| r.history_points_mean * r.contacts as f64;
    let most = with.iter().max_by(|a, b| total(a).total_cmp(&total(b)))?;
    Some(HistorySummary {
        strain_at_most_points: most.loading_strain,
        contacts_at_most_points: most.contacts,
        mean_points_at_most_points: most.history_points_mean,
        mean_points_over_loading: with.iter().map(|r| r.history_points_mean).sum::<f64>()
            / with.len() as f64,
        longest_points: with.iter().map(|r| r.history_points_max).max().unwrap_or(0),
    })
}
