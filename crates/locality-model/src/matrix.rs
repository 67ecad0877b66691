//! The routing matrix over a whole cluster.
