//! Where a result came from, recorded in every `summary.json`: the program's version, the
//! command line, the input file and the input as it was run (also written to `input.toml`
//! beside the results), and the seed of any random generation.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::output::atomic_write;

/// Name of the input as run, in the output directory.
pub const INPUT_FILE: &str = "input.toml";

/// Where a result came from (the keys `summary.json` carries beside its results).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// wgdem's version (`Cargo.toml`'s).
    pub wgdem_version: String,
    /// The command line of the process that wrote the results, program name first.
    pub command_line: Vec<String>,
    /// The input file as named on the command line.
    pub input_file: String,
    /// The input as run, with every default filled in and any scaling applied (the text of
    /// `input.toml`).
    pub input_toml: String,
    /// Seed of the random particle generation (`null` where nothing is random).
    pub seed: Option<u64>,
}

impl Provenance {
    /// The provenance of this process's run of `input_file`; `config` is the input as run,
    /// serialized to TOML.
    pub fn new(input_file: &str, config: &impl Serialize, seed: Option<u64>) -> Result<Self> {
        let input_toml = toml::to_string(config).map_err(|e| Error::Encode {
            path: INPUT_FILE.into(),
            message: e.to_string(),
        })?;
        Ok(Self {
            wgdem_version: env!("CARGO_PKG_VERSION").to_owned(),
            command_line: std::env::args().collect(),
            input_file: input_file.to_owned(),
            input_toml,
            seed,
        })
    }

    /// The provenance of a run of `input_file` whose input is `text` as read (inputs with no
    /// defaults to fill in, such as contact cases).
    pub fn from_text(input_file: &str, text: &str, seed: Option<u64>) -> Self {
        Self {
            wgdem_version: env!("CARGO_PKG_VERSION").to_owned(),
            command_line: std::env::args().collect(),
            input_file: input_file.to_owned(),
            input_toml: text.to_owned(),
            seed,
        }
    }

    /// Writes `input.toml` into `dir`, headed by a comment naming its source.
    pub fn write_input(&self, dir: &Path) -> Result<()> {
        let text = format!(
            "# {} as run by wgdem {}\n{}",
            self.input_file, self.wgdem_version, self.input_toml
        );
        atomic_write(&dir.join(INPUT_FILE), text.as_bytes())
    }
}
