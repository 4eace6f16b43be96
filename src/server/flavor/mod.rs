//! Per-flavor knowledge: how each server family and version is initialised, started and configured.
