//! The server variables whose differences say nothing about a version or a configuration: paths, ports
//! and ids that every sandbox has its own of, version strings, sizes the server derives from the host
//! (CPUs, memory, file limits) or from other settings, and runtime state. `versus diff-vars` hides them
//! (shows them with `--all`), `versus explain` never bisects over them, and the comparison report's
//! variable table counts them instead of listing them. One list serves all three.

use serde::{Deserialize, Serialize};

/// Why a variable's difference is noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseKind {
    /// A file or directory of the sandbox or the build (datadir, socket, plugin dir, log file names).
    Path,
    /// A TCP port.
    Port,
    /// An id or name that is unique per server or host (server_uuid, hostname).
    Identity,
    /// A version string or a fact of how the build was compiled (version, have_ssl).
    Version,
    /// Sized by the server from the host: CPUs, memory, open-file limit, time zone, file system.
    HostSized,
    /// Derived by the server from other settings (buffer-pool instances, page cleaners, internal
    /// instrument counts); set the setting it comes from instead.
    Derived,
    /// Runtime state, not configuration (GTID positions, timestamps).
    State,
}

impl NoiseKind {
    /// A few words for tables: `path`, `port`, `host-sized` …
    pub fn label(self) -> &'static str {
        match self {
            NoiseKind::Path => "path",
            NoiseKind::Port => "port",
            NoiseKind::Identity => "id",
            NoiseKind::Version => "version",
            NoiseKind::HostSized => "host-sized",
            NoiseKind::Derived => "derived",
            NoiseKind::State => "state",
        }
    }
}

/// The noise variables by name (lower case, as `SHOW GLOBAL VARIABLES` spells them).
pub const NOISE_VARIABLES: &[(&str, NoiseKind)] = &[
    // Files and directories of the sandbox or of the build.
    ("aria_log_dir_path", NoiseKind::Path),
    ("basedir", NoiseKind::Path),
    ("character_sets_dir", NoiseKind::Path),
    ("datadir", NoiseKind::Path),
    ("general_log_file", NoiseKind::Path),
    ("innodb_data_home_dir", NoiseKind::Path),
    ("innodb_doublewrite_dir", NoiseKind::Path),
    ("innodb_log_group_home_dir", NoiseKind::Path),
    ("innodb_temp_tablespaces_dir", NoiseKind::Path),
    ("innodb_tmpdir", NoiseKind::Path),
    ("innodb_undo_directory", NoiseKind::Path),
    ("lc_messages_dir", NoiseKind::Path),
    ("log_bin_basename", NoiseKind::Path),
    ("log_bin_index", NoiseKind::Path),
    ("log_error", NoiseKind::Path),
    ("mysqlx_socket", NoiseKind::Path),
    ("pid_file", NoiseKind::Path),
    ("plugin_dir", NoiseKind::Path),
    ("relay_log", NoiseKind::Path),
    ("relay_log_basename", NoiseKind::Path),
    ("relay_log_index", NoiseKind::Path),
    ("relay_log_info_file", NoiseKind::Path),
    ("replica_load_tmpdir", NoiseKind::Path),
    ("secure_file_priv", NoiseKind::Path),
    ("slave_load_tmpdir", NoiseKind::Path),
    ("slow_query_log_file", NoiseKind::Path),
    ("socket", NoiseKind::Path),
    ("ssl_ca", NoiseKind::Path),
    ("ssl_capath", NoiseKind::Path),
    ("ssl_cert", NoiseKind::Path),
    ("ssl_crl", NoiseKind::Path),
    ("ssl_crlpath", NoiseKind::Path),
    ("ssl_key", NoiseKind::Path),
    ("tmpdir", NoiseKind::Path),
    ("wsrep_data_home_dir", NoiseKind::Path),
    // Ports.
    ("admin_port", NoiseKind::Port),
    ("mysqlx_port", NoiseKind::Port),
    ("port", NoiseKind::Port),
    ("report_port", NoiseKind::Port),
    // Per-server and per-host ids.
    ("hostname", NoiseKind::Identity),
    ("pseudo_thread_id", NoiseKind::Identity),
    ("report_host", NoiseKind::Identity),
    ("server_id", NoiseKind::Identity),
    ("server_id_bits", NoiseKind::Identity),
    ("server_uid", NoiseKind::Identity),
    ("server_uuid", NoiseKind::Identity),
    // Version strings and facts of the build.
    ("build_id", NoiseKind::Version),
    ("innodb_version", NoiseKind::Version),
    ("license", NoiseKind::Version),
    ("protocol_version", NoiseKind::Version),
    ("version", NoiseKind::Version),
    ("version_comment", NoiseKind::Version),
    ("version_compile_machine", NoiseKind::Version),
    ("version_compile_os", NoiseKind::Version),
    ("version_compile_zlib", NoiseKind::Version),
    ("version_malloc_library", NoiseKind::Version),
    ("version_source_revision", NoiseKind::Version),
    ("version_ssl_library", NoiseKind::Version),
    // Sized from the host.
    ("innodb_parallel_read_threads", NoiseKind::HostSized),
    ("innodb_purge_threads", NoiseKind::HostSized),
    ("innodb_read_io_threads", NoiseKind::HostSized),
    ("innodb_write_io_threads", NoiseKind::HostSized),
    ("innodb_log_writer_threads", NoiseKind::HostSized),
    ("large_page_size", NoiseKind::HostSized),
    ("lower_case_file_system", NoiseKind::HostSized),
    ("open_files_limit", NoiseKind::HostSized),
    ("server_memory", NoiseKind::HostSized),
    ("system_time_zone", NoiseKind::HostSized),
    ("temptable_max_ram", NoiseKind::HostSized),
    ("thread_pool_size", NoiseKind::HostSized),
    // Derived from other settings.
    ("innodb_adaptive_hash_index_cells", NoiseKind::Derived),
    ("innodb_buffer_pool_chunk_size", NoiseKind::Derived),
    ("innodb_buffer_pool_instances", NoiseKind::Derived),
    ("innodb_page_cleaners", NoiseKind::Derived),
    // MariaDB turns it on by itself with innodb_flush_log_at_trx_commit=2 and where the log's file
    // system refuses O_DIRECT (tmpfs); set by a config, it is shown like any setting.
    ("innodb_log_file_buffering", NoiseKind::Derived),
    // Runtime state.
    ("gtid_binlog_pos", NoiseKind::State),
    ("gtid_binlog_state", NoiseKind::State),
    ("gtid_current_pos", NoiseKind::State),
    ("gtid_executed", NoiseKind::State),
    ("gtid_owned", NoiseKind::State),
    ("gtid_purged", NoiseKind::State),
    ("gtid_slave_pos", NoiseKind::State),
    ("timestamp", NoiseKind::State),
];

