//! Euclidean metrics for Hamiltonian dynamics.
//!
//! The Hamiltonian is H(θ, p) = U(θ) + K(p) with K(p) = ½ pᵀ Σ p, where Σ = M⁻¹ is the *inverse
//! mass matrix* (Stan's "metric"). Ideally Σ ≈ Cov_π(θ): the dynamics then see a target with
//! unit scales in every direction. Momenta are drawn p ~ N(0, M) and positions move with
//! velocity dθ/dt = Σ p.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use tallmc_core::linalg::Cholesky;
use tallmc_core::{Error, Result};

/// Which family of metric to use or adapt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub enum MetricKind {
    /// Σ = I.
    Identity,
    /// Σ diagonal.
    #[default]
    Diagonal,
    /// Σ dense (symmetric positive definite).
    Dense,
}

/// An inverse mass matrix Σ with what is needed to use it.
#[derive(Debug, Clone, PartialEq)]
pub enum Metric {
    /// Σ = I of the given dimension.
    Identity(usize),
    /// Σ = diag(`inverse_mass`); `sqrt_mass` holds 1/√Σ_jj for momentum draws.
    Diagonal {
        /// Diagonal of Σ.
        inverse_mass: Vec<f64>,
        /// 1/√Σ_jj.
        sqrt_mass: Vec<f64>,
    },
    /// Dense Σ (row-major d × d) and its Cholesky factor Σ = L Lᵀ.
    Dense {
        /// Σ, row-major.
        inverse_mass: Vec<f64>,
        /// Cholesky factor of Σ.
        factor: Cholesky,
    },
}

/// Serialized as its kind, dimension and Σ (row-major when dense; empty for the identity).
impl Serialize for Metric {
    fn serialize<S: serde::Serializer>(
        &self, serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let (kind, inverse_mass): (MetricKind, &[f64]) = match self {
            Self::Identity(_) => (MetricKind::Identity, &[]),
            Self::Diagonal { inverse_mass, .. } => (MetricKind::Diagonal, inverse_mass),
            Self::Dense { inverse_mass, .. } => (MetricKind::Dense, inverse_mass),
        };
        let mut s = serializer.serialize_struct("Metric", 3)?;
        s.serialize_field("kind", &kind)?;
        s.serialize_field("dim", &self.dim())?;
        s.serialize_field("inverse_mass", inverse_mass)?;
        s.end()
    }
}

impl Metric {
    /// A diagonal metric; every entry must be finite and > 0.
    pub fn diagonal(inverse_mass: Vec<f64>) -> Result<Self> {
        if let Some((j, &v)) =
            inverse_mass.iter().enumerate().find(|(_, v)| !(v.is_finite() && **v > 0.0))
        {
            return Err(Error::invalid(
                "diagonal inverse mass matrix entry",
                format!("{v} (coordinate {j})"),
                "a finite number > 0",
            ));
        }
        let sqrt_mass = inverse_mass.iter().map(|v| 1.0 / v.sqrt()).collect();
        Ok(Self::Diagonal { inverse_mass, sqrt_mass })
    }

    /// A dense metric from a row-major d × d symmetric positive definite Σ.
    pub fn dense(inverse_mass: Vec<f64>, dim: usize) -> Result<Self> {
        tallmc_core::error::check_finite("dense inverse mass matrix", &inverse_mass)?;
        let factor = Cholesky::new(&inverse_mass, dim, "dense inverse mass matrix")?;
        Ok(Self::Dense { inverse_mass, factor })
    }

    /// The identity metric of dimension `dim` in the representation of `kind` (so that it can be
    /// adapted in place later).
    pub fn unit(kind: MetricKind, dim: usize) -> Self {
        match kind {
            MetricKind::Identity => Self::Identity(dim),
            MetricKind::Diagonal => {
                Self::Diagonal { inverse_mass: vec![1.0; dim], sqrt_mass: vec![1.0; dim] }
            }
            MetricKind::Dense => {
                let mut inverse_mass = vec![0.0; dim * dim];
                for j in 0..dim {
                    inverse_mass[j * dim + j] = 1.0;
                }
                Self::Dense { inverse_mass, factor: Cholesky::identity(dim) }
            }
        }
    }

