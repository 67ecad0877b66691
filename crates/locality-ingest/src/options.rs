//! Options of a load: size limits for files and streams, and YAML's budget.

/// Limits for YAML input. Linear limits (events, nodes, scalar bytes) scale with the size
/// of each document, so a large `kubectl get -o yaml` dump passes; these cap what input
/// size cannot explain.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct YamlLimits {
    /// Maximum nesting depth of mappings and sequences (default 128, as serde_json).
    pub max_depth: usize,
    /// Maximum number of aliases (`*a`) and of anchors per document (default 10,000;
    /// Kubernetes dumps use none).
    pub max_aliases: usize,
    /// Maximum number of events replayed through aliases per document (default
    /// 1,000,000): this is what stops a billion-laughs alias bomb.
    pub max_alias_replay_events: usize,
}

impl Default for YamlLimits {
    fn default() -> Self {
        YamlLimits {
            max_depth: 128,
            max_aliases: 10_000,
            max_alias_replay_events: 1_000_000,
        }
    }
}

/// Options for [`load_paths`](crate::load_paths) and [`load_bytes`](crate::load_bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadOptions {
    /// Limits for YAML input.
    pub yaml: YamlLimits,
    /// The most bytes read from one regular file ([`DEFAULT_MAX_FILE_SIZE`]).
    pub max_file_size: u64,
    /// The most bytes read from one stream: stdin, a FIFO or a device
    /// ([`DEFAULT_MAX_STREAM_SIZE`]). A stream is never read to its end first: past the
    /// limit it is an error naming the input.
    pub max_stream_size: u64,
    /// Whether Pods are decoded or only counted ([`Pods`]).
    pub pods: Pods,
}

/// How a load reads Pods.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Pods {
    /// Decoded, checked and deduplicated like every other object.
    #[default]
    Decode,
    /// Counted only ([`crate::Loaded::unread_pods`]): their JSON or YAML is still parsed for
    /// syntax, but nothing in them is decoded or checked. For a command that reads Pods only
    /// in some cases (`matrix` reads them for Services without EndpointSlices) and reads the
    /// input again when it needs them.
    Count,
}

/// Default of [`LoadOptions::max_file_size`]: 32 GiB (a file is held in memory while it is
/// parsed).
pub const DEFAULT_MAX_FILE_SIZE: u64 = 32 << 30;
/// Default of [`LoadOptions::max_stream_size`]: 8 GiB (a stream is held in memory).
pub const DEFAULT_MAX_STREAM_SIZE: u64 = 8 << 30;

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            yaml: YamlLimits::default(),
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            max_stream_size: DEFAULT_MAX_STREAM_SIZE,
            pods: Pods::Decode,
        }
    }
}

impl LoadOptions {
    /// Pods read as `pods`.
    pub fn with_pods(mut self, pods: Pods) -> Self {
        self.pods = pods;
        self
    }

    /// Both size limits set to `bytes` (`--max-input-size`).
    pub fn with_max_input_size(mut self, bytes: u64) -> Self {
        self.max_file_size = bytes;
        self.max_stream_size = bytes;
        self
    }
}
