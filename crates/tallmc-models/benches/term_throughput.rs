//! Placeholder; the real benchmark follows.
fn main() {}