    /// Dimension d.
    pub fn dim(&self) -> usize {
        match self {
            Self::Identity(d) => *d,
            Self::Diagonal { inverse_mass, .. } => inverse_mass.len(),
            Self::Dense { factor, .. } => factor.dim(),
        }
    }

    /// The family of this metric.
    pub fn kind(&self) -> MetricKind {
        match self {
            Self::Identity(_) => MetricKind::Identity,
            Self::Diagonal { .. } => MetricKind::Diagonal,
            Self::Dense { .. } => MetricKind::Dense,
        }
    }

    /// Draws p ~ N(0, M) into `p`, using `z` (length d) as scratch.
    pub fn sample_momentum<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [f64], z: &mut [f64]) {
        match self {
            Self::Identity(_) => p.iter_mut().for_each(|x| *x = StandardNormal.sample(rng)),
            Self::Diagonal { sqrt_mass, .. } => {
                for (x, s) in p.iter_mut().zip(sqrt_mass) {
                    let n: f64 = StandardNormal.sample(rng);
                    *x = n * s;
                }
            }
            Self::Dense { factor, .. } => {
                // p = L⁻ᵀ z has covariance L⁻ᵀ L⁻¹ = Σ⁻¹ = M.
                z.iter_mut().for_each(|x| *x = StandardNormal.sample(rng));
                p.copy_from_slice(z);
                factor.solve_upper_in_place(p);
            }
        }
    }

    /// Draws v ~ N(0, Σ), Σ = M⁻¹ the inverse mass (the law of the velocity Σp when
    /// p ~ N(0, M); the noise of preconditioned Langevin steps), using `z` (length d) as
    /// scratch: z ~ N(0, I), then v = z, v_j = √Σ_jj z_j, or v = L z with L Lᵀ = Σ.
    pub fn sample_velocity<R: Rng + ?Sized>(&self, rng: &mut R, v: &mut [f64], z: &mut [f64]) {
        z.iter_mut().for_each(|x| *x = StandardNormal.sample(rng));
        match self {
            Self::Identity(_) => v.copy_from_slice(z),
            Self::Diagonal { inverse_mass, .. } => {
                for ((vi, zi), s) in v.iter_mut().zip(z.iter()).zip(inverse_mass) {
                    *vi = zi * s.sqrt();
                }
            }
            Self::Dense { factor, .. } => factor.mul_lower(z, v),
        }
    }

    /// Writes the velocity v = Σ p.
    pub fn velocity(&self, p: &[f64], v: &mut [f64]) {
        match self {
            Self::Identity(_) => v.copy_from_slice(p),
            Self::Diagonal { inverse_mass, .. } => {
                for ((vi, pi), s) in v.iter_mut().zip(p).zip(inverse_mass) {
                    *vi = pi * s;
                }
            }
            Self::Dense { inverse_mass, .. } => tallmc_core::linalg::mat_vec(inverse_mass, p, v),
        }
    }

    /// Kinetic energy ½ pᵀ Σ p, using `v` (length d) as scratch.
    pub fn kinetic_energy(&self, p: &[f64], v: &mut [f64]) -> f64 {
        self.velocity(p, v);
        0.5 * tallmc_core::linalg::dot(p, v)
    }

    /// Lines describing the metric for CSV comments (CmdStan style).
    pub fn describe(&self) -> Vec<String> {
        let fmt = |xs: &[f64]| xs.iter().map(|x| format!("{x:.6e}")).collect::<Vec<_>>().join(", ");
        match self {
            Self::Identity(_) => vec!["Identity inverse mass matrix".into()],
            Self::Diagonal { inverse_mass, .. } => {
                vec!["Diagonal elements of inverse mass matrix:".into(), fmt(inverse_mass)]
            }
            Self::Dense { inverse_mass, factor } => {
                let d = factor.dim();
                let mut lines = vec!["Elements of inverse mass matrix:".to_string()];
                lines.extend(inverse_mass.chunks(d.max(1)).map(fmt));
                lines
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tallmc_core::rng::chain_rng;

    #[test]
    fn velocity_draws_have_covariance_sigma() {
        // v ~ N(0, Σ) for each kind of metric; Σ = [[2, 0.6], [0.6, 1]] (dense) or its diagonal.
        // The sample covariance entry (i, j) from n draws has sd √((Σ_ii Σ_jj + Σ_ij²)/n).
        let sigma = vec![2.0, 0.6, 0.6, 1.0];
        let n = 100_000;
        for (metric, want) in [
            (Metric::dense(sigma.clone(), 2).unwrap(), sigma.clone()),
            (Metric::diagonal(vec![2.0, 1.0]).unwrap(), vec![2.0, 0.0, 0.0, 1.0]),
            (Metric::unit(MetricKind::Identity, 2), vec![1.0, 0.0, 0.0, 1.0]),
        ] {
            let mut rng = chain_rng(12, 0);
            let (mut v, mut z) = ([0.0; 2], [0.0; 2]);
            let mut acc = [0.0; 4];
            for _ in 0..n {
                metric.sample_velocity(&mut rng, &mut v, &mut z);
                for i in 0..2 {
                    for j in 0..2 {
                        acc[2 * i + j] += v[i] * v[j];
                    }
                }
            }
            for i in 0..2 {
                for j in 0..2 {
                    let (est, w) = (acc[2 * i + j] / n as f64, want[2 * i + j]);
                    let sd = ((want[3 * i] * want[3 * j] + w * w) / n as f64).sqrt();
                    assert!((est - w).abs() < 4.0 * sd, "{metric:?} ({i},{j}): {est} vs {w}");
                }
            }
        }
    }

    #[test]
    fn dense_momentum_has_covariance_m_and_kinetic_energy_matches() {
        // Σ = [[2, 0.6], [0.6, 1]] so M = Σ⁻¹; check E[p pᵀ] = M by Monte Carlo.
        let sigma = vec![2.0, 0.6, 0.6, 1.0];
        let det = 2.0 - 0.36;
        let m = [1.0 / det, -0.6 / det, -0.6 / det, 2.0 / det];
        let metric = Metric::dense(sigma, 2).unwrap();
        let mut rng = chain_rng(11, 0);
        let (mut p, mut z, mut v) = ([0.0; 2], [0.0; 2], [0.0; 2]);
        let n = 200_000;
        let mut acc = [0.0; 4];
        let mut ke = 0.0;
        for _ in 0..n {
            metric.sample_momentum(&mut rng, &mut p, &mut z);
            acc[0] += p[0] * p[0];
            acc[1] += p[0] * p[1];
            acc[3] += p[1] * p[1];
            ke += metric.kinetic_energy(&p, &mut v);
        }
        // Entry sd ≤ √(2 M_ii M_jj / n) ≈ 0.004; allow 5 sd. E[K] = d/2 = 1 with sd √(d/2/n).
        for (k, &i) in [0usize, 1, 3].iter().enumerate() {
            let est = acc[i] / n as f64;
            assert!((est - m[i]).abs() < 0.02, "entry {k}: {est} vs {}", m[i]);
        }
        assert!((ke / n as f64 - 1.0).abs() < 5.0 * (1.0 / n as f64).sqrt());
    }

    #[test]
    fn bad_metrics_are_errors() {
        assert!(Metric::diagonal(vec![1.0, 0.0]).is_err());
        assert!(Metric::dense(vec![1.0, 2.0, 2.0, 1.0], 2).is_err());
        assert!(Metric::dense(vec![1.0, f64::NAN, 0.0, 1.0], 2).is_err());
    }
}
