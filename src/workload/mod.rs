//! Workloads: sysbench-compatible OLTP tests and the Insert Benchmark.

pub mod sysbench;
