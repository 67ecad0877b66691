//! The shared state of one input's parse: where objects go ([`Sink`]) and what the
//! visitors note about a failure on their way out ([`Failure`]).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use locality_model::objects as m;

/// Objects read so far.
#[derive(Default)]
pub(crate) struct Sink {
    pub state: m::ClusterState,
    pub skipped: BTreeMap<String, usize>,
    /// Pods counted but not decoded ([`crate::Pods::Count`]).
    pub unread_pods: usize,
    pub warnings: Vec<String>,
}

/// What is known about a failure, noted on the way out of the visitors (error path only).
#[derive(Default, Debug)]
pub(crate) struct Failure {
    /// `Kind namespace/name` of the innermost object being read.
    pub object: Option<String>,
    /// Item index in a List or top-level array.
    pub item: Option<u32>,
    /// True when the item sits in a List's `items` (false: a top-level JSON array).
    pub in_items: bool,
    /// A precise error found after the fact (buffered field, end-of-object check).
    pub inner: Option<Inner>,
}

/// An error detected outside the parser's own flow, with its own position and path.
#[derive(Debug, Clone)]
pub(crate) struct Inner {
    /// Absolute byte offset in the input, when known.
    pub offset: Option<usize>,
    /// Field path relative to the object (`spec.ports[0].port`).
    pub path: String,
    /// Message.
    pub message: String,
    /// Report at the object's start (the check ran after the whole object was read).
    pub at_start: bool,
}

/// Shared state of one input's parse.
pub(crate) struct Ctx<'b> {
    pub file: &'b str,
    /// The whole input (JSON: for offsets of buffered raw values).
    pub base: &'b [u8],
    pub yaml: bool,
    pub document: Cell<u32>,
    /// Line of the current YAML document's first content line (0 for JSON).
    pub doc_line: Cell<u32>,
    pub sink: RefCell<Sink>,
    pub failure: RefCell<Failure>,
    /// Documents that held an object, a List or an array (not null).
    pub non_null_documents: Cell<u32>,
    /// The item defaults of every top-level List's `items` read (see [`crate::split`]).
    pub lists: RefCell<Vec<ItemDefault>>,
    /// Pods are counted, not decoded ([`crate::Pods::Count`]).
    pub count_pods: bool,
}

/// Kind and apiVersion of a typed List's items (`PodList` → `Pod`), if any.
pub(crate) type ItemDefault = Option<(String, Option<String>)>;

impl<'b> Ctx<'b> {
    pub(crate) fn new(file: &'b str, base: &'b [u8], yaml: bool) -> Self {
        Self::with_sink(file, base, yaml, Sink::default())
    }

    pub(crate) fn with_sink(file: &'b str, base: &'b [u8], yaml: bool, sink: Sink) -> Self {
        Ctx {
            file,
            base,
            yaml,
            document: Cell::new(0),
            doc_line: Cell::new(0),
            sink: RefCell::new(sink),
            failure: RefCell::default(),
            non_null_documents: Cell::new(0),
            lists: RefCell::default(),
            count_pods: false,
        }
    }

    /// The same context with Pods counted rather than decoded when `count` is true.
    pub(crate) fn counting_pods(mut self, count: bool) -> Self {
        self.count_pods = count;
        self
    }

    pub(crate) fn set_inner(&self, inner: Inner) {
        let mut f = self.failure.borrow_mut();
        if f.inner.is_none() {
            f.inner = Some(inner);
        }
    }
}
