//! Workloads: sysbench-compatible OLTP tests and the Insert Benchmark.

pub mod ibench;
pub mod sysbench;
