//! Reads Kubernetes objects from files, directories and stdin into the locality model's
//! [`ClusterState`].
//!
//! # Inputs
//!
//! - **Paths**: files; directories, read recursively (files ending in `.json`, `.yaml`,
//!   `.yml`, in sorted order); `-` for stdin (read fully).
//! - **Formats**, detected by content: the first non-whitespace byte `{` or `[` means JSON,
//!   anything else YAML. A UTF-8 byte-order mark is skipped; CRLF line ends are fine.
//! - **Shapes**: single objects; `v1 List` and typed lists (`PodList`, `ServiceList`…; what
//!   `kubectl get -o json|yaml` prints, mixed kinds allowed, `items` before or after
//!   `kind`); a JSON array of objects; multi-document YAML (`---`).
//! - **Kinds read**: Node, Pod, Service, EndpointSlice (`discovery.k8s.io/v1`, also
//!   `v1beta1`), Endpoints (`v1`; mirrored for selector-less Services), DaemonSet,
//!   Deployment, ReplicaSet, StatefulSet (`apps/v1`; the removed `apps/v1beta1`,
//!   `apps/v1beta2` and `extensions/v1beta1` are refused with a clear error), Namespace,
//!   PodDisruptionBudget (`policy/v1`; read by the simulation's drains).
//!   Every other kind is counted in [`Loaded::skipped_kinds`].
//!
//! YAML is read as kubectl reads it (YAML 1.1: `defaultMode: 0644` is 420, `yes`/`no` are
//! booleans) with a budget ([`YamlLimits`]) that stops alias bombs but scales its linear
//! limits with the input so that large dumps pass.
//!
//! # Speed
//!
//! A JSON `List` of 8 MiB and more (what `kubectl get -o json` prints, pretty or
//! compact) is read as a stream: block by block, cut at item boundaries that parsing then
//! proves, the chunks parsed on the available cores while the next blocks are read
//! (`split`; `LOCALITY_INGEST_THREADS=1` turns that off). Peak memory is a few blocks
//! plus the parsed state, whatever the file's size. Any doubt or error falls back to
//! reading the whole input into memory and parsing it sequentially, which alone reports
//! errors, so messages and positions are the same either way.
//!
//! Nothing is memory-mapped: a mapped file that another process truncates while it is
//! parsed (log rotation, a `kubectl get > file` still writing) kills the reader with
//! `SIGBUS`, a private mapping does not prevent it, and recovering from `SIGBUS` is not
//! sound in Rust. A file that shrinks while it is read is an error naming it. The objects are deserialised
//! into lean wire structs that name only the fields the model reads; everything else
//! (`managedFields`, `containerStatuses`, volumes, env, most annotations) is skipped with
//! `IgnoredAny`. Dispatch on `kind` happens while streaming; the few fields that precede
//! `kind` (kubectl sorts keys, so an EndpointSlice's `endpoints` precede its `kind`) are
//! held as borrowed raw JSON and decoded once the kind is known. Nothing is parsed twice
//! on the success path; the error path re-parses once to name the field.
//!
//! # Errors
//!
//! Every bad input gives an [`IngestError`] (never a panic) with the file, line:column,
//! object and field path when known, e.g.
//! `dump.json:12:7: items[3] (Pod default/web-1): missing field `name` at metadata.name`.
//! Objects are identified by kind, namespace and name: the same object twice is an error
//! naming both places.
//!
//! # Positions of objects
//!
//! serde_json exposes no offsets inside a value, so every object's [`Origin`] records the
//! file, document index and item index; its line and column are filled for top-level
//! YAML documents and left 0 for List items and JSON. [`locate`] recomputes them from the
//! same bytes on demand (for the few objects a finding points at).
//!
//! ```
//! let json = br#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a"}}"#;
//! let loaded = locality_ingest::load_bytes("node.json", json, &Default::default()).unwrap();
//! assert_eq!(loaded.state.nodes[0].meta.name, "node-a");
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

use locality_model::endpointslice::mirroring::ANNOTATION_LEADER_ELECTION;
use locality_model::objects::{
    ANNOTATION_TOPOLOGY_AWARE_HINTS, ANNOTATION_TOPOLOGY_MODE, ClusterState, ObjectMeta, Origin,
};

mod error;
mod json;
mod lifecycle;
mod locate;
mod object;
pub mod quantity;
mod split;
mod stream;
mod wire;
mod yaml;

