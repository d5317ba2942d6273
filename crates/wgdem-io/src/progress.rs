//! Progress on the terminal: one line per stage, within 80 columns, each with its own measure
//! of progress and an ETA (for preparation and consolidation, which end when the packing
//! settles, the ETA is to the stage's time limit: an upper bound). Without a terminal, the
//! same line is logged every 5 s.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use wgdem_core::element::{CellProgress, Stage as CellStage};
use wgdem_core::shear::{ShearProgress, Stage};

/// Steps of the bar (its position is a fraction of this).
const SCALE: u64 = 10_000;

/// The line of the stage in progress.
pub struct StageLine {
    terminal: bool,
    bar: Option<(String, ProgressBar)>,
    last_log: Instant,
}

impl Default for StageLine {
    fn default() -> Self {
        Self::new()
    }
}

impl StageLine {
    /// A line on stderr if it is a terminal, else log lines.
    pub fn new() -> Self {
        Self {
            terminal: std::io::stderr().is_terminal(),
            bar: None,
            last_log: Instant::now() - Duration::from_secs(60),
        }
    }

    /// Shows `fraction` of stage `stage` done, with `message` (at most 32 characters).
    pub fn show(&mut self, stage: &str, fraction: f64, message: &str) {
        let position = (fraction.clamp(0.0, 1.0) * SCALE as f64) as u64;
        if !self.terminal {
            if self.last_log.elapsed() >= Duration::from_secs(5) {
                self.last_log = Instant::now();
                log::info!(
                    "{stage:<13} {:>3.0} %  {message}",
                    100.0 * fraction.min(1.0)
                );
            }
            return;
        }
        if self.bar.as_ref().is_none_or(|(name, _)| name != stage) {
            if let Some((_, old)) = self.bar.take() {
                old.finish();
            }
            let bar = ProgressBar::new(SCALE);
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix:<13} {bar:16} {percent:>3}% {wide_msg} ETA {eta:>4}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.set_prefix(stage.to_owned());
            self.bar = Some((stage.to_owned(), bar));
        }
        if let Some((_, bar)) = &self.bar {
            bar.set_position(position);
            bar.set_message(message.to_owned());
        }
    }

    /// A shear test's row: its stage with the stage's own measure (preparation: time towards
    /// its limit and the void ratio; consolidation: the normal stress against its target and
    /// the rows within tolerance; shear: the displacement and the stress ratio).
    pub fn shear(&mut self, p: &ShearProgress<'_>) {
        let r = p.row;
        let by_time = |limit: Option<f64>| limit.map_or(0.0, |m| p.stage_time / m);
        match p.stage {
            Stage::Preparation => self.show(
                "preparation",
                by_time(p.stage_max_time),
                &format!(
                    "t {:.3}/{:.3} s e {:.3}",
                    p.stage_time,
                    p.stage_max_time.unwrap_or(0.0),
                    r.void_ratio
                ),
            ),
            Stage::Consolidation => self.show(
                "consolidation",
                by_time(p.stage_max_time),
                &format!(
                    "σ {:.3e}/{:.3e} Pa ok {}/{}",
                    r.normal_stress_pa, p.normal_stress_target, p.settled_rows.0, p.settled_rows.1
                ),
            ),
            Stage::Shear | Stage::Done => self.show(
                "shear",
                r.shear_displacement_m / p.target_displacement,
                &format!(
                    "d {:.3}/{:.3} mm τ/σ {:.3}",
                    r.shear_displacement_m * 1e3,
                    p.target_displacement * 1e3,
                    r.stress_ratio
                ),
            ),
        }
    }

    /// A periodic-cell test's row: compaction shows the mean stress against its target, the
    /// rows within tolerance and time towards its limit; loading the strain and the stress
    /// ratio.
    pub fn cell(&mut self, p: &CellProgress<'_>) {
        let r = p.row;
        match p.stage {
            CellStage::Compaction => self.show(
                "compaction",
                p.stage_time / p.compaction_max_time,
                &format!(
                    "p {:.3e}/{:.3e} Pa ok {}/{}",
                    r.p_pa, p.mean_stress_target, p.settled_rows.0, p.settled_rows.1
                ),
            ),
            CellStage::Loading | CellStage::Done => self.show(
                "loading",
                r.loading_strain / p.target_strain,
                &format!(
                    "ε {:.4}/{:.4} ratio {:.3}",
                    r.loading_strain, p.target_strain, r.stress_ratio
                ),
            ),
        }
    }

    /// Shows where a run (`wgdem run`, `wgdem.run`) stands: steps done, time, kinetic energy.
    pub fn run(&mut self, p: &wgdem_core::runner::Progress) {
        self.show(
            "run",
            p.step as f64 / p.total.max(1) as f64,
            &format!("t {:.4} s E_k {:.3e} J", p.time, p.kinetic_energy),
        )
    }

    /// Leaves the last line on the terminal.
    pub fn finish(self) {
        if let Some((_, bar)) = self.bar {
            bar.finish();
        }
    }
}
