//! `apply_adaptive_tuning` (spec §5): the hour-quota multiplier follows the user's recent
//! acceptance rate, symmetrically around a pivot, with a cold-start floor, an asymmetric
//! volume gate and a hysteresis band.

use crate::config::AdaptiveConfig;
use crate::feedback::Rate;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Tuning {
    /// Fewer verdicts than the cold-start floor: held at 1.0.
    ColdStart,
    Tightened {
        from: f64,
        to: f64,
    },
    Loosened {
        from: f64,
        to: f64,
    },
    /// The target is inside the hysteresis band, or the volume gate held the move back.
    Unchanged,
}

/// The multiplier the acceptance rate asks for, before hysteresis and gates.
pub fn target_multiplier(rate: f64, cfg: &AdaptiveConfig) -> f64 {
    (1.0 + (rate - cfg.pivot) * cfg.gain).clamp(cfg.min_multiplier, cfg.max_multiplier)
}

/// Moves `multiplier` in place and says what happened.
pub fn tune(multiplier: &mut f64, overall: Rate, cfg: &AdaptiveConfig) -> Tuning {
    let n = overall.samples();
    let Some(rate) = overall.acceptance().filter(|_| n >= cfg.cold_start_samples) else {
        *multiplier = 1.0;
        return Tuning::ColdStart;
    };
    let from = *multiplier;
    let target = target_multiplier(rate, cfg);
    if target < from - cfg.band && n >= cfg.min_samples_tighten {
        *multiplier = target;
        Tuning::Tightened { from, to: target }
    } else if target > from + cfg.band && n >= cfg.min_samples_loosen {
        *multiplier = target;
        Tuning::Loosened { from, to: target }
    } else {
        Tuning::Unchanged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(accepted: u32, dismissed: u32) -> Rate {
        Rate { accepted, dismissed }
    }

    #[test]
    fn cold_start_holds_the_baseline() {
        let cfg = AdaptiveConfig::default();
        let mut m = 0.7;
        assert_eq!(tune(&mut m, rate(0, 4), &cfg), Tuning::ColdStart);
        assert_eq!(m, 1.0);
    }

    #[test]
    fn a_disengaged_user_is_tightened_an_engaged_one_loosened() {
        let cfg = AdaptiveConfig::default();
        let mut m = 1.0;
        assert!(matches!(tune(&mut m, rate(1, 9), &cfg), Tuning::Tightened { .. }));
        assert!((m - 0.6).abs() < 1e-9);
        let mut m = 1.0;
        assert!(matches!(tune(&mut m, rate(18, 2), &cfg), Tuning::Loosened { .. }));
        assert!((m - 1.4).abs() < 1e-9);
    }

    #[test]
    fn loosening_needs_more_samples_than_tightening() {
        let cfg = AdaptiveConfig::default();
        // 10 samples: enough to tighten, not to loosen.
        let mut m = 1.0;
        assert_eq!(tune(&mut m, rate(10, 0), &cfg), Tuning::Unchanged);
        assert_eq!(m, 1.0);
        assert!(matches!(tune(&mut m, rate(0, 10), &cfg), Tuning::Tightened { .. }));
    }

    #[test]
    fn targets_are_symmetric_around_the_pivot() {
        let cfg = AdaptiveConfig::default();
        let lo = target_multiplier(0.5 - 0.3, &cfg);
        let hi = target_multiplier(0.5 + 0.3, &cfg);
        assert!(((1.0 - lo) - (hi - 1.0)).abs() < 1e-9);
    }
}
