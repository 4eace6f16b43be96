//! Obtaining server builds: distribution packages, existing installs, binary tarballs.
