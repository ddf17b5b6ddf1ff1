//! The trajectory of one NUTS transition (see [`crate::hamiltonian::nuts`] for the algorithm), over any
//! potential: a closure `(θ, grad) -> log π(θ)` that overwrites `grad` with ∇log π(θ), as for
//! [`leapfrog`]. Full-data NUTS passes the full-data log posterior; a subsampling kernel can pass
//! its estimate with the subsample fixed.
//!
//! A tree may carry a *tag* of type `T` with every point it can draw ([`Tree::transition_tagged`]):
//! whatever the potential's evaluation at that point produced besides the log density (HMC-ECS:
//! the estimate ℓ̂, σ̂² or the sign at (θ, u)), so the caller learns it for the draw without
//! evaluating the potential again. Full-data NUTS uses `T = ()`.

use rand::{Rng, RngExt};
use tallmc_core::linalg::dot;
use tallmc_integrators::{LeapfrogOutcome, Metric, PhasePoint, leapfrog};

use super::transition::{Transition, hamiltonian};

/// How one transition went.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeOutcome {
    /// Mean of min{1, exp(H₀ − H(z))} over the leapfrog points.
    pub accept_stat: f64,
    /// A leapfrog step diverged.
    pub divergent: bool,
    /// Doublings kept.
    pub tree_depth: usize,
    /// The tree stopped because it reached its `max_depth` doublings.
    pub hit_max_depth: bool,
    /// Leapfrog steps (= gradient evaluations) made.
    pub n_leapfrog: usize,
    /// H at the draw.
    pub energy: f64,
}

impl TreeOutcome {
    /// The transition this tree made from Hamiltonian `h0`, which moved the chain or not.
    pub(crate) fn transition(&self, h0: f64, accepted: bool) -> Transition {
        Transition {
            accept_stat: self.accept_stat,
            accepted,
            divergent: self.divergent,
            n_leapfrog: self.n_leapfrog,
            energy: self.energy,
            energy_error: self.energy - h0,
            tree_depth: self.tree_depth,
            hit_max_depth: self.hit_max_depth,
        }
    }
}

/// The scratch of NUTS transitions of dimension d and at most `max_depth` doublings, allocated
/// once: the trajectory's two frontiers, its ends' (p, p♯), summed momenta, the newest subtree
/// and one subtree per level below it.
///
/// `T` is the tag carried with each point that can be drawn (see the module docs).
#[derive(Debug, Clone)]
pub struct Tree<T = ()> {
    max_depth: usize,
    left: PhasePoint,
    right: PhasePoint,
    sample: PhasePoint,
    sample_tag: Option<T>,
    left_end: End,
    right_end: End,
    rho: Vec<f64>,
    subtree: Subtree<T>,
    scratch: Vec<Subtree<T>>,
}

impl<T: Copy> Tree<T> {
    /// Scratch for dimension `d` and trees of at most `max_depth` doublings.
    pub fn new(d: usize, max_depth: usize) -> Self {
        Self {
            max_depth,
            left: PhasePoint::zeros(d),
            right: PhasePoint::zeros(d),
            sample: PhasePoint::zeros(d),
            sample_tag: None,
            left_end: End::zeros(d),
            right_end: End::zeros(d),
            rho: vec![0.0; d],
            subtree: Subtree::zeros(d),
            scratch: (0..max_depth).map(|_| Subtree::zeros(d)).collect(),
        }
    }

    /// One transition from `point`, whose momentum has just been drawn and whose Hamiltonian is
    /// `h0`: grows the trajectory with step size `step_size` and writes the multinomial draw into
    /// `point`. `velocity` (length d) is scratch.
    #[allow(clippy::too_many_arguments)]
    pub fn transition<R, F>(
        &mut self, point: &mut PhasePoint, h0: f64, metric: &Metric, velocity: &mut [f64],
        step_size: f64, max_energy_error: f64, rng: &mut R, mut potential: F,
    ) -> TreeOutcome
    where
        R: Rng + ?Sized,
        F: FnMut(&[f64], &mut [f64]) -> f64,
    {
        self.transition_tagged(point, h0, metric, velocity, step_size, max_energy_error, rng, {
            |t: &[f64], g: &mut [f64]| (potential(t, g), None)
        })
        .0
    }

