//! Where a run's output goes: [`draws`] (a draw and its typed stats per iteration: memory,
//! columns, CmdStan CSV) and [`segments`] (a continuous-time trajectory: skeleton, grid draws,
//! exact time averages).

pub mod draws;
pub mod segments;
