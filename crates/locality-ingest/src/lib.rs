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
//! serde_json exposes no offsets inside a value, so every object's [`Origin`](locality_model::objects::Origin) records the
//! file, document index and item index; its line and column are filled for top-level
//! YAML documents and left 0 for List items and JSON. [`locate`] recomputes them from the
//! same bytes on demand (for the few objects a finding points at).
//!
//! ```
//! let json = br#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a"}}"#;
//! let loaded = locality_ingest::load_bytes("node.json", json, &Default::default()).unwrap();
//! assert_eq!(loaded.state.nodes[0].meta.name, "node-a");
//! ```

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use locality_model::objects::ClusterState;

mod buffer;
mod compose;
mod ctx;
mod dedup;
mod error;
mod fields;
mod files;
mod json;
mod kind;
mod lifecycle;
mod loader;
mod locate;
mod names;
mod object;
mod options;
mod position;
pub mod quantity;
mod split;
mod stack;
mod stream;
mod wire;
mod yaml;

pub use error::{ErrorKind, IngestError};
pub use locate::locate;
pub use options::{DEFAULT_MAX_FILE_SIZE, DEFAULT_MAX_STREAM_SIZE, LoadOptions, Pods, YamlLimits};
pub use wire::KEPT_ANNOTATIONS;

use files::walk;
use loader::Loader;

/// The result of a load.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Loaded {
    /// The objects read.
    pub state: ClusterState,
    /// Objects of kinds the model does not read, counted by kind (say so once).
    pub skipped_kinds: BTreeMap<String, usize>,
    /// Pods counted but not decoded ([`Pods::Count`]; 0 otherwise).
    pub unread_pods: usize,
    /// Non-fatal problems (e.g. an unparsable `allocatable.cpu`), in input order.
    pub warnings: Vec<String>,
    /// Total bytes read.
    pub bytes_read: u64,
    /// The files read, in order (`-` for stdin), after directory expansion.
    pub files: Vec<String>,
    /// The regular files among [`files`](Self::files) with the size they had when read: the
    /// only inputs a caller may read again (to place objects, `locate`), and only while
    /// they keep that size; stdin, FIFOs and devices are never read twice.
    pub regular_files: BTreeMap<String, u64>,
}

impl Loaded {
    /// True when no object of a kind the model reads was found.
    pub fn is_empty(&self) -> bool {
        self.state.is_empty() && self.unread_pods == 0
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

/// Reads one input held in memory; `name` is used in errors and [`Origin::file`](locality_model::objects::Origin::file).
///
/// `load_bytes("-", b"")` behaves as empty stdin.
pub fn load_bytes(name: &str, bytes: &[u8], opts: &LoadOptions) -> Result<Loaded, IngestError> {
    let mut loader = Loader::new(opts);
    loader.add(name, bytes)?;
    Ok(loader.finish())
}
