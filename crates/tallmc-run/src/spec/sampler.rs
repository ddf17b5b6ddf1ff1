//! [`SamplerSettings`]: the sampler of a run and its validated settings, one arm per sampler.
//! With the `clap` feature it is also the command line's `tallmc sample <SAMPLER>` subcommand,
//! so that the command's flags, the Python classes' keyword arguments and the serialized run
//! share one definition of every setting (name, default, help text).

use serde::{Deserialize, Serialize};

use super::Invalid;
use super::ecs::{HmcEcsSettings, HmcEcsSignedSettings};
use super::exact::{AdaptiveMhSettings, HmcSettings, NutsSettings, RwmSettings};
use super::minibatch::{
    AusteritySettings, ConfidenceSettings, MhSsSettings, SmhSettings, TunaMhSettings,
};
use super::pdmp::{
    BpsSettings, ContinuousSettings, LipsbpsSettings, SbpsSettings, ZigzagCvSettings,
    ZigzagSettings, ZigzagSubsamplingSettings,
};
use super::sg::{SgCommon, SghmcSettings, SgldSettings, SgnhtSettings};

/// The sampler of a run with its settings (the same names `summary.json`, the CSV comments and
/// the command's subcommands use). Serialized with the sampler's name in the field `name`:
/// `{"name": "hmc-ecs", "subsample": 1000, "blocks": 100, …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Subcommand))]
#[serde(tag = "name", rename_all = "kebab-case")]
pub enum SamplerSettings {
    /// Random-walk Metropolis (exact): proposals shaped by the Laplace covariance.
    ///
    /// The proposal covariance is the Laplace covariance (inverse Hessian at the posterior
    /// mode) times a scale tuned during warmup.
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    Rwm(RwmSettings),

    /// Adaptive Metropolis (Haario et al. 2001; exact): covariance learned during warmup.
    ///
    /// The proposal covariance starts from the Laplace covariance and is learned from the
    /// warmup draws.
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    AdaptiveMh(AdaptiveMhSettings),

    /// Hamiltonian Monte Carlo (exact) with dual-averaging step size and metric adaptation.
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    Hmc(HmcSettings),

    /// The No-U-Turn Sampler (exact): HMC whose trajectory length is chosen at every iteration.
    ///
    /// Multinomial sampling over a doubling trajectory with the generalized U-turn criterion
    /// (as Stan), dual-averaging step size and the same metric choices as `hmc`.
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    Nuts(NutsSettings),

    /// Austerity MH (Korattikara et al. 2014; approximate): minibatch accept/reject by a t-test.
    ///
    /// Random-walk proposals accepted by a sequential Student-t test on minibatches drawn
    /// without replacement (--epsilon, --batch). Approximate: each decision may differ from
    /// exact MH; ε controls how often.
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    Austerity(AusteritySettings),

    /// The confidence sampler (Bardenet et al. 2014): minibatch MH by concentration bounds.
    ///
    /// The accept/reject decision by exact concentration bounds for sampling without
    /// replacement (--bound, --delta, --gamma); each decision differs from exact MH with
    /// probability ≤ δ. Needs term bounds (not --model linear).
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    Confidence(ConfidenceSettings),

    /// Scalable Metropolis–Hastings (Cornish et al. 2019; exact): a Poisson minibatch per step.
    ///
    /// Random-walk proposals accepted by a factorised MH ratio: one factor from Taylor
    /// expansions of order --order at the mode (no data), the data's factors by thinning a
    /// Poisson minibatch drawn against per-datum derivative bounds (logistic, probit,
    /// gaussian-mean).
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    Smh(SmhSettings),

    /// TunaMH (Zhang et al. 2020; exact): a Poisson minibatch against per-datum Lipschitz bounds.
    ///
    /// Random-walk proposals; the data enter through a Poisson minibatch of mean χC²M² + CM
    /// drawn ∝ each datum's Lipschitz constant (logistic). Without control variates its steps
    /// must be small: prefer mh-ss or smh on tall data.
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    Tunamh(TunaMhSettings),

    /// MH-SS (Prado, Nemeth & Sherlock; exact): TunaMH's minibatch on control-variate remainders.
    ///
    /// Random-walk proposals; first-order Taylor control variates at the mode, and TunaMH's
    /// Poisson minibatch on their remainders, drawn ∝ each datum's gradient Lipschitz constant
    /// (logistic, probit, gaussian-mean).
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    MhSs(MhSsSettings),