pub use error::{ErrorKind, IngestError};
pub use locate::locate;

use object::{Ctx, Sink};

/// The annotations ingest keeps (all others are skipped unread to save memory): the
/// `Auto` topology mode and its deprecated predecessor, which the model reads, the
/// leader-election record, which keeps an Endpoints object from being mirrored, and the
/// audit's suppressions (`locality.dev/ignore` and its reason).
pub const KEPT_ANNOTATIONS: &[&str] = &[
    ANNOTATION_TOPOLOGY_MODE,
    ANNOTATION_TOPOLOGY_AWARE_HINTS,
    ANNOTATION_LEADER_ELECTION,
    locality_model::objects::ANNOTATION_LOCALITY_IGNORE,
    locality_model::objects::ANNOTATION_LOCALITY_IGNORE_REASON,
];

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

/// Options for [`load_paths`] and [`load_bytes`].
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
        }
    }
}

impl LoadOptions {
    /// Both size limits set to `bytes` (`--max-input-size`).
    pub fn with_max_input_size(mut self, bytes: u64) -> Self {
        self.max_file_size = bytes;
        self.max_stream_size = bytes;
        self
    }
}

/// The result of a load.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Loaded {
    /// The objects read.
    pub state: ClusterState,
    /// Objects of kinds the model does not read, counted by kind (say so once).
    pub skipped_kinds: BTreeMap<String, usize>,
    /// Non-fatal problems (e.g. an unparsable `allocatable.cpu`), in input order.
    pub warnings: Vec<String>,
    /// Total bytes read.
    pub bytes_read: u64,
    /// The files read, in order (`-` for stdin), after directory expansion.
    pub files: Vec<String>,
}

impl Loaded {
    /// True when no object of a kind the model reads was found.
    pub fn is_empty(&self) -> bool {
        let s = &self.state;
        s.nodes.is_empty()
            && s.pods.is_empty()
            && s.services.is_empty()
            && s.endpoint_slices.is_empty()
            && s.workloads.is_empty()
            && s.namespaces.is_empty()
            && s.endpoints.is_empty()
            && s.pod_disruption_budgets.is_empty()
    }
}

/// Reads `paths` (files, directories recursively, `-` for stdin) into one state.
///
/// Inputs are read one at a time (each into one buffer, released before the next).
/// Errors: unreadable or missing paths, directories without `.json`/`.yaml`/`.yml` files,
/// any bad input (see [`IngestError`]), and objects defined twice across all inputs.
pub fn load_paths<P: AsRef<Path>>(paths: &[P], opts: &LoadOptions) -> Result<Loaded, IngestError> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    for p in paths {
        let p = p.as_ref();
        if p.as_os_str() == "-" {
            files.push(p.to_path_buf());
            continue;
        }
        let shown = p.display().to_string();
        let meta = std::fs::metadata(p)
            .map_err(|e| IngestError::file(ErrorKind::Io, &shown, format!("cannot read: {e}")))?;
        if meta.is_dir() {
            let before = files.len();
            let mut seen = HashSet::new();
            walk(p, &mut files, &mut seen, &mut skipped)?;
            if files.len() == before {
                return Err(IngestError::file(
                    ErrorKind::Io,
                    &shown,
                    "directory contains no .json, .yaml or .yml files",
                ));
            }
        } else {
            files.push(p.to_path_buf());
        }
    }
    let mut loader = Loader::new(opts);
    loader.sink.warnings.extend(skipped);
    for f in &files {
        let name = f.display().to_string();
        if f.as_os_str() == "-" {
            let buf = stream::read(std::io::stdin().lock(), "-", opts.max_stream_size)?;
            loader.add(&name, &buf)?;
        } else {
            loader.add_path(f, &name)?;
        }
    }
    Ok(loader.finish())
}

/// Reads the rest of a regular file of `len` bytes into memory, up to `limit`. A file
/// that shrinks while it is read (truncated by log rotation, or rewritten by a
/// `kubectl get` still running) is an error naming it, never a partial parse.
fn read_file(file: &std::fs::File, name: &str, len: u64, limit: u64) -> Result<Vec<u8>, IngestError> {
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    // A file that grows while read is still bounded.
    file.take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| io_error(name, &e))?;
    check_size(name, buf.len() as u64, len, limit)?;
    Ok(buf)
}