    /// [`Tree::transition`] with a potential that also returns a tag of its evaluation (`None`
    /// if it has none): returns the tag of the point drawn, or `None` if the draw is the
    /// starting point (or its evaluation had no tag).
    #[allow(clippy::too_many_arguments)]
    pub fn transition_tagged<R, F>(
        &mut self, point: &mut PhasePoint, h0: f64, metric: &Metric, velocity: &mut [f64],
        step_size: f64, max_energy_error: f64, rng: &mut R, mut potential: F,
    ) -> (TreeOutcome, Option<T>)
    where
        R: Rng + ?Sized,
        F: FnMut(&[f64], &mut [f64]) -> (f64, Option<T>),
    {
        let Self {
            max_depth,
            left,
            right,
            sample,
            sample_tag,
            left_end,
            right_end,
            rho,
            subtree,
            scratch,
        } = self;
        left.copy_from(point);
        right.copy_from(point);
        sample.copy_from(point);
        *sample_tag = None;
        left_end.p.copy_from_slice(&point.momentum);
        metric.velocity(&point.momentum, &mut left_end.sharp);
        right_end.copy_from(left_end);
        rho.copy_from_slice(&point.momentum);
        let mut log_weight = 0.0;
        let mut tree_depth = 0;
        let mut run = Integration {
            potential: &mut potential,
            metric,
            velocity,
            step_size,
            h0,
            max_energy_error,
            n_leapfrog: 0,
            sum_accept: 0.0,
            divergent: false,
        };
        while tree_depth < *max_depth {
            let forward = rng.random::<f64>() > 0.5;
            let (frontier, near, far) = if forward {
                (&mut *right, &mut *right_end, &*left_end)
            } else {
                (&mut *left, &mut *left_end, &*right_end)
            };
            run.step_size = if forward { step_size } else { -step_size };
            if !run.build(frontier, tree_depth, subtree, scratch, rng) {
                break;
            }
            tree_depth += 1;
            if subtree.log_weight > log_weight
                || rng.random::<f64>() < (subtree.log_weight - log_weight).exp()
            {
                sample.copy_from(&subtree.sample);
                *sample_tag = subtree.tag;
            }
            log_weight = log_add_exp(log_weight, subtree.log_weight);
            let keep_going =
                merge_keeps_going(rho, far, near, &subtree.rho, (&subtree.begin, &subtree.end));
            for (r, s) in rho.iter_mut().zip(&subtree.rho) {
                *r += s;
            }
            near.copy_from(&subtree.end);
            if !keep_going {
                break;
            }
        }
        let (n_leapfrog, sum_accept, divergent) = (run.n_leapfrog, run.sum_accept, run.divergent);
        point.copy_from(sample);
        let outcome = TreeOutcome {
            accept_stat: sum_accept / n_leapfrog.max(1) as f64,
            divergent,
            tree_depth,
            hit_max_depth: tree_depth >= *max_depth,
            n_leapfrog,
            energy: hamiltonian(point, metric, velocity),
        };
        (outcome, *sample_tag)
    }
}

/// One end of a trajectory: its momentum p and velocity p♯ = Σp.
#[derive(Debug, Clone)]
struct End {
    p: Vec<f64>,
    sharp: Vec<f64>,
}

impl End {
    fn zeros(d: usize) -> Self {
        Self { p: vec![0.0; d], sharp: vec![0.0; d] }
    }

    fn copy_from(&mut self, other: &Self) {
        self.p.copy_from_slice(&other.p);
        self.sharp.copy_from_slice(&other.sharp);
    }
}

/// A (sub)trajectory in the order it was integrated: its multinomial sample with the sample's
/// tag, log of the summed weights, summed momenta ρ, and the ends where it began (next to what
/// came before) and where it ended.
#[derive(Debug, Clone)]
struct Subtree<T> {
    sample: PhasePoint,
    tag: Option<T>,
    log_weight: f64,
    rho: Vec<f64>,
    begin: End,
    end: End,
}

impl<T> Subtree<T> {
    fn zeros(d: usize) -> Self {
        Self {
            sample: PhasePoint::zeros(d),
            tag: None,
            log_weight: f64::NEG_INFINITY,
            rho: vec![0.0; d],
            begin: End::zeros(d),
            end: End::zeros(d),
        }
    }
}

/// Whether `p♯_a · ρ > 0` and `p♯_b · ρ > 0` for ρ = ρ₁ + ρ₂ given as two parts (the
/// generalized no-U-turn criterion holds: keep going).
fn no_u_turn(a: &[f64], b: &[f64], rho1: &[f64], rho2: &[f64]) -> bool {
    dot(a, rho1) + dot(a, rho2) > 0.0 && dot(b, rho1) + dot(b, rho2) > 0.0
}

/// The three checks of merging trajectory `first` (ρ₁, far end `first_far`, end next to the
/// seam `first_near`) with `second`, which continues it in the same direction: the merged
/// trajectory, `first` plus the first point of `second`, and the last point of `first` plus
/// `second`.
fn merge_keeps_going(
    rho1: &[f64], first_far: &End, first_near: &End, rho2: &[f64], second: (&End, &End),
) -> bool {
    let (second_near, second_far) = second;
    no_u_turn(&first_far.sharp, &second_far.sharp, rho1, rho2)
        && no_u_turn(&first_far.sharp, &second_near.sharp, rho1, &second_near.p)
        && no_u_turn(&first_near.sharp, &second_far.sharp, &first_near.p, rho2)
}