    /// Stochastic-gradient Langevin dynamics (Welling & Teh 2011; approximate).
    ///
    /// Uncorrected: θ ← θ + (h/2)·ĝ(θ) + N(0, h I), ĝ from a fresh minibatch of --batch points
    /// drawn without replacement, fixed step size h (--step-size); --cv for control variates.
    /// Approximate: biased for any h > 0. Warmup iterations are burn-in only (nothing is
    /// adapted).
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    Sgld(SgldSettings),

    /// Stochastic-gradient HMC (Chen et al. 2014; approximate).
    ///
    /// Friction C = I, momentum redrawn every trajectory of --num-steps L steps, fixed step
    /// size; --cv for control variates. Approximate (no MH correction).
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    Sghmc(SghmcSettings),

    /// Stochastic-gradient Nosé–Hoover thermostat (Ding et al. 2014; approximate).
    ///
    /// --thermostat scalar or element-wise (mSGNHT), fixed step size; --cv for control
    /// variates. Approximate.
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    Sgnht(SgnhtSettings),

    /// Perturbed HMC with energy-conserving subsampling (Dang et al. 2019; approximate).
    ///
    /// HMC-within-Gibbs on a subsample u of --subsample m points in --blocks G blocks (one
    /// block refreshed per iteration), with the same subsample for the dynamics and the
    /// acceptance, on the bias-corrected likelihood exp(ℓ̂ − σ̂²/2) with Taylor control variates
    /// (--cv-order) around the posterior mode. m defaults to the smallest value with V[ℓ̂] ≤ 1
    /// (at least 100, at most N). Approximate: the perturbation is O(1/(n m²)).
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    HmcEcs(HmcEcsSettings),

    /// Signed HMC-ECS (Dang et al. 2019, §5; exact after sign correction).
    ///
    /// HMC-within-Gibbs on |L̂_B|, the block-Poisson estimator with --lambda λ factors of
    /// --subsample m points; writes the sign of L̂_B as the sign__ column, and summary.json's
    /// "sign_corrected" block holds the exact (sign-corrected) posterior means. The lower bound
    /// a is tuned for P(L̂_B ≥ 0) ≥ 0.99.
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    HmcEcsSigned(HmcEcsSignedSettings),

    /// The Bouncy Particle Sampler on the full data (exact; continuous-time output).
    ///
    /// Bounces off ∇U at rate ⟨∇U, v⟩⁺, Gaussian velocities refreshed at --refresh-rate.
    /// Bounce clock from the model's curvature bound (exact inversion for Gaussian
    /// likelihoods) or, for models without one, an automatic piecewise bound (--rate-bound).
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    Bps(BpsSettings),

    /// The Stochastic Bouncy Particle Sampler (Pakman et al. 2017; approximate).
    ///
    /// Minibatch gradients of --batch points, a local-linear-regression proposal band with
    /// multiple --k. Approximate: biased by bound violations, whose rate summary.json reports.
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    Sbps(SbpsSettings),

    /// Preconditioned SBPS (Pakman et al. 2017, §5; approximate).
    ///
    /// As sbps, with a diagonal preconditioner learned during warmup, then fixed.
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    Psbps(SbpsSettings),

    /// lipSBPS (exact): factor BPS with one datum per factor.
    ///
    /// Thinned against a bound on per-datum gradients (logistic) or their Lipschitz constant
    /// around the mode (gaussian-mean); the prior is its own factor.
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    Lipsbps(LipsbpsSettings),

    /// The Zig-Zag process on the full data (exact; continuous-time output).
    ///
    /// Clocks as for bps: the model's curvature bound or the automatic piecewise bound
    /// (--rate-bound).
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    Zigzag(ZigzagSettings),

    /// Zig-Zag with subsampling (Bierkens, Fearnhead & Roberts 2019; exact).
    ///
    /// One datum per proposal, exact thinning against per-datum gradient bounds.
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    ZigzagSs(ZigzagSubsamplingSettings),

    /// Zig-Zag with control variates at the mode (Bierkens, Fearnhead & Roberts 2019; exact).
    ///
    /// One datum per proposal; its cost per effective sample does not grow with N near the
    /// mode. By default in coordinates whitened by the Laplace approximation, with control
    /// variates of order two (--frame).
    #[cfg_attr(feature = "clap", command(allow_negative_numbers = true))]
    ZigzagCv(ZigzagCvSettings),
}

/// The sampler of a run, without its settings (what the report and the warnings need).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // the variants are SamplerSettings' arms
pub enum SamplerKind {
    Rwm,
    AdaptiveMh,
    Hmc,
    Nuts,
    Austerity,
    Confidence,
    Smh,
    Tunamh,
    MhSs,
    Sgld,
    Sghmc,
    Sgnht,
    HmcEcs,
    HmcEcsSigned,
    Bps,
    Sbps,
    Psbps,
    Lipsbps,
    Zigzag,
    ZigzagSs,
    ZigzagCv,
}