/// `read` bytes of a regular file that had `len` when opened: over `limit`, or fewer than
/// `len` (it shrank while read), is an error.
fn check_size(name: &str, read: u64, len: u64, limit: u64) -> Result<(), IngestError> {
    if read > limit {
        return Err(too_large(name, limit));
    }
    if read < len {
        return Err(IngestError::file(
            ErrorKind::Io,
            name,
            format!(
                "the file shrank while it was read ({len} bytes when opened, {read} read): is something still writing it?"
            ),
        ));
    }
    Ok(())
}

fn io_error(name: &str, e: &std::io::Error) -> IngestError {
    IngestError::file(ErrorKind::Io, name, format!("cannot read: {e}"))
}

pub(crate) fn too_large(name: &str, limit: u64) -> IngestError {
    IngestError::file(
        ErrorKind::Limit,
        name,
        format!("larger than the input limit of {limit} bytes (--max-input-size)"),
    )
}

/// Reads one input held in memory; `name` is used in errors and [`Origin::file`].
///
/// `load_bytes("-", b"")` behaves as empty stdin.
pub fn load_bytes(name: &str, bytes: &[u8], opts: &LoadOptions) -> Result<Loaded, IngestError> {
    let mut loader = Loader::new(opts);
    loader.add(name, bytes)?;
    Ok(loader.finish())
}

/// Collects input files under `dir` (sorted; symlinked directories visited once).
/// Special files (FIFOs, sockets, devices) are not read while walking: each is named in
/// `skipped` (a warning); given explicitly with `-f`, they are read as bounded streams.
fn walk(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    seen: &mut HashSet<PathBuf>,
    skipped: &mut Vec<String>,
) -> Result<(), IngestError> {
    let shown = dir.display().to_string();
    let io =
        |e: std::io::Error| IngestError::file(ErrorKind::Io, &shown, format!("cannot read directory: {e}"));
    if let Ok(canon) = std::fs::canonicalize(dir)
        && !seen.insert(canon)
    {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort();
    for path in entries {
        let Ok(meta) = std::fs::metadata(&path) else {
            continue; // dangling symlink
        };
        let named_like_input = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "json" | "yaml" | "yml"));
        if meta.is_dir() {
            walk(&path, out, seen, skipped)?;
        } else if !meta.is_file() {
            if named_like_input {
                skipped.push(format!(
                    "skipped {}: not a regular file (a FIFO, socket or device); name it with -f to read it as a stream",
                    path.display()
                ));
            }
        } else if named_like_input {
            out.push(path);
        }
    }
    Ok(())
}

/// Accumulates inputs and checks for duplicates as it goes.
struct Loader<'o> {
    opts: &'o LoadOptions,
    sink: Sink,
    bytes_read: u64,
    files: Vec<String>,
    dedup: Dedup,
}

impl<'o> Loader<'o> {
    fn new(opts: &'o LoadOptions) -> Self {
        Loader {
            opts,
            sink: Sink::default(),
            bytes_read: 0,
            files: Vec::new(),
            dedup: Dedup::default(),
        }
    }

    /// Adds an input held in memory: a large JSON List through the parallel reader
    /// ([`split`]), anything else (or what that reader declines) sequentially.
    fn add(&mut self, name: &str, bytes: &[u8]) -> Result<(), IngestError> {
        let cfg = split::Config::new();
        if cfg.threads > 1 && bytes.len() >= split::MIN_SPLIT_BYTES {
            let mut src = bytes;
            let streamed = on_big_stack(name, || {
                split::parse_stream(name, &mut src, cfg).map_err(|e| io_error(name, &e))
            })?;
            if let split::Streamed::Parsed(sink, _) = streamed {
                return self.add_parsed(name, *sink, bytes.len() as u64, Some(bytes));
            }
        }
        self.add_sequential(name, bytes)
    }

