//! The traits a user implements to bring an estimator (or a bound) of their own to a
//! subsampling kernel of `tallmc-samplers`, in one place. Each has the fewest required methods;
//! the rest are provided (what only spares work, fills a report or prepares scratch):
//!
//! | trait | kernels | required | provided |
//! |---|---|---|---|
//! | [`GradientEstimator`] | SGLD, SG-HMC, SGNHT | `estimate_gradient` | — |
//! | [`EcsEstimator`] | HMC-ECS | `estimate_log_target`, `center` | `recenter`, `hessian_sum`, `taylor_order` |
//! | [`EcsEstimate`] | HMC-ECS | `log_target`, `counts` | — |
//! | [`GibbsSubsample`] | HMC-ECS | `draw`, `propose`, `reject`, `batch_size` | `accept` |
//! | [`SwitchingRateEstimator`] | Zig-Zag with subsampling | `bounds`, `estimate` | `prepare`, `describe`, `draw_datum`, `quadratic_bounds`, `frame`, `estimate_at` |
//! | [`DatumRateBound`] | lipSBPS | `datum_bound` | `prepare`, `describe` |
//! | [`RangeSource`] | minibatch MH (confidence sampler) | `range` | `AVAILABLE` |
//!
//! No required signature names a concrete control-variate type: an estimator with Taylor
//! control variates ([`ControlVariate`](crate::ControlVariate)) uses them inside. The kernels
//! re-export the traits, so `tallmc_samplers::EcsEstimator` and this one are the same.

mod datum_bound;
mod ecs;
mod gradient;
mod range;
mod switching_rate;

pub use datum_bound::DatumRateBound;
pub(crate) use ecs::centre_of_control_variate;
pub use ecs::{EcsEstimate, EcsEstimator, GibbsSubsample};
pub use gradient::GradientEstimator;
pub use range::{NoRange, RangeSource, TermBoundRange};
pub use switching_rate::SwitchingRateEstimator;
