//! temp
pub mod tables;