    /// Adds a file: a regular file is streamed through the parallel reader when large
    /// (never held whole in memory then), else, or when that reader declines, read into
    /// memory and parsed sequentially; a FIFO or device is read as a bounded stream.
    fn add_path(&mut self, path: &Path, name: &str) -> Result<(), IngestError> {
        let io = |e: std::io::Error| io_error(name, &e);
        let mut file = std::fs::File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() {
            let buf = stream::read(file, name, self.opts.max_stream_size)?;
            return self.add_sequential(name, &buf);
        }
        let limit = self.opts.max_file_size;
        if meta.len() > limit {
            return Err(too_large(name, limit));
        }
        let cfg = split::Config::new();
        if cfg.threads > 1 && meta.len() >= split::MIN_SPLIT_BYTES as u64 {
            let mut src = (&file).take(limit.saturating_add(1));
            let streamed = on_big_stack(name, || {
                split::parse_stream(name, &mut src, cfg).map_err(|e| io_error(name, &e))
            })?;
            if let split::Streamed::Parsed(sink, read) = streamed {
                check_size(name, read, meta.len(), limit)?;
                return self.add_parsed(name, *sink, read, None);
            }
            file.rewind().map_err(io)?;
        }
        let buf = read_file(&file, name, meta.len(), limit)?;
        self.add_sequential(name, &buf)
    }

    /// Parses `bytes` on one thread.
    fn add_sequential(&mut self, name: &str, bytes: &[u8]) -> Result<(), IngestError> {
        let sink = std::mem::take(&mut self.sink);
        let opts = self.opts;
        self.sink = on_big_stack(name, move || parse_input(name, bytes, opts, sink))?;
        self.add_parsed(name, Sink::default(), bytes.len() as u64, Some(bytes))
    }

    /// Records an input parsed into `sink` (appended) and checks for duplicates; `bytes`
    /// (the input, when held) places them, else the file is read again to do so.
    fn add_parsed(
        &mut self,
        name: &str,
        sink: Sink,
        read: u64,
        bytes: Option<&[u8]>,
    ) -> Result<(), IngestError> {
        self.bytes_read += read;
        self.files.push(name.to_owned());
        split::append(&mut self.sink, sink);
        self.dedup.check(&self.sink.state, name, bytes)
    }

    fn finish(self) -> Loaded {
        Loaded {
            state: self.sink.state,
            skipped_kinds: self.sink.skipped,
            warnings: self.sink.warnings,
            bytes_read: self.bytes_read,
            files: self.files,
        }
    }
}

/// Stack for the parser thread. Nesting is bounded (serde_json: 128 levels; YAML:
/// [`YamlLimits::max_depth`]), but a level of recursive descent can take tens of KiB in
/// debug builds, more than a 2 MiB test or worker thread has. Reserved, not committed.
pub(crate) const PARSE_STACK: usize = 64 << 20;

/// Runs `parse` on a scoped thread with a [`PARSE_STACK`] stack.
fn on_big_stack<T, F>(name: &str, parse: F) -> Result<T, IngestError>
where
    T: Send,
    F: FnOnce() -> Result<T, IngestError> + Send,
{
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("locality-ingest".into())
            .stack_size(PARSE_STACK)
            .spawn_scoped(scope, parse);
        match handle {
            Ok(h) => h.join().unwrap_or_else(|_| {
                Err(IngestError::file(
                    ErrorKind::Invalid,
                    name,
                    "internal error: the parser panicked",
                ))
            }),
            Err(e) => Err(IngestError::file(
                ErrorKind::Io,
                name,
                format!("cannot start the parser thread: {e}"),
            )),
        }
    })
}

/// Detects the format and parses one input into `sink`.
fn parse_input(name: &str, bytes: &[u8], opts: &LoadOptions, sink: Sink) -> Result<Sink, IngestError> {
    if bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF") {
        return Err(IngestError::file(
            ErrorKind::Encoding,
            name,
            "UTF-16 input is not supported; convert it to UTF-8",
        ));
    }
    let text = locate::strip_bom(bytes);
    let Some(first) = text.iter().position(|b| !b.is_ascii_whitespace()) else {
        let what = if name == "-" {
            "empty input on stdin"
        } else {
            "empty file"
        };
        return Err(IngestError::file(
            ErrorKind::Empty,
            name,
            format!("{what}: no Kubernetes objects"),
        ));
    };
    if matches!(text[first], b'{' | b'[') {
        let ctx = Ctx::with_sink(name, text, false, sink);
        json::load(&ctx, text)?;
        Ok(ctx.sink.into_inner())
    } else {
        let s = std::str::from_utf8(text).map_err(|e| {
            let (l, c) = locate::line_col(text, e.valid_up_to());
            IngestError::file(ErrorKind::Encoding, name, "not UTF-8 text (binary data?)").at(l, c)
        })?;
        let ctx = Ctx::with_sink(name, text, true, sink);
        yaml::load(&ctx, s, &opts.yaml)?;
        Ok(ctx.sink.into_inner())
    }
}

