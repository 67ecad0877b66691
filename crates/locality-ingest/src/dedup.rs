//! Duplicates: the same (kind, namespace, name) twice, across all inputs.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use locality_model::objects::{ClusterState, ObjectMeta, Origin};

use crate::error::{self, ErrorKind, IngestError};
use crate::locate;

/// Detects the same (kind, namespace, name) twice, incrementally after each input.
#[derive(Default)]
pub(crate) struct Dedup {
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
    pub(crate) fn check(
        &mut self,
        state: &ClusterState,
        file: &str,
        bytes: Option<&[u8]>,
    ) -> Result<(), IngestError> {
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
