//! The library's error type. Every variant prints as one sentence that names the file and the
//! offending field, and says how to fix it.

use std::path::PathBuf;

/// Errors from loading scenes, building simulations and writing outputs.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read, created or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The scene is not valid TOML, has an unknown key, or a value of the wrong type.
    #[error("{file}, line {line}: `{field}`: {message}")]
    Parse {
        /// Scene file.
        file: String,
        /// 1-based line of the offending value.
        line: usize,
        /// Dotted path of the offending field (`particles[0].radius`).
        field: String,
        /// What the parser found.
        message: String,
    },
    /// A value is out of its valid range or inconsistent with another field.
    #[error("{file}: `{field}`: {message}")]
    Invalid {
        /// Scene file.
        file: String,
        /// Dotted path of the offending field.
        field: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The requested output directory already holds results.
    #[error(
        "output directory {dir} already holds results ({found}); write elsewhere or allow overwriting"
    )]
    OutputExists {
        /// The directory.
        dir: PathBuf,
        /// A file found in it.
        found: String,
    },
    /// Another run is writing the requested output directory.
    #[error(
        "output directory {dir} is being written by another run ({holder}); wait for it to end or write elsewhere"
    )]
    OutputBusy {
        /// The directory.
        dir: PathBuf,
        /// The lock holder's pid and command line.
        holder: String,
    },
    /// The run blew up: spheres with a non-finite state or faster than `max_speed`.
    #[error("{0}")]
    BlowUp(String),
    /// The engine that takes the steps failed (for the GPU: no adapter, device lost, ...).
    #[error("{0}")]
    Backend(String),
    /// The caller stopped the run between two outputs (Ctrl-C from Python); the output
    /// directory holds its rows so far and its last checkpoint.
    #[error("stopped at step {step}; the output directory holds the rows so far")]
    Stopped {
        /// Steps taken.
        step: u64,
    },
    /// A CSV or JSON output could not be encoded.
    #[error("{path}: could not encode output: {message}")]
    Encode {
        /// The output file.
        path: PathBuf,
        /// The encoder's reason.
        message: String,
    },
}

impl Error {
    /// An [`Error::Invalid`] for `field` of `file`.
    pub fn invalid(file: &str, field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            file: file.to_owned(),
            field: field.into(),
            message: message.into(),
        }
    }

    /// This error with the field of an [`Error::Invalid`] renamed by `names` (`(field, new
    /// name)`): a front end names a library argument by the flag or keyword that sets it.
    pub fn renaming_field(self, names: &[(&str, &str)]) -> Self {
        match self {
            Error::Invalid {
                file,
                field,
                message,
            } => {
                let renamed = names.iter().find(|(name, _)| *name == field);
                Error::Invalid {
                    file,
                    field: renamed.map_or(field, |(_, new)| (*new).to_owned()),
                    message,
                }
            }
            e => e,
        }
    }

    /// An [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
