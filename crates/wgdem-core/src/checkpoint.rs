//! The envelope around every checkpoint (`checkpoint.bin` of `run`, `shear` and `cell`): a header that
//! says what the file is, and hashes that make a damaged file or one from another input refuse
//! to resume instead of resuming to wrong results.
//!
//! Layout (little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 8  | magic `WGDEMCKP` |
//! | 4  | envelope version (1) |
//! | 4  | kind: 1 = run, 2 = shear, 3 = a simulation saved from Python, 4 = cell |
//! | 4  | payload format (the kind's own version, raised when its meaning changes) |
//! | 32 | BLAKE3 of the input as run (`input.toml`'s text) |
//! | 8  | payload length |
//! | 32 | BLAKE3 of the payload |
//! | …  | payload (postcard) |

use std::path::Path;
use std::time::Instant;

use crate::error::{Error, Result};

/// Default `[output] checkpoint_seconds`: the least wall-clock time between two checkpoints
/// taken on the row count (s).
pub const DEFAULT_CHECKPOINT_SECONDS: f64 = 120.0;

/// When a protocol writes its checkpoint on the row count: every `checkpoint_rows` rows, once
/// at least `checkpoint_seconds` of wall-clock time have passed since the last one it wrote
/// (or since the run started or resumed). A checkpoint reads the whole state back and writes
/// it, 463 MB in about 8 s at 10⁶ spheres on a 2-core host: every 50 rows, which a GPU runs
/// in a few seconds at that size, checkpoints would take longer than the steps. Stage ends and
/// a run's end write one whatever the pace. No result depends on it: a run resumed from any
/// of its checkpoints ends with the same bits as one never stopped.
#[derive(Debug, Clone)]
pub struct Pace {
    rows: u64,
    seconds: f64,
    last: Instant,
}

impl Pace {
    /// A pace of every `rows` rows (0 counts as 1), at least `seconds` apart, from now.
    pub fn new(rows: u32, seconds: f64) -> Self {
        Self {
            rows: u64::from(rows.max(1)),
            seconds,
            last: Instant::now(),
        }
    }

    /// Whether a checkpoint is due after `rows` rows in all.
    pub fn due(&self, rows: u64) -> bool {
        rows.is_multiple_of(self.rows) && self.last.elapsed().as_secs_f64() >= self.seconds
    }

    /// Notes a checkpoint written now.
    pub fn written(&mut self) {
        self.last = Instant::now();
    }
}

const MAGIC: &[u8; 8] = b"WGDEMCKP";
const ENVELOPE_VERSION: u32 = 1;
const HEADER_BYTES: usize = 8 + 4 + 4 + 4 + 32 + 8 + 32;

/// What a checkpoint belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `wgdem run`.
    Run = 1,
    /// `wgdem shear`.
    Shear = 2,
    /// A simulation saved by the Python package's `Simulation.checkpoint`, whose payload
    /// carries its own input (see [`open_any_input`]).
    Simulation = 3,
    /// `wgdem cell`.
    Cell = 4,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Shear => "shear test",
            Kind::Simulation => "saved simulation",
            Kind::Cell => "periodic-cell test",
        }
    }
}

/// Wraps `payload` (format `format` of `kind`) for the input `input` in the envelope.
pub fn seal(kind: Kind, format: u32, input: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&ENVELOPE_VERSION.to_le_bytes());
    out.extend_from_slice(&(kind as u32).to_le_bytes());
    out.extend_from_slice(&format.to_le_bytes());
    out.extend_from_slice(blake3::hash(input.as_bytes()).as_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(blake3::hash(payload).as_bytes());
    out.extend_from_slice(payload);
    out
}

/// The payload of the checkpoint `bytes` read from `path`, after checking that it is a
/// checkpoint of `kind` in `format`, whole and undamaged, and written for `input`. Each
/// mismatch is refused with one line saying which, ending with `again` (how to start over).
pub fn open<'a>(
    path: &Path,
    bytes: &'a [u8],
    kind: Kind,
    format: u32,
    input: &str,
    again: &str,
) -> Result<&'a [u8]> {
    let payload = open_any_input(path, bytes, kind, format, again)?;
    if !written_for(bytes, input) {
        return Err(invalid(
            path,
            format!(
                "was written for a different input (its input hash differs): resume with the file, the defaults and the particle count the run started with, or {again}"
            ),
        ));
    }
    Ok(payload)
}

/// Whether the checkpoint `bytes` (already opened) was written for the input `input`.
pub fn written_for(bytes: &[u8], input: &str) -> bool {
    bytes.len() >= HEADER_BYTES && blake3::hash(input.as_bytes()).as_bytes() == &bytes[20..52]
}

fn invalid(path: &Path, message: String) -> Error {
    Error::Invalid {
        file: path.display().to_string(),
        field: "resume".to_owned(),
        message,
    }
}

