//! The Kubernetes engine: an Indexed Job (`completionMode: Indexed`), one completion per block
//! (`JOB_COMPLETION_INDEX` = block index), `--hosts` pods at once, one pod per node (required pod
//! anti-affinity on `kubernetes.io/hostname`), on nodes of one host class (`nodeSelector
//! versus/host-class`), each index retried on its own (`backoffLimitPerIndex`), a replacement pod only
//! once the failed one is gone (`podReplacementPolicy: Failed`), and a pod failure policy that fails an
//! index at once on a deterministic spec error (exit code 3) and does not count evictions. The
//! experiment file and the config files it names travel in a ConfigMap. Everything is built from the
//! typed API structures of `k8s-openapi` and written as YAML.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{
    Job, JobSpec, PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement, PodFailurePolicyOnPodConditionsPattern,
    PodFailurePolicyRule,
};
use k8s_openapi::api::core::v1::{
    Affinity, ConfigMap, ConfigMapVolumeSource, Container, EnvVar, EnvVarSource, PodAffinityTerm, PodAntiAffinity,
    PodSpec, PodTemplateSpec, SecretKeySelector, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::{EXIT_SPEC_ERROR, FleetJob, values};
use crate::error::{Error, Result};

/// The node label that names a node's host class.
pub const HOST_CLASS_LABEL: &str = "versus/host-class";

/// Where the ConfigMap is mounted in the pod.
const MOUNT: &str = "/etc/versus";

/// Retries of one index before it counts as failed.
const BACKOFF_PER_INDEX: i32 = 3;

/// Kubernetes-specific settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct K8sOptions {
    /// The container image with versus (and the server builds the experiment names).
    pub image: String,
    /// The Secret holding `PGPASSWORD` (key `password`), optional in the pod.
    pub password_secret: String,
}

impl Default for K8sOptions {
    fn default() -> Self {
        K8sOptions { image: format!("versus:{}", env!("CARGO_PKG_VERSION")), password_secret: "versus-db".into() }
    }
}

fn labels(job: &FleetJob) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_string(), "versus".to_string()),
        ("versus/experiment".to_string(), job.job_name()),
        ("versus/plan".to_string(), job.plan_id.clone()),
    ])
}

/// The ConfigMap with the experiment file (`experiment.toml`) and its config files.
pub fn config_map(job: &FleetJob) -> ConfigMap {
    let mut data = BTreeMap::from([("experiment.toml".to_string(), job.definition.clone())]);
    for (name, text) in &job.config_files {
        data.insert(name.clone(), text.clone());
    }
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("{}-{}", job.job_name(), job.plan_id)),
            labels: Some(labels(job)),
            ..ObjectMeta::default()
        },
        data: Some(data),
        ..ConfigMap::default()
    }
}

