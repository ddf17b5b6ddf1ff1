//! Reproduction suites of tallmc.
//!
//! Each suite reruns the experiments of one paper and writes, under `target/reproduce/<suite>/`,
//! a JSON summary, SVG figures in the paper's form and a markdown report. This crate so far holds
//! the dependency-free SVG charting module the suites draw their figures with: see [`figure`].

#![warn(missing_docs)]

pub mod figure;
