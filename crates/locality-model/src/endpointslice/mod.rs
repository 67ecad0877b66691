//! EndpointSlice controller model (filled in by the controller work).