/// The Indexed Job of `job`.
pub fn indexed_job(job: &FleetJob, opts: &K8sOptions) -> Job {
    let name = format!("{}-{}", job.job_name(), job.plan_id);
    let container = Container {
        name: "versus".into(),
        image: Some(opts.image.clone()),
        command: Some(vec!["versus".into()]),
        args: Some(vec![
            "run".into(),
            format!("{MOUNT}/experiment.toml"),
            "--block".into(),
            "$(JOB_COMPLETION_INDEX)".into(),
            "--plan-id".into(),
            job.plan_id.clone(),
        ]),
        env: Some(vec![
            EnvVar { name: "VERSUS_DB".into(), value: Some(job.store.clone()), ..EnvVar::default() },
            EnvVar {
                name: "PGPASSWORD".into(),
                value_from: Some(EnvVarSource {
                    secret_key_ref: Some(SecretKeySelector {
                        name: opts.password_secret.clone(),
                        key: "password".into(),
                        optional: Some(true),
                    }),
                    ..EnvVarSource::default()
                }),
                ..EnvVar::default()
            },
        ]),
        volume_mounts: Some(vec![VolumeMount {
            name: "experiment".into(),
            mount_path: MOUNT.into(),
            read_only: Some(true),
            ..VolumeMount::default()
        }]),
        ..Container::default()
    };
    let one_per_node = PodAffinityTerm {
        label_selector: Some(LabelSelector {
            match_labels: Some(BTreeMap::from([("versus/plan".to_string(), job.plan_id.clone())])),
            ..LabelSelector::default()
        }),
        topology_key: "kubernetes.io/hostname".into(),
        ..PodAffinityTerm::default()
    };
    let pod = PodSpec {
        restart_policy: Some("Never".into()),
        containers: vec![container],
        node_selector: job.constraint.as_ref().map(|c| BTreeMap::from([(HOST_CLASS_LABEL.to_string(), c.clone())])),
        affinity: Some(Affinity {
            pod_anti_affinity: Some(PodAntiAffinity {
                required_during_scheduling_ignored_during_execution: Some(vec![one_per_node]),
                ..PodAntiAffinity::default()
            }),
            ..Affinity::default()
        }),
        volumes: Some(vec![Volume {
            name: "experiment".into(),
            config_map: Some(ConfigMapVolumeSource { name: name.clone(), ..ConfigMapVolumeSource::default() }),
            ..Volume::default()
        }]),
        ..PodSpec::default()
    };
    let failure_policy = PodFailurePolicy {
        rules: vec![
            PodFailurePolicyRule {
                action: "FailIndex".into(),
                on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement {
                    container_name: Some("versus".into()),
                    operator: "In".into(),
                    values: vec![EXIT_SPEC_ERROR],
                }),
                ..PodFailurePolicyRule::default()
            },
            PodFailurePolicyRule {
                action: "Ignore".into(),
                on_pod_conditions: Some(vec![PodFailurePolicyOnPodConditionsPattern {
                    type_: "DisruptionTarget".into(),
                    status: "True".into(),
                }]),
                ..PodFailurePolicyRule::default()
            },
        ],
    };
    Job {
        metadata: ObjectMeta { name: Some(name), labels: Some(labels(job)), ..ObjectMeta::default() },
        spec: Some(JobSpec {
            completion_mode: Some("Indexed".into()),
            completions: Some(i32::try_from(job.blocks).unwrap_or(i32::MAX)),
            parallelism: Some(i32::try_from(job.hosts.min(job.blocks.max(1))).unwrap_or(i32::MAX)),
            backoff_limit_per_index: Some(BACKOFF_PER_INDEX),
            pod_replacement_policy: Some("Failed".into()),
            pod_failure_policy: Some(failure_policy),
            active_deadline_seconds: None,
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta { labels: Some(labels(job)), ..ObjectMeta::default() }),
                spec: Some(pod),
            },
            ..JobSpec::default()
        }),
        ..Job::default()
    }
}

/// The manifest: the ConfigMap and the Job as two YAML documents, for `kubectl apply -f`.
///
/// Errors: a config file named by a path with directories (a ConfigMap holds plain file names).
pub fn manifest(job: &FleetJob, opts: &K8sOptions) -> Result<String> {
    job.check_values()?;
    if let Some((name, _)) = job.config_files.iter().find(|(n, _)| n.contains('/')) {
        return Err(Error::file(
            &job.file,
            format!(
                "config file '{}' is in another directory; for Kubernetes put it next to the experiment file and name it without a path",
                crate::error::escape_controls(name)
            ),
        ));
    }
    if let Some((name, _)) = job.config_files.iter().find(|(n, _)| !values::config_map_key(n)) {
        return Err(Error::file(
            &job.file,
            format!(
                "config file '{}' cannot be a ConfigMap key; rename it to ASCII letters, digits, '-', '_' and '.'",
                crate::error::escape_controls(name)
            ),
        ));
    }
    if let Some(c) = &job.constraint {
        values::label_value("--constraint", c)?;
    }
    values::image("--image", &opts.image)?;
    values::object_name("--password-secret", &opts.password_secret)?;
    let yaml = |v: &dyn erased::Yaml| v.to_yaml().map_err(|e| Error::Other(format!("cannot write the manifest: {e}")));
    let header = format!(
        "# versus {}: experiment '{}', plan {}, {} block(s), one completion index per block.\n\
         # Apply with `kubectl apply -f THIS_FILE`; nodes of the host class carry the label {HOST_CLASS_LABEL}.\n",
        env!("CARGO_PKG_VERSION"),
        crate::error::escape_controls(&job.name),
        job.plan_id,
        job.blocks
    );
    Ok(format!("{header}---\n{}---\n{}", yaml(&config_map(job))?, yaml(&indexed_job(job, opts))?))
}

mod erased {
    //! One YAML writer for both object types.
    pub trait Yaml {
        fn to_yaml(&self) -> Result<String, serde_norway::Error>;
    }
    impl<T: serde::Serialize> Yaml for T {
        fn to_yaml(&self) -> Result<String, serde_norway::Error> {
            serde_norway::to_string(self)
        }
    }
}
