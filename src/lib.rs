//! The wgdem test suite: physics tests live in `tests/`, benchmarks in `benches/`.
