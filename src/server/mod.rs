//! Server builds and sandboxes: obtain MySQL-family servers, start them side by side on loopback with a
//! generated my.cnf, and stop them cleanly.

pub mod build;
pub mod fetch;
pub mod flavor;
pub mod home;
pub mod mycnf;

pub use build::{Build, Flavor, Layout, Source, Version};
pub use home::Home;