/// Builds an [`IngestError`] from a parser error and what the visitors noted.
pub(crate) fn compose(
    ctx: &Ctx<'_>,
    kind: ErrorKind,
    pos: (u64, u64),
    message: String,
    path: Option<String>,
    doc_label: Option<String>,
    start: Option<(u64, u64)>,
) -> IngestError {
    let failure = std::mem::take(&mut *ctx.failure.borrow_mut());
    let (mut kind, mut pos, mut message) = (kind, pos, message);
    let mut inner_path = String::new();
    if let Some(inner) = failure.inner {
        kind = ErrorKind::Invalid;
        message = inner.message;
        if let Some(off) = inner.offset {
            pos = locate::line_col(ctx.base, off);
        } else if inner.at_start
            && let Some(start) = start
        {
            pos = start;
        }
        inner_path = inner.path;
    }
    let item = failure.item.map(|i| {
        if failure.in_items {
            format!("items[{i}]")
        } else {
            format!("[{i}]")
        }
    });
    let mut field = path.unwrap_or_default();
    if let Some(pre) = &item
        && let Some(rest) = field.strip_prefix(pre.as_str())
    {
        field = rest.trim_start_matches('.').to_owned();
    }
    if !inner_path.is_empty() {
        field = if field.is_empty() {
            inner_path
        } else {
            format!("{field}.{inner_path}")
        };
    }
    if let Some(name) = message
        .strip_prefix("missing field `")
        .and_then(|r| r.split('`').next())
        && !field.ends_with(name)
    {
        field = if field.is_empty() {
            name.to_owned()
        } else {
            format!("{field}.{name}")
        };
    }
    if kind == ErrorKind::Limit && !message.starts_with("resource limit") {
        message = format!("resource limit exceeded (nesting too deep or an alias bomb?): {message}");
    }
    if field.len() > 160 {
        let cut = field.len() - 150;
        let cut = (cut..field.len())
            .find(|&i| field.is_char_boundary(i))
            .unwrap_or(field.len());
        field = format!("…{}", &field[cut..]);
    }
    let subject = match (doc_label, item) {
        (Some(d), Some(i)) => Some(format!("{d}, {i}")),
        (d, i) => d.or(i),
    };
    IngestError::new(error::Details {
        kind,
        file: ctx.file.to_owned(),
        line: pos.0,
        column: pos.1,
        subject,
        object: failure.object,
        field: (!field.is_empty()).then_some(field),
        message,
        first_definition: None,
    })
}

// ---------------------------------------------------------------------------------------
// Duplicates
// ---------------------------------------------------------------------------------------

/// Detects the same (kind, namespace, name) twice, incrementally after each input.
#[derive(Default)]
struct Dedup {
    /// (kind code, hash of namespace/name) → index in the kind's vector.
    seen: HashMap<(u8, u64), u32>,
    /// Objects whose hash collided with a different object (practically never).
    overflow: Vec<(u8, u32)>,
    /// How many objects of each kind were checked already.
    done: [usize; 10],
}

/// The kind vectors, by code: 0 nodes, 1 pods, 2 services, 3 slices, 4 namespaces,
/// 5 workloads (keyed 5 to 8 by [`workload_code`]), 9 Endpoints.
const KIND_CODES: [u8; 7] = [0, 1, 2, 3, 4, 5, 9];

/// The object at `i` of the kind vector `code` ([`KIND_CODES`]) and its kind name.
fn meta_at(state: &ClusterState, code: u8, i: usize) -> Option<(&ObjectMeta, &'static str)> {
    match code {
        0 => state.nodes.get(i).map(|o| (&o.meta, "Node")),
        1 => state.pods.get(i).map(|o| (&o.meta, "Pod")),
        2 => state.services.get(i).map(|o| (&o.meta, "Service")),
        3 => state.endpoint_slices.get(i).map(|o| (&o.meta, "EndpointSlice")),
        4 => state.namespaces.get(i).map(|o| (&o.meta, "Namespace")),
        9 => state.endpoints.get(i).map(|o| (&o.meta, "Endpoints")),
        _ => state.workloads.get(i).map(|w| (&w.meta, w.kind.as_str())),
    }
}

