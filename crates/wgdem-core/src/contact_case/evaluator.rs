//! Who evaluates a case's contact: the interface the CPU models and the GPU's WGSL models
//! (`wgdem-gpu::contact_probe`) both implement, and the CPU evaluator.

use super::*;
use crate::contact::{ContactModel, ContactParams, RelativeMotion, contact_force};

/// The constants of the model a case drives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CaseParams {
    /// Fleischmann et al.'s spring–dashpot (Hertz or Hooke, with its history mode).
    SpringDashpot(ContactModel, ContactParams),
    /// Kuhn's linear-frictional contact.
    Linear(KuhnParams),
    /// Potyondy's hill model.
    Hill(HillParams),
    /// Jäger's contact.
    Jager(JagerParams),
}

/// One step's contact kinematics, as the driver computes them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepKinematics {
    /// Overlap at the end of the step (m); negative is a gap.
    pub overlap: f64,
    /// Unit normal from A to B.
    pub normal: DVec3,
    /// Velocity of B's contact point relative to A's (m/s).
    pub velocity: DVec3,
    /// Displacement of B's contact point relative to A's over the step (m).
    pub displacement: DVec3,
    /// The pair's mean spin about the normal over the step (rad).
    pub twirl: f64,
}

/// One step's result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepResult {
    /// Force on B (N).
    pub force: DVec3,
    /// Elastic energy stored (J).
    pub elastic: f64,
    /// Dissipated work so far (J); NaN where the model does not split its work.
    pub dissipated: f64,
    /// Normal surface force (hill) or normal force (N).
    pub surface: f64,
    /// Moisture force (N).
    pub moisture: f64,
    /// Jäger history points.
    pub history: usize,
}

/// Evaluates the contact of a case, step by step, keeping its state.
pub trait CaseEvaluator {
    /// Sets the model's constants and applies a moisture action `(action, gap now, moisture
    /// gap)` (m) before the next step.
    fn configure(
        &mut self,
        params: &CaseParams,
        action: Option<(MoistureAction, f64, f64)>,
    ) -> Result<()>;
    /// Evaluates consecutive steps.
    fn evaluate(&mut self, steps: &[StepKinematics]) -> Result<Vec<StepResult>>;
    /// Name for reports (`cpu` or the GPU adapter).
    fn name(&self) -> String;
}

/// The f64 CPU reference evaluator.
#[derive(Debug, Default)]
pub struct CpuEvaluator {
    params: Option<CaseParams>,
    /// Spring–dashpot: the stored tangential displacement `u_t` (m).
    u_t: DVec3,
    kuhn: KuhnState,
    hill: HillState,
    jager: JagerState,
}

impl CaseEvaluator for CpuEvaluator {
    fn configure(
        &mut self,
        params: &CaseParams,
        action: Option<(MoistureAction, f64, f64)>,
    ) -> Result<()> {
        if self.params.is_none() {
            self.kuhn.overlap = f64::NEG_INFINITY;
        }
        self.params = Some(*params);
        match action {
            Some((MoistureAction::Wet, gap, moisture_gap)) => {
                make_wet(&mut self.hill, gap, moisture_gap)
            }
            Some((MoistureAction::Dry, ..)) => make_dry(&mut self.hill),
            None => {}
        }
        Ok(())
    }

    fn evaluate(&mut self, steps: &[StepKinematics]) -> Result<Vec<StepResult>> {
        let params = self
            .params
            .ok_or_else(|| Error::Backend("the evaluator was not configured".to_owned()))?;
        let mut out = Vec::with_capacity(steps.len());
        for k in steps {
            out.push(match &params {
                CaseParams::SpringDashpot(model, p) => {
                    spring_dashpot_step(&mut self.u_t, *model, k, p)
                }
                CaseParams::Linear(p) => {
                    let o = kuhn_step(
                        &mut self.kuhn,
                        &KuhnStep {
                            overlap: k.overlap,
                            normal: k.normal,
                            movement: k.displacement,
                            twirl: k.twirl,
                        },
                        p,
                    );
                    StepResult {
                        force: o.force,
                        elastic: o.elastic_work,
                        dissipated: self.kuhn.dissipated,
                        surface: o.normal_force,
                        moisture: 0.0,
                        history: 0,
                    }
                }
                CaseParams::Hill(p) => {
                    let o = hill_step(
                        &mut self.hill,
                        &HillStep {
                            gap: -k.overlap,
                            normal: k.normal,
                            velocity: k.velocity,
                            displacement: k.displacement,
                            twirl: k.twirl,
                        },
                        p,
                    );
                    StepResult {
                        force: o.force,
                        elastic: o.elastic_work,
                        dissipated: self.hill.dissipated,
                        surface: o.surface_normal_force,
                        moisture: o.moisture_force,
                        history: 0,
                    }
                }
                CaseParams::Jager(p) => {
                    let o = jager_step(
                        &mut self.jager,
                        &JagerStep {
                            overlap: k.overlap,
                            normal: k.normal,
                            movement: k.displacement,
                            twirl: k.twirl,
                        },
                        p,
                    );
                    // Hertz energy 0.8 Ē √R ζ^{5/2}; the tangential work is not split into
                    // stored and dissipated parts for this model.
                    let zeta = 0.5 * k.overlap.max(0.0);
                    StepResult {
                        force: o.force,
                        elastic: 0.8 * p.e_bar * p.radius.sqrt() * zeta * zeta * zeta.sqrt(),
                        dissipated: f64::NAN,
                        surface: o.normal_force,
                        moisture: 0.0,
                        history: self.jager.history.len(),
                    }
                }
            });
        }
        Ok(out)
    }

    fn name(&self) -> String {
        "cpu".to_owned()
    }
}

/// One step of Fleischmann et al.'s law (Eq. 1–6, [`contact_force`]) with the stored `u_t`. A
/// gap ends the contact and its history, as the engine drops a pair that no longer touches.
/// The elastic energy is the normal spring's, `∫ k_n f(δ) δ dδ` (Hooke: `k_n δ²/2`; Hertz:
/// `(2/5) k_n √R̄ δ^{5/2}`), plus the tangential spring's `k_t f |u_t|²/2`; the model does not
/// split the rest of its work, so `dissipated` is NaN.
fn spring_dashpot_step(
    u_t: &mut DVec3,
    model: ContactModel,
    k: &StepKinematics,
    p: &ContactParams,
) -> StepResult {
    if k.overlap <= 0.0 {
        *u_t = DVec3::ZERO;
        return StepResult {
            force: DVec3::ZERO,
            elastic: 0.0,
            dissipated: f64::NAN,
            surface: 0.0,
            moisture: 0.0,
            history: 0,
        };
    }
    let motion = RelativeMotion {
        velocity: k.velocity,
        displacement: k.displacement,
    };
    let o = contact_force(model, k.overlap, k.normal, motion, *u_t, p);
    *u_t = o.tangential_displacement;
    let f = model.law.factor(p.eff_radius, k.overlap);
    let normal_energy = match model.law {
        crate::contact::ContactLaw::Hooke => 0.5 * p.kn * k.overlap * k.overlap,
        crate::contact::ContactLaw::Hertz => 0.4 * p.kn * p.eff_radius.sqrt() * k.overlap.powf(2.5),
    };
    StepResult {
        force: o.force,
        elastic: normal_energy + 0.5 * p.kt * f * u_t.length_squared(),
        dissipated: f64::NAN,
        surface: o.normal_force,
        moisture: 0.0,
        history: 0,
    }
}