/// Why the variable `name` is noise by its name alone, if it is: the list above, `have_*` build facts,
/// `version_*` strings and the performance-schema instrument counts (`performance_schema_max_*_classes`,
/// fixed by the build's code).
pub fn noise_kind(name: &str) -> Option<NoiseKind> {
    let name = name.to_ascii_lowercase();
    if let Some((_, kind)) = NOISE_VARIABLES.iter().find(|(n, _)| *n == name) {
        return Some(*kind);
    }
    if name.starts_with("have_") || name.starts_with("version_") {
        return Some(NoiseKind::Version);
    }
    if name.starts_with("performance_schema_max_") && name.ends_with("_classes") {
        return Some(NoiseKind::Derived);
    }
    None
}

/// Why a difference of `name` between the `values` seen is noise, if it is: [`noise_kind`] by name, or
/// every value being an absolute path (a directory of the sandbox or the build).
pub fn noise_of(name: &str, values: &[&str]) -> Option<NoiseKind> {
    noise_kind(name).or_else(|| {
        let present: Vec<&&str> = values.iter().filter(|v| !v.is_empty()).collect();
        (!present.is_empty() && present.iter().all(|v| v.starts_with('/'))).then_some(NoiseKind::Path)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_patterns_and_paths() {
        assert_eq!(noise_kind("datadir"), Some(NoiseKind::Path));
        assert_eq!(noise_kind("PORT"), Some(NoiseKind::Port));
        assert_eq!(noise_kind("have_ssl"), Some(NoiseKind::Version));
        assert_eq!(noise_kind("version_ssl_library"), Some(NoiseKind::Version));
        assert_eq!(noise_kind("performance_schema_max_mutex_classes"), Some(NoiseKind::Derived));
        assert_eq!(noise_kind("innodb_buffer_pool_instances"), Some(NoiseKind::Derived));
        assert_eq!(noise_kind("innodb_log_file_buffering"), Some(NoiseKind::Derived));
        assert_eq!(noise_kind("thread_pool_size"), Some(NoiseKind::HostSized));
        // Real defaults are not noise.
        for real in ["sync_binlog", "innodb_flush_log_at_trx_commit", "performance_schema_digests_size", "log_bin"] {
            assert_eq!(noise_kind(real), None, "{real}");
        }
        assert_eq!(noise_of("some_dir", &["/a/b", "/c/d"]), Some(NoiseKind::Path));
        assert_eq!(noise_of("some_dir", &["/a/b", ""]), Some(NoiseKind::Path));
        assert_eq!(noise_of("sql_mode", &["A,B", "/x"]), None);
        assert_eq!(noise_of("init_connect", &["", ""]), None);
    }

    #[test]
    fn the_list_is_lower_case_without_duplicates() {
        for (n, _) in NOISE_VARIABLES {
            assert_eq!(*n, n.to_ascii_lowercase());
        }
        let mut names: Vec<&str> = NOISE_VARIABLES.iter().map(|(n, _)| *n).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "a variable is listed twice");
    }
}
