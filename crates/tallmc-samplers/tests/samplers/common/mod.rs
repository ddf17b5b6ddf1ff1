//! A conjugate test model with a closed-form posterior, for the samplers' own tests.
//!
//! Bayesian linear regression with known unit noise: ℓ_i(θ) = −½ (y_i − a_iᵀθ)², prior
//! θ ~ N(0, τ² I). Posterior N(m, P⁻¹) with P = AᵀA + I/τ², m = P⁻¹Aᵀy.

#![allow(dead_code)]

use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use tallmc_core::linalg::Cholesky;
use tallmc_core::rng::setup_rng;
use tallmc_core::{LogPrior, LogPriorHessian, TermGradients, TermHessians, Terms};

pub struct LinearGaussian {
    pub d: usize,
    pub a: Vec<f64>,
    pub y: Vec<f64>,
    pub tau: f64,
}

impl LinearGaussian {
    /// n rows with correlated covariates, so the posterior is correlated.
    pub fn new(n: usize, d: usize, seed: u64) -> Self {
        let mut rng = setup_rng(seed);
        let mut a = vec![0.0; n * d];
        let mut y = vec![0.0; n];
        for i in 0..n {
            let common: f64 = StandardNormal.sample(&mut rng);
            for j in 0..d {
                let e: f64 = StandardNormal.sample(&mut rng);
                a[i * d + j] = 0.8 * common + 0.6 * e + rng.random_range(-0.1..0.1);
            }
            let noise: f64 = StandardNormal.sample(&mut rng);
            y[i] = (0..d).map(|j| a[i * d + j] * (j as f64 - 0.5)).sum::<f64>() + noise;
        }
        Self { d, a, y, tau: 10.0 }
    }

    /// Posterior mean and covariance.
    pub fn posterior(&self) -> (Vec<f64>, Vec<f64>) {
        let d = self.d;
        let mut p = vec![0.0; d * d];
        let mut b = vec![0.0; d];
        for (row, y) in self.a.chunks(d).zip(&self.y) {
            for j in 0..d {
                b[j] += row[j] * y;
                for k in 0..d {
                    p[j * d + k] += row[j] * row[k];
                }
            }
        }
        (0..d).for_each(|j| p[j * d + j] += 1.0 / (self.tau * self.tau));
        let c = Cholesky::new(&p, d, "posterior precision").unwrap();
        c.solve_in_place(&mut b);
        (b, c.inverse())
    }

    fn resid(&self, theta: &[f64], i: u32) -> (f64, &[f64]) {
        let row = &self.a[i as usize * self.d..(i as usize + 1) * self.d];
        (self.y[i as usize] - row.iter().zip(theta).map(|(x, t)| x * t).sum::<f64>(), row)
    }
}

impl Terms for LinearGaussian {
    fn dim(&self) -> usize {
        self.d
    }
    fn num_terms(&self) -> usize {
        self.y.len()
    }
    fn log_terms(&self, theta: &[f64], idx: &[u32], out: &mut [f64]) {
        for (o, &i) in out.iter_mut().zip(idx) {
            let (r, _) = self.resid(theta, i);
            *o = -0.5 * r * r;
        }
    }
}

impl TermGradients for LinearGaussian {
    fn log_terms_grad_sum(
        &self, theta: &[f64], idx: &[u32], out: &mut [f64], g: &mut [f64],
    ) -> f64 {
        for (o, &i) in out.iter_mut().zip(idx) {
            let (r, row) = self.resid(theta, i);
            *o = -0.5 * r * r;
            g.iter_mut().zip(row).for_each(|(gj, x)| *gj += r * x);
        }
        out.iter().sum()
    }
    fn log_terms_grads(&self, theta: &[f64], idx: &[u32], out: &mut [f64], g: &mut [f64]) {
        for ((o, &i), gk) in out.iter_mut().zip(idx).zip(g.chunks_mut(self.d)) {
            let (r, row) = self.resid(theta, i);
            *o = -0.5 * r * r;
            gk.iter_mut().zip(row).for_each(|(gj, x)| *gj = r * x);
        }
    }
}

impl TermHessians for LinearGaussian {
    fn hessian_vector_products(&self, _t: &[f64], idx: &[u32], v: &[f64], out: &mut [f64]) {
        for (&i, o) in idx.iter().zip(out.chunks_mut(self.d)) {
            let row = &self.a[i as usize * self.d..(i as usize + 1) * self.d];
            let xv: f64 = row.iter().zip(v).map(|(x, v)| x * v).sum();
            o.iter_mut().zip(row).for_each(|(oj, x)| *oj = -x * xv);
        }
    }
    fn sum_hessian(&self, _t: &[f64], idx: &[u32], h: &mut [f64]) {
        let d = self.d;
        for &i in idx {
            let row = &self.a[i as usize * d..(i as usize + 1) * d];
            for j in 0..d {
                for k in 0..d {
                    h[j * d + k] -= row[j] * row[k];
                }
            }
        }
    }
}

impl LogPrior for LinearGaussian {
    fn log_prior(&self, theta: &[f64]) -> f64 {
        -0.5 * theta.iter().map(|t| t * t).sum::<f64>() / (self.tau * self.tau)
    }
    fn log_prior_grad(&self, theta: &[f64], g: &mut [f64]) -> f64 {
        g.iter_mut().zip(theta).for_each(|(gj, t)| *gj -= t / (self.tau * self.tau));
        self.log_prior(theta)
    }
}

impl LogPriorHessian for LinearGaussian {
    fn add_log_prior_hessian(&self, _theta: &[f64], h: &mut [f64]) {
        (0..self.d).for_each(|j| h[j * self.d + j] -= 1.0 / (self.tau * self.tau));
    }
}
