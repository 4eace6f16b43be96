//! Server builds and sandboxes: obtain MySQL-family servers, start them side by side on loopback with a
//! generated my.cnf, and stop them cleanly.

pub mod admin;
pub mod affinity;
pub mod bare;
pub mod build;
pub mod config;
pub mod effective;
pub mod fetch;
pub mod flavor;
pub mod home;
pub mod lockdown;
pub mod managed;
pub mod mycnf;
pub mod process;
pub mod replication;
pub mod sandbox;
pub mod snapshot;
pub mod variables;

pub use build::{Build, Flavor, Layout, Source, Version};
pub use home::Home;
pub use sandbox::{Sandbox, SandboxInfo, SandboxSpec};
