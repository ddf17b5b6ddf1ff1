//! A step size and its warmup lifecycle, written once for every kernel that tunes one by dual
//! averaging (Hoffman & Gelman 2014, Alg. 5; [`DualAveraging`]): begun at the start of
//! warmup from the current value, updated after every warmup iteration with its acceptance
//! statistic, restarted when the metric or the potential changes (full-data HMC and NUTS after
//! each metric window, HMC-ECS after each re-centring), and ended at the averaged value.
//! Used by the Hamiltonian kernels, HMC-ECS's θ-step and the random-walk proposal's scale.

use tallmc_integrators::{DualAveraging, DualAveragingConfig};

/// A step size (HMC's ε, HMC-ECS's θ-step ε, the random walk's scale s) and its dual
/// averaging during warmup.
#[derive(Debug, Clone)]
pub(crate) struct StepSize {
    value: f64,
    tuner: Option<DualAveraging>,
}

impl StepSize {
    /// ε = `value`, not adapting.
    pub fn new(value: f64) -> Self {
        Self { value, tuner: None }
    }

    /// The current ε (after warmup: the averaged one).
    pub fn get(&self) -> f64 {
        self.value
    }

    /// Sets ε (before warmup).
    pub fn set(&mut self, value: f64) {
        self.value = value;
    }

    /// Starts dual averaging from the current ε if `adapt`.
    pub fn begin_warmup(&mut self, adapt: bool, config: DualAveragingConfig) {
        if adapt {
            self.tuner = DualAveraging::new(config, self.value).ok();
        }
    }

    /// Whether dual averaging is running.
    pub fn adapting(&self) -> bool {
        self.tuner.is_some()
    }

    /// One warmup iteration's acceptance statistic: ε moves to dual averaging's next iterate.
    pub fn update(&mut self, accept_stat: f64) {
        if let Some(tuner) = self.tuner.as_mut() {
            tuner.update(accept_stat);
            self.value = tuner.step_size();
        }
    }

    /// Sets ε to `value` and restarts dual averaging from it (after the metric or the
    /// potential changed).
    pub fn restart(&mut self, value: f64) {
        self.value = value;
        if let Some(tuner) = self.tuner.as_mut() {
            tuner.restart(value);
        }
    }

    /// Ends the warmup: ε becomes dual averaging's final (averaged) one.
    pub fn end_warmup(&mut self) {
        if let Some(tuner) = self.tuner.take() {
            self.value = tuner.final_step_size();
        }
    }
}
