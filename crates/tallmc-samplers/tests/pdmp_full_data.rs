//! Full-data BPS and Zig-Zag against a correlated Gaussian in closed form: continuous-time
//! means and second moments within 4 batch-means MCSE, for every bounce clock (exact inversion,
//! thinning against the model bound, automatic envelope), at a fixed seed shifted by
//! `TALLMC_SEED_OFFSET`.

use tallmc_core::rng::chain_rng;
use tallmc_core::{
    CurvatureBound, EvalCounts, LogPrior, LogPriorCurvature, LogPriorHessian, PdmpKernel,
    PdmpState, TermCurvatureBound, TermGradients, TermHessians, Terms,
};
use tallmc_samplers::{AutoBoundConfig, Bps, BpsConfig, ZigZag, ZigZagConfig};
use tallmc_testkit::{Z_MAX, seed};

/// N terms ℓ_i(θ) = −½(θ − μ_i)ᵀA(θ − μ_i), flat prior: π = N(μ̄, (N A)⁻¹).
struct GaussianTerms {
    a: Vec<f64>,
    mu: Vec<Vec<f64>>,
    d: usize,
    exact: bool,
}

impl GaussianTerms {
    fn new(d: usize, n: usize, rho: f64, exact: bool) -> Self {
        // A = Σ⁻¹/N for Σ_jk = ρ^|j−k| (so the posterior covariance is Σ).
        let sigma: Vec<f64> =
            (0..d * d).map(|k| rho.powi(((k / d) as i32 - (k % d) as i32).abs())).collect();
        let chol = tallmc_core::linalg::Cholesky::new(&sigma, d, "Σ").unwrap();
        let a: Vec<f64> = chol.inverse().iter().map(|v| v / n as f64).collect();
        let mu = (0..n)
            .map(|i| (0..d).map(|j| ((i * 7 + j * 3) % 5) as f64 * 0.1 - 0.2).collect())
            .collect();
        Self { a, mu, d, exact }
    }
    fn mean(&self) -> Vec<f64> {
        let n = self.mu.len() as f64;
        (0..self.d).map(|j| self.mu.iter().map(|m| m[j]).sum::<f64>() / n).collect()
    }
    fn r(&self, theta: &[f64], i: usize, out: &mut [f64]) {
        for j in 0..self.d {
            out[j] = theta[j] - self.mu[i][j];
        }
    }
}

impl Terms for GaussianTerms {
    fn dim(&self) -> usize {
        self.d
    }
    fn num_terms(&self) -> usize {
        self.mu.len()
    }
    fn log_terms(&self, theta: &[f64], idx: &[u32], out: &mut [f64]) {
        let mut r = vec![0.0; self.d];
        for (o, &i) in out.iter_mut().zip(idx) {
            self.r(theta, i as usize, &mut r);
            let mut q = 0.0;
            for j in 0..self.d {
                for k in 0..self.d {
                    q += r[j] * self.a[j * self.d + k] * r[k];
                }
            }
            *o = -0.5 * q;
        }
    }
}

impl TermGradients for GaussianTerms {
    fn log_terms_grad_sum(
        &self,
        theta: &[f64],
        idx: &[u32],
        out: &mut [f64],
        g: &mut [f64],
    ) -> f64 {
        self.log_terms(theta, idx, out);
        let mut r = vec![0.0; self.d];
        for &i in idx {
            self.r(theta, i as usize, &mut r);
            for j in 0..self.d {
                for k in 0..self.d {
                    g[j] -= self.a[j * self.d + k] * r[k];
                }
            }
        }
        out.iter().sum()
    }
    fn log_terms_grads(&self, theta: &[f64], idx: &[u32], out: &mut [f64], g: &mut [f64]) {
        self.log_terms(theta, idx, out);
        g.fill(0.0);
        for (row, &i) in g.chunks_mut(self.d).zip(idx) {
            let mut r = vec![0.0; self.d];
            self.r(theta, i as usize, &mut r);
            for j in 0..self.d {
                for k in 0..self.d {
                    row[j] -= self.a[j * self.d + k] * r[k];
                }
            }
        }
    }
}

