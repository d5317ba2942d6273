//! The servo that holds the top plate at a normal stress (PFC's: Itasca, "servo-controlled
//! walls"): a pure function of the controller's state, its gains and the measured wall force,
//! called once per control interval with the force the backend read back.
//!
//! `v = G (F − F_t) + I`, `G = α / (k T)`: α the servo gain, `k` the plate's contact stiffness
//! at the target load, `T` the control interval. With a specimen as stiff as `k`, one interval
//! closes the fraction α of the error. The integral term `I` adds 5 % of the proportional term
//! per interval, which removes the steady lag while the specimen dilates; it is frozen while
//! the speed is capped (anti-windup) at a hundredth of a diameter per interval.

use serde::{Deserialize, Serialize};

use super::ShearSetup;

/// Servo controller state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Servo {
    /// Integral term (m/s).
    pub integral: f64,
    /// Velocity last set (m/s).
    pub velocity: f64,
    /// Whether the servo acts.
    pub active: bool,
}

/// Servo constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServoGains {
    /// Proportional gain G (m/(s·N)).
    pub gain: f64,
    /// Integral fraction per interval, `T / T_i`.
    pub integral: f64,
    /// Target force (N).
    pub target: f64,
    /// Speed cap (m/s).
    pub v_max: f64,
}

impl ServoGains {
    /// The gains of `s`'s consolidation and shear.
    pub fn new(s: &ShearSetup) -> Self {
        let period = s.control_period();
        Self {
            gain: s.config.consolidation.servo_gain / (s.plate_stiffness * period),
            integral: 0.05,
            target: s.config.consolidation.normal_stress * s.area,
            v_max: 0.01 * s.mean_diameter / period,
        }
    }
}

impl Servo {
    /// One control interval: the plate velocity along +z (m/s) to set from the force `force_z`
    /// (N) the specimen exerts on the plate along +z, or `None` while the servo is off.
    pub fn update(&mut self, g: &ServoGains, force_z: f64) -> Option<f64> {
        if !self.active {
            return None;
        }
        // Positive error: the specimen pushes harder than the target; the plate backs off (+z).
        let p = g.gain * (force_z - g.target);
        let v = p + self.integral;
        let clamped = v.clamp(-g.v_max, g.v_max);
        if clamped == v {
            self.integral += p * g.integral;
        }
        self.velocity = clamped;
        Some(clamped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gains for a plate on a specimen of stiffness `k` (N/m), control interval `t` (s).
    fn gains(alpha: f64, k: f64, t: f64, target: f64, v_max: f64) -> ServoGains {
        ServoGains {
            gain: alpha / (k * t),
            integral: 0.05,
            target,
            v_max,
        }
    }

    fn on() -> Servo {
        Servo {
            active: true,
            ..Servo::default()
        }
    }

    #[test]
    fn an_inactive_servo_sets_nothing() {
        let g = gains(0.5, 1e6, 1e-4, 10.0, 1.0);
        let mut s = Servo::default();
        assert_eq!(s.update(&g, 1e3), None);
        assert_eq!(s, Servo::default());
    }

    #[test]
    fn the_plate_backs_off_when_pushed_too_hard_and_closes_in_when_not() {
        let g = gains(0.5, 1e6, 1e-4, 10.0, 1.0);
        let up = on().update(&g, 12.0).expect("active");
        // G (F − F_t) = 0.5 / (1e6 · 1e-4) · 2 N = 0.01 m/s.
        assert!((up - 0.01).abs() < 1e-15, "{up}");
        let down = on().update(&g, 8.0).expect("active");
        assert!((down + 0.01).abs() < 1e-15, "{down}");
    }

    #[test]
    fn the_integral_grows_by_its_fraction_of_the_proportional_term() {
        let g = gains(0.5, 1e6, 1e-4, 10.0, 1.0);
        let mut s = on();
        let v1 = s.update(&g, 12.0).expect("active");
        assert!((s.integral - 0.05 * v1).abs() < 1e-18);
        let v2 = s.update(&g, 12.0).expect("active");
        assert!((v2 - 1.05 * v1).abs() < 1e-15, "{v2} against {v1}");
    }

    #[test]
    fn the_speed_is_capped_and_the_integral_frozen_while_capped() {
        let g = gains(0.5, 1e6, 1e-4, 10.0, 1e-3);
        let mut s = on();
        let v = s.update(&g, 1e3).expect("active");
        assert_eq!(v, 1e-3);
        assert_eq!(s.velocity, 1e-3);
        assert_eq!(s.integral, 0.0, "integral wound up while capped");
    }

    /// A plate pressing a linear specimen, F = k (z0 − z), converges to the target force: the
    /// proportional term alone closes α of the error per interval (|1 − α| < 1 for α in
    /// (0, 1]), and the integral term leaves no steady error. At α = 0.5 the relative error of
    /// this loop is 4.7e-2 after 10 intervals, 8.5e-7 after 200 and 7.8e-12 after 400 (the
    /// integral term's slow mode); 1e-9 after 400 leaves room for rounding.
    #[test]
    fn a_plate_on_a_linear_specimen_settles_at_the_target_force() {
        let (k, t, target) = (2e6, 1e-4, 500.0);
        let g = gains(0.5, k, t, target, 1.0);
        let mut s = on();
        let z0 = 0.01;
        let mut z = z0; // the plate just touching: no force
        let force = |z: f64| (k * (z0 - z)).max(0.0);
        for _ in 0..400 {
            let v = s.update(&g, force(z)).expect("active");
            z += v * t;
        }
        let f = force(z);
        assert!(
            ((f - target) / target).abs() < 1e-9,
            "force {f} N, target {target} N"
        );
    }
}
