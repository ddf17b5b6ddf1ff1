//! What runs chains: the [`discrete`] driver (warmup and draws of a [`Kernel`](tallmc_core::Kernel),
//! streamed to a draw sink) and the [`continuous`] one (trajectory segments of a
//! [`PdmpKernel`](tallmc_core::PdmpKernel), streamed to a segment sink), both running chains in
//! parallel with one ChaCha8 stream each.

pub mod continuous;
pub mod discrete;