impl TermHessians for GaussianTerms {
    fn hessian_vector_products(&self, _t: &[f64], idx: &[u32], v: &[f64], out: &mut [f64]) {
        for row in out.chunks_mut(self.d).take(idx.len()) {
            for j in 0..self.d {
                row[j] = -(0..self.d).map(|k| self.a[j * self.d + k] * v[k]).sum::<f64>();
            }
        }
    }
    fn sum_hessian(&self, _t: &[f64], idx: &[u32], hess: &mut [f64]) {
        for (h, a) in hess.iter_mut().zip(&self.a) {
            *h -= a * idx.len() as f64;
        }
    }
}

impl TermCurvatureBound for GaussianTerms {
    fn curvature_bound(&self) -> CurvatureBound {
        let n = self.mu.len() as f64;
        let quadratic: Vec<f64> = self.a.iter().map(|v| v * n).collect();
        let absolute = quadratic.iter().map(|v| v.abs()).collect();
        CurvatureBound {
            dim: self.d,
            quadratic,
            absolute,
            exact: self.exact,
            evals: EvalCounts::hessians(self.mu.len()),
        }
    }
}

impl LogPrior for GaussianTerms {
    fn log_prior(&self, _: &[f64]) -> f64 {
        0.0
    }
    fn log_prior_grad(&self, _: &[f64], _: &mut [f64]) -> f64 {
        0.0
    }
}
impl LogPriorHessian for GaussianTerms {
    fn add_log_prior_hessian(&self, _: &[f64], _: &mut [f64]) {}
}
impl LogPriorCurvature for GaussianTerms {
    fn prior_curvature_bound(&self) -> f64 {
        0.0
    }
    fn prior_hessian_is_constant(&self) -> bool {
        true
    }
}

/// Runs `kernel` for trajectory time `t_total` (after `t_warm`) and checks the time averages of
/// θ_j and θ_j² against the closed form, with 40 batch means over time.
/// What a run did.
#[derive(Debug)]
#[allow(dead_code)]
struct Counts {
    proposals: u64,
    events: u64,
    violations: u64,
    gradients: u64,
}

fn check<K: PdmpKernel<GaussianTerms>>(
    name: &str,
    model: &GaussianTerms,
    mut kernel: K,
    t_warm: f64,
    t_total: f64,
    base: u64,
) -> Counts {
    let d = model.d;
    let mut rng = chain_rng(seed(base), 0);
    let mean = model.mean();
    let mut state = kernel.init(model, &mean, &mut rng).unwrap();
    let batches = 40;
    let width = t_total / batches as f64;
    let mut m1 = vec![vec![0.0; d]; batches];
    let mut m2 = vec![vec![0.0; d]; batches];
    let (mut proposals, mut events, mut violations) = (0u64, 0u64, 0u64);
    let mut evals = EvalCounts::ZERO;
    loop {
        let s = kernel.step(model, &mut state, &mut rng).unwrap();
        proposals += s.proposals;
        events += s.events();
        violations += s.violations;
        evals += s.evals;
        let seg = state.trajectory().last_segment();
        // Integrate the segment's part inside [t_warm, t_warm + t_total], batch by batch.
        let (mut lo, hi) = (seg.start_time.max(t_warm), seg.end_time().min(t_warm + t_total));
        while lo < hi {
            let mut b = (((lo - t_warm) / width) as usize).min(batches - 1);
            // Rounding can put lo exactly on a boundary computed as the end of batch b.
            if t_warm + (b + 1) as f64 * width <= lo && b + 1 < batches {
                b += 1;
            }
            let end = if b + 1 == batches { hi } else { (t_warm + (b + 1) as f64 * width).min(hi) };
            let (s0, s1) = (lo - seg.start_time, end - seg.start_time);
            for j in 0..d {
                let (x, v) = (seg.position[j], seg.velocity[j]);
                let f1 = |s: f64| x * s + 0.5 * v * s * s;
                let f2 = |s: f64| x * x * s + x * v * s * s + v * v * s * s * s / 3.0;
                m1[b][j] += f1(s1) - f1(s0);
                m2[b][j] += f2(s1) - f2(s0);
            }
            lo = end;
        }
        if seg.end_time() >= t_warm + t_total {
            break;
        }
    }
    for j in 0..d {
        for (moment, truth) in [(&m1, mean[j]), (&m2, 1.0 + mean[j] * mean[j])] {
            let bm: Vec<f64> = moment.iter().map(|b| b[j] / width).collect();
            let avg = bm.iter().sum::<f64>() / batches as f64;
            let var = bm.iter().map(|x| (x - avg).powi(2)).sum::<f64>() / (batches - 1) as f64;
            let mcse = (var / batches as f64).sqrt();
            let z = (avg - truth) / mcse;
            assert!(
                z.abs() < Z_MAX,
                "{name}: coordinate {j}: {avg} vs {truth} (mcse {mcse}, z {z:.2})"
            );
        }
    }
    Counts { proposals, events, violations, gradients: evals.gradients }
}

