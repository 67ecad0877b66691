//! One module per subcommand.

pub mod matrix;
