//! One module per subcommand.

pub mod audit;
pub mod explain;
pub mod matrix;
pub mod rules;
pub mod sim;
pub mod simulate;
pub mod verify;