impl SamplerSettings {
    /// Which sampler.
    pub fn kind(&self) -> SamplerKind {
        use SamplerKind as K;
        match self {
            Self::Rwm(_) => K::Rwm,
            Self::AdaptiveMh(_) => K::AdaptiveMh,
            Self::Hmc(_) => K::Hmc,
            Self::Nuts(_) => K::Nuts,
            Self::Austerity(_) => K::Austerity,
            Self::Confidence(_) => K::Confidence,
            Self::Smh(_) => K::Smh,
            Self::Tunamh(_) => K::Tunamh,
            Self::MhSs(_) => K::MhSs,
            Self::Sgld(_) => K::Sgld,
            Self::Sghmc(_) => K::Sghmc,
            Self::Sgnht(_) => K::Sgnht,
            Self::HmcEcs(_) => K::HmcEcs,
            Self::HmcEcsSigned(_) => K::HmcEcsSigned,
            Self::Bps(_) => K::Bps,
            Self::Sbps(_) => K::Sbps,
            Self::Psbps(_) => K::Psbps,
            Self::Lipsbps(_) => K::Lipsbps,
            Self::Zigzag(_) => K::Zigzag,
            Self::ZigzagSs(_) => K::ZigzagSs,
            Self::ZigzagCv(_) => K::ZigzagCv,
        }
    }

    /// The sampler's name (`hmc-ecs`): its subcommand, and the `name` of its JSON form.
    pub fn name(&self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.get("name").and_then(|n| n.as_str()).map(str::to_owned))
            .unwrap_or_default()
    }

    /// The settings every stochastic-gradient sampler has (SGLD, SG-HMC, SGNHT).
    pub fn stochastic_gradient(&self) -> Option<&SgCommon> {
        match self {
            Self::Sgld(s) => Some(&s.sg),
            Self::Sghmc(s) => Some(&s.sg),
            Self::Sgnht(s) => Some(&s.sg),
            _ => None,
        }
    }

    /// The continuous-time settings of a piecewise-deterministic sampler.
    pub fn continuous(&self) -> Option<&ContinuousSettings> {
        match self {
            Self::Bps(s) => Some(&s.bouncy.continuous),
            Self::Sbps(s) | Self::Psbps(s) => Some(&s.bouncy.continuous),
            Self::Lipsbps(s) => Some(&s.bouncy.continuous),
            Self::Zigzag(s) => Some(&s.continuous),
            Self::ZigzagSs(s) => Some(&s.continuous),
            Self::ZigzagCv(s) => Some(&s.continuous),
            _ => None,
        }
    }

    /// Checks every setting that does not depend on the data (those that do — a minibatch
    /// size against N — are checked when the data are read, before any work).
    pub fn validate(&self) -> Result<(), Invalid> {
        match self {
            Self::Rwm(_) | Self::AdaptiveMh(_) => Ok(()),
            Self::Hmc(s) => s.validate(),
            Self::Nuts(s) => s.validate(),
            Self::Austerity(s) => s.validate(),
            Self::Confidence(s) => s.validate(),
            Self::Smh(s) => s.validate(),
            Self::Tunamh(s) => s.validate(),
            Self::MhSs(s) => s.validate(),
            Self::Sgld(s) => s.sg.validate(),
            Self::Sghmc(s) => s.validate(),
            Self::Sgnht(s) => s.validate(),
            Self::HmcEcs(s) => s.validate(),
            Self::HmcEcsSigned(s) => s.validate(),
            Self::Bps(s) => s.bouncy.validate(),
            Self::Sbps(s) | Self::Psbps(s) => s.validate(),
            Self::Lipsbps(s) => s.validate(),
            Self::Zigzag(s) => s.continuous.validate(),
            Self::ZigzagSs(s) => s.continuous.validate(),
            Self::ZigzagCv(s) => s.continuous.validate(),
        }
    }
}

impl SamplerKind {
    /// SGLD, SG-HMC or SGNHT.
    pub fn is_stochastic_gradient(self) -> bool {
        matches!(self, Self::Sgld | Self::Sghmc | Self::Sgnht)
    }

    /// Decides (or moves) on subsamples of the data, so it is meant to look at less than all
    /// of it per iteration.
    pub fn subsamples(self) -> bool {
        !matches!(
            self,
            Self::Rwm | Self::AdaptiveMh | Self::Hmc | Self::Nuts | Self::Bps | Self::Zigzag
        )
    }
}
