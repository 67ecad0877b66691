//! One `kubectl drain` of a node as the simulated cluster records it (`super`: the drain
//! itself).

use std::collections::BTreeMap;

use crate::objects::ObjectKey;
use crate::time::Millis;

/// One `kubectl drain` of a node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Drain {
    /// When it started.
    pub started_at: Millis,
    /// When every pod it evicts was gone, once it was.
    pub finished_at: Option<Millis>,
    /// Each eviction that went through: when, and the pod.
    pub evicted: Vec<(Millis, ObjectKey)>,
    /// The pods whose last eviction was refused, with the refusal and when it is retried
    /// (`None`: never, the refusal was not a 429).
    pub refused: BTreeMap<ObjectKey, (String, Option<Millis>)>,
}