#[test]
fn bps_exact_inversion_on_a_correlated_gaussian() {
    let model = GaussianTerms::new(2, 10, 0.9, true);
    let c =
        check("BPS exact 2-D", &model, Bps::new(BpsConfig::default()).unwrap(), 50.0, 50_000.0, 1);
    // Exact inversion: every proposal is a bounce, and no data is touched after set-up.
    assert_eq!(c.violations, 0);
    assert_eq!(c.gradients, 10, "{c:?}");
    let model = GaussianTerms::new(10, 10, 0.5, true);
    check("BPS exact 10-D", &model, Bps::new(BpsConfig::default()).unwrap(), 50.0, 30_000.0, 2);
}

#[test]
fn bps_thinning_and_automatic_bounds() {
    let model = GaussianTerms::new(2, 10, 0.9, false);
    let c = check(
        "BPS thinning 2-D",
        &model,
        Bps::new(BpsConfig::default()).unwrap(),
        50.0,
        30_000.0,
        3,
    );
    assert_eq!(c.violations, 0);
    // One full-data gradient (N = 10) per proposal or refreshment, plus the initial one.
    assert!(c.gradients >= 10 * (c.proposals + 1), "{c:?}");
    let auto = Bps::automatic(BpsConfig::default(), AutoBoundConfig::default()).unwrap();
    check("BPS automatic 2-D", &model, auto, 50.0, 30_000.0, 4);
}

#[test]
fn zigzag_exact_thinning_and_automatic() {
    let model = GaussianTerms::new(2, 10, 0.9, true);
    check("ZZ exact 2-D", &model, ZigZag::new(ZigZagConfig::default()), 50.0, 50_000.0, 5);
    let model10 = GaussianTerms::new(10, 10, 0.5, true);
    check("ZZ exact 10-D", &model10, ZigZag::new(ZigZagConfig::default()), 50.0, 30_000.0, 6);
    let model = GaussianTerms::new(2, 10, 0.9, false);
    let c =
        check("ZZ thinning 2-D", &model, ZigZag::new(ZigZagConfig::default()), 50.0, 30_000.0, 7);
    assert_eq!(c.violations, 0);
    assert_eq!(c.gradients, 10 * (c.proposals + 1), "{c:?}");
    assert!(c.events < c.proposals, "the model bound is not tight here: {c:?}");
    let auto = ZigZag::automatic(ZigZagConfig::default(), AutoBoundConfig::default()).unwrap();
    check("ZZ automatic 2-D", &model, auto, 50.0, 30_000.0, 8);
}