/// [`open`] without the input check, for checkpoints whose payload holds their input (then
/// checked with [`written_for`]).
pub fn open_any_input<'a>(
    path: &Path,
    bytes: &'a [u8],
    kind: Kind,
    format: u32,
    again: &str,
) -> Result<&'a [u8]> {
    let invalid = |message: String| invalid(path, message);
    let refuse = |what: String| invalid(format!("{what}; {again}"));
    if bytes.len() < HEADER_BYTES || &bytes[..8] != MAGIC {
        return Err(refuse("is not a wgdem checkpoint".to_owned()));
    }
    let word =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let version = word(8);
    if version != ENVELOPE_VERSION {
        return Err(refuse(format!(
            "has checkpoint envelope version {version}, not this program's {ENVELOPE_VERSION}"
        )));
    }
    let found = word(12);
    if found != kind as u32 {
        let other = match found {
            1 => Kind::Run.name().to_owned(),
            2 => Kind::Shear.name().to_owned(),
            3 => Kind::Simulation.name().to_owned(),
            4 => Kind::Cell.name().to_owned(),
            k => format!("kind {k} unknown to this program"),
        };
        return Err(refuse(format!(
            "is the checkpoint of a {other}, not of a {}",
            kind.name()
        )));
    }
    let found = word(16);
    if found != format {
        return Err(refuse(format!(
            "has checkpoint format {found}, not this program's {format} (written by another wgdem version)"
        )));
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&bytes[52..60]);
    let len = u64::from_le_bytes(len);
    let payload = &bytes[HEADER_BYTES..];
    if payload.len() as u64 != len {
        return Err(refuse(format!(
            "is truncated or extended: it holds {} payload bytes, its header says {len}",
            payload.len()
        )));
    }
    if blake3::hash(payload).as_bytes() != &bytes[60..92] {
        return Err(refuse(
            "is damaged: its content hash (BLAKE3) does not match its contents".to_owned(),
        ));
    }
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On the row count alone with no time between (0 s), every `rows` rows (0 rows as 1);
    /// never on the row count while the least time has not passed (f64's largest, infinity),
    /// and again once it has.
    #[test]
    fn a_checkpoint_is_due_on_the_rows_once_its_time_has_passed() {
        let every_third = Pace::new(3, 0.0);
        let due: Vec<u64> = (1..=10).filter(|&r| every_third.due(r)).collect();
        assert_eq!(due, [3, 6, 9]);
        assert!((1..=5).all(|r| Pace::new(0, 0.0).due(r)));
        for never in [f64::MAX, f64::INFINITY, 3600.0] {
            assert!((1..=100).all(|r| !Pace::new(1, never).due(r)), "{never}");
        }
        let mut pace = Pace::new(2, 0.05);
        assert!(!pace.due(2));
        std::thread::sleep(std::time::Duration::from_millis(60));
        assert!(pace.due(2) && !pace.due(3));
        pace.written();
        assert!(!pace.due(4));
    }

    fn message(r: Result<&[u8]>) -> String {
        match r {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_sealed_checkpoint_opens_to_its_payload() {
        let sealed = seal(Kind::Run, 2, "input", b"payload");
        let p = Path::new("c.bin");
        assert_eq!(
            open(p, &sealed, Kind::Run, 2, "input", "x").ok(),
            Some(&b"payload"[..])
        );
    }

    /// Every bit flipped anywhere in the file is refused, each with its reason.
    #[test]
    fn any_flipped_bit_is_refused() {
        let payload: Vec<u8> = (0..64u8).collect();
        let sealed = seal(Kind::Shear, 6, "input", &payload);
        let p = Path::new("c.bin");
        for byte in 0..sealed.len() {
            for bit in 0..8 {
                let mut bad = sealed.clone();
                bad[byte] ^= 1 << bit;
                let e = message(open(p, &bad, Kind::Shear, 6, "input", "start again"));
                assert!(e.ends_with("start again"), "{e}");
                let expected = match byte {
                    0..8 => "not a wgdem checkpoint",
                    8..12 => "envelope version",
                    12..16 => "is the checkpoint of a",
                    16..20 => "checkpoint format",
                    20..52 => "different input",
                    52..60 => "truncated",
                    _ => "damaged",
                };
                assert!(e.contains(expected), "byte {byte} bit {bit}: {e}");
            }
        }
    }

    #[test]
    fn mismatches_are_named() {
        let sealed = seal(Kind::Run, 2, "input", b"payload");
        let p = Path::new("c.bin");
        let e = message(open(p, &sealed, Kind::Shear, 2, "input", "x"));
        assert!(
            e.contains("checkpoint of a run, not of a shear test"),
            "{e}"
        );
        let e = message(open(p, &sealed, Kind::Run, 3, "input", "x"));
        assert!(e.contains("format 2, not this program's 3"), "{e}");
        let e = message(open(p, &sealed, Kind::Run, 2, "other", "x"));
        assert!(e.contains("different input"), "{e}");
        let e = message(open(
            p,
            &sealed[..sealed.len() - 1],
            Kind::Run,
            2,
            "input",
            "x",
        ));
        assert!(e.contains("truncated"), "{e}");
        let e = message(open(p, b"hello", Kind::Run, 2, "input", "x"));
        assert!(e.contains("not a wgdem checkpoint"), "{e}");
    }
}