fn kind_len(state: &ClusterState, code: u8) -> usize {
    match code {
        0 => state.nodes.len(),
        1 => state.pods.len(),
        2 => state.services.len(),
        3 => state.endpoint_slices.len(),
        4 => state.namespaces.len(),
        9 => state.endpoints.len(),
        _ => state.workloads.len(),
    }
}

fn workload_code(k: locality_model::objects::WorkloadKind) -> u8 {
    use locality_model::objects::WorkloadKind as W;
    match k {
        W::DaemonSet => 5,
        W::Deployment => 6,
        W::ReplicaSet => 7,
        W::StatefulSet => 8,
    }
}

fn name_hash(meta: &ObjectMeta) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    meta.namespace.hash(&mut h);
    meta.name.hash(&mut h);
    h.finish()
}

impl Dedup {
    /// Checks the objects added since the last call; `bytes`: the input just read, if
    /// held (else the file is read again to place a duplicate).
    fn check(&mut self, state: &ClusterState, file: &str, bytes: Option<&[u8]>) -> Result<(), IngestError> {
        for code in KIND_CODES {
            let get = |i: usize| meta_at(state, code, i);
            let len = kind_len(state, code);
            let start = self.done[code as usize];
            for i in start..len {
                let Some((meta, _)) = get(i) else { continue };
                let code = if code == 5 {
                    workload_code(state.workloads[i].kind)
                } else {
                    code
                };
                let key = (code, name_hash(meta));
                let idx = u32::try_from(i).unwrap_or(u32::MAX);
                let prior = match self.seen.get(&key) {
                    None => {
                        self.seen.insert(key, idx);
                        None
                    }
                    Some(&j) => {
                        let same = |j: u32| {
                            get(j as usize)
                                .is_some_and(|(m, _)| m.namespace == meta.namespace && m.name == meta.name)
                        };
                        if same(j) {
                            Some(j)
                        } else if let Some(&(_, k)) =
                            self.overflow.iter().find(|(c, k)| *c == code && same(*k))
                        {
                            Some(k)
                        } else {
                            self.overflow.push((code, idx));
                            None
                        }
                    }
                };
                if let Some(j) = prior {
                    let (first, kind) = get(j as usize)
                        .map(|(m, k)| (m.origin.clone(), k))
                        .unwrap_or_default();
                    let read_again;
                    let bytes = match bytes {
                        Some(b) => b,
                        None => {
                            read_again = std::fs::read(file).unwrap_or_default();
                            &read_again
                        }
                    };
                    return Err(duplicate_error(kind, meta, &first, file, bytes));
                }
            }
            self.done[code as usize] = len;
        }
        Ok(())
    }
}

fn describe_origin(o: &Origin) -> String {
    match o.item {
        Some(i) => format!("items[{i}]"),
        None => format!("document {}", o.document),
    }
}

fn place(o: &Origin, file: &str, bytes: &[u8]) -> String {
    let pos = if o.line > 0 {
        Some((o.line, o.column))
    } else if o.file == file {
        locate(bytes, o)
    } else {
        std::fs::read(&o.file).ok().and_then(|b| locate(&b, o))
    };
    match pos {
        Some((l, c)) => format!("{}:{l}:{c} ({})", o.file, describe_origin(o)),
        None => format!("{} ({})", o.file, describe_origin(o)),
    }
}

fn duplicate_error(kind: &str, meta: &ObjectMeta, first: &Origin, file: &str, bytes: &[u8]) -> IngestError {
    let o = &meta.origin;
    let (line, column) = if o.line > 0 {
        (o.line, o.column)
    } else {
        locate(bytes, o).unwrap_or((0, 0))
    };
    let object = if meta.namespace.is_empty() {
        format!("{kind} {}", meta.name)
    } else {
        format!("{kind} {}/{}", meta.namespace, meta.name)
    };
    let subject = match o.item {
        Some(i) if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') => format!("[{i}]"),
        Some(i) => format!("items[{i}]"),
        None => format!("document {}", o.document),
    };
    IngestError::new(error::Details {
        kind: ErrorKind::Duplicate,
        file: file.to_owned(),
        line: u64::from(line),
        column: u64::from(column),
        subject: Some(subject),
        object: Some(object.clone()),
        field: None,
        message: format!("duplicate object: {object} is defined twice"),
        first_definition: Some(place(first, file, bytes)),
    })
}