/// log(eᵃ + eᵇ) without overflow.
fn log_add_exp(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if hi == f64::NEG_INFINITY { hi } else { hi + (lo - hi).exp().ln_1p() }
}

/// What the leaves of one transition share while its subtrees are built.
struct Integration<'a, F> {
    potential: &'a mut F,
    metric: &'a Metric,
    velocity: &'a mut [f64],
    /// Signed step size: +ε forwards, −ε backwards in time.
    step_size: f64,
    h0: f64,
    max_energy_error: f64,
    n_leapfrog: usize,
    sum_accept: f64,
    divergent: bool,
}

impl<T: Copy, F: FnMut(&[f64], &mut [f64]) -> (f64, Option<T>)> Integration<'_, F> {
    /// Integrates a subtree of 2^depth leapfrog steps from the frontier `z` (advanced in place)
    /// into `out`, using `scratch` (at least `depth` subtrees) for the later halves. Returns
    /// `false` if it diverged or U-turned (the caller discards it).
    fn build<R: Rng + ?Sized>(
        &mut self, z: &mut PhasePoint, depth: usize, out: &mut Subtree<T>,
        scratch: &mut [Subtree<T>], rng: &mut R,
    ) -> bool {
        if depth == 0 {
            return self.leaf(z, out);
        }
        let (later, deeper) = scratch.split_first_mut().expect("one scratch subtree per level");
        if !self.build(z, depth - 1, out, deeper, rng)
            || !self.build(z, depth - 1, later, deeper, rng)
        {
            return false;
        }
        let log_weight = log_add_exp(out.log_weight, later.log_weight);
        if later.log_weight > log_weight
            || rng.random::<f64>() < (later.log_weight - log_weight).exp()
        {
            out.sample.copy_from(&later.sample);
            out.tag = later.tag;
        }
        let keep_going = merge_keeps_going(
            &out.rho,
            &out.begin,
            &out.end,
            &later.rho,
            (&later.begin, &later.end),
        );
        for (r, l) in out.rho.iter_mut().zip(&later.rho) {
            *r += l;
        }
        out.end.copy_from(&later.end);
        out.log_weight = log_weight;
        keep_going
    }

    /// One leapfrog step from `z`: the one-point subtree there.
    fn leaf(&mut self, z: &mut PhasePoint, out: &mut Subtree<T>) -> bool {
        let potential = &mut *self.potential;
        let mut tag = None;
        let outcome = leapfrog(z, self.metric, self.step_size, 1, self.velocity, |t, g| {
            let (log_density, t) = potential(t, g);
            tag = t;
            log_density
        });
        self.n_leapfrog += 1;
        let h = match outcome {
            LeapfrogOutcome::NonFinite { .. } => f64::INFINITY,
            LeapfrogOutcome::Completed { .. } => hamiltonian(z, self.metric, self.velocity),
        };
        let h = if h.is_nan() { f64::INFINITY } else { h };
        let log_weight = self.h0 - h;
        self.sum_accept += if log_weight > 0.0 { 1.0 } else { log_weight.exp() };
        if h - self.h0 > self.max_energy_error {
            self.divergent = true;
            return false;
        }
        out.sample.copy_from(z);
        out.tag = tag;
        out.log_weight = log_weight;
        out.rho.copy_from_slice(&z.momentum);
        out.begin.p.copy_from_slice(&z.momentum);
        self.metric.velocity(&z.momentum, &mut out.begin.sharp);
        out.end.copy_from(&out.begin);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_add_exp_is_stable() {
        assert_eq!(log_add_exp(f64::NEG_INFINITY, f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert_eq!(log_add_exp(0.0, f64::NEG_INFINITY), 0.0);
        assert!((log_add_exp(1000.0, 1000.0) - (1000.0 + 2f64.ln())).abs() < 1e-12);
        assert!((log_add_exp(-3.0, 2.0) - ((-3f64).exp() + 2f64.exp()).ln()).abs() < 1e-12);
    }

    #[test]
    fn merge_detects_a_turn_at_the_seam() {
        let end = |p: [f64; 2]| End { p: p.to_vec(), sharp: p.to_vec() };
        // Two halves heading the same way: keep going.
        let (a_far, a_near, b_near, b_far) =
            (end([1.0, 0.0]), end([1.0, 0.1]), end([1.0, 0.2]), end([1.0, 0.3]));
        let rho_a = [2.0, 0.1];
        let rho_b = [2.0, 0.5];
        assert!(merge_keeps_going(&rho_a, &a_far, &a_near, &rho_b, (&b_near, &b_far)));
        // The second half reverses: the merged trajectory has turned back.
        let (b_near, b_far) = (end([-1.0, 0.0]), end([-3.0, 0.0]));
        let rho_b = [-4.0, 0.0];
        assert!(!merge_keeps_going(&rho_a, &a_far, &a_near, &rho_b, (&b_near, &b_far)));
    }
}
