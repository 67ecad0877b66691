//! Why a verify run could not be carried out (as opposed to its decision).

/// Why a run could not be carried out (as opposed to a decision).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The cluster could not be read.
    #[error(transparent)]
    Live(#[from] locality_live::LiveError),
    /// An API call failed.
    #[error("{what}: {message}")]
    Api {
        /// The call.
        what: String,
        /// The server's answer or the transport error.
        message: String,
    },
    /// The cluster cannot host a run.
    #[error("{0}")]
    Unsuitable(String),
    /// The evidence could not be written.
    #[error("writing evidence {path}: {message}")]
    Evidence {
        /// The file.
        path: String,
        /// The error.
        message: String,
    },
}
